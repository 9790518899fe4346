"""A tiny trial command for the sweep tests: a real process, in a fraction of a second.

It writes what ``skel-ros sim-to-real --json`` writes (the verdict, one joint's errors,
the failed checks) for a made-up robot whose elbow error grows with the trial's
``joints.elbow.friction``: above 0.2 the trial fails. It appends its trial id to a log
(which trials ran, how often), prints its ROS domain, niceness and blocked signals, writes
its pid beside its verdict, and hangs (sleeps a minute) when the friction is at least
:data:`HANG` or a file ``hang-<id>`` is in the log's folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skel_ros.sweep.trial import PYTHON

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from skel_ros.sweep.spec import Spec, Trial

HANG = 0.9

SCRIPT = """
import json, os, signal, sys, time
folder, friction, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
name = os.path.basename(folder)
with open(log, "a") as f:
    f.write(name + "\\n")
with open(os.path.join(folder, "pid"), "w") as f:
    f.write(str(os.getpid()))
print("ROS domain", os.environ.get("ROS_DOMAIN_ID", "unset"), flush=True)
print("niceness", os.nice(0), flush=True)
print("blocked", sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])), flush=True)
if friction >= HANG or os.path.exists(os.path.join(os.path.dirname(log), "hang-" + name)):
    time.sleep(60)
verdict = "failed" if friction > 0.2 else "passed"
checks = [{"joint": "elbow", "check": "max error sim-real", "outcome": "failed",
           "message": "elbow: max error sim-real {:.2f} > 0.3".format(friction + 0.1)}
          ] if verdict == "failed" else []
data = {"format": 1, "verdict": verdict, "runs": [{"name": "t", "verdict": verdict,
        "metrics": {"joints": [{"joint": "elbow", "errors": [
            {"a": "sim", "b": "real", "rms": friction / 2, "max": friction + 0.1, "lag": 0.0}]}]},
        "checks": checks}]}
with open(os.path.join(folder, "verdict.json"), "w") as f:
    json.dump(data, f)
sys.exit(3 if verdict == "failed" else 0)
""".replace("HANG", repr(HANG))


def tiny_command(log: Path) -> Callable[[Spec, Trial, Path], list[str]]:
    """A trial command builder writing which trial ran to ``log``."""
    def command(spec: Spec, trial: Trial, folder: Path) -> list[str]:
        friction = dict(trial.values).get("joints.elbow.friction", 0.0)
        return [PYTHON, "-c", SCRIPT, str(folder), repr(friction), str(log)]
    return command
