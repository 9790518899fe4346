"""The exit statuses of ``skel-ros``, in one place (documented in docs/sim_to_real.md).

=====  ===============  ===========================================================
code   name             meaning
=====  ===============  ===========================================================
0      ``OK``           done; with ``--criteria``: every criterion held
1      ``ERROR``        bad input: a file that cannot be read or is malformed (model,
                        hardware config, criteria, trajectory, recording: missing,
                        empty, damaged), said as ``error: file:line: ...``; no report
2      ``USAGE``        a bad command line (argparse's own status)
3      ``FAILED``       the run was judged and at least one criterion failed
4      ``NOT_JUDGED``   the run could not be judged: a stream or joint missing, the
                        run shorter than ``min_duration`` or a stream slower than
                        ``min_rate``, a starved node (a gap beyond ``max_gap``), a
                        node that died, a step that failed
130    ``INTERRUPTED``  stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
=====  ===============  ===========================================================

``NOT_JUDGED`` wins over ``FAILED`` when several runs (trajectories) end differently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skel_ros.analysis.verdict import Outcome

__all__ = ["ERROR", "FAILED", "INTERRUPTED", "NOT_JUDGED", "OK", "USAGE", "for_outcome"]

OK = 0
ERROR = 1
USAGE = 2
FAILED = 3
NOT_JUDGED = 4
INTERRUPTED = 130


def for_outcome(outcome: Outcome) -> int:
    """The exit status of a gate that came to ``outcome``."""
    from skel_ros.analysis.verdict import Outcome

    return {Outcome.PASSED: OK, Outcome.SKIPPED: OK, Outcome.FAILED: FAILED,
            Outcome.NOT_JUDGED: NOT_JUDGED}[outcome]
