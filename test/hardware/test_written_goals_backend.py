"""``record_writes``: each write's goals and time kept for the node's ``written_goals``.

One elbow on an emulated AK80-9 (test/hardware/test_stream_feedforward.py's rig, one
manual clock for the backend and the motor): every cycle's write is kept with the clock
at the write and the target the motor was sent; a reader that falls behind gets the
newest :data:`~skel_ros.hardware.backend.WRITES_KEPT` and the count of the others, never
an unbounded queue.
"""

from __future__ import annotations

import time

import pytest
from test_stream_feedforward import _Elbow

from skel_ros.hardware.backend import WRITES_KEPT


def test_each_write_is_kept_with_its_time_and_the_target_sent() -> None:
    with _Elbow("position", record_writes=True) as rig:
        rig.backend.take_writes()  # the enable's
        times = []
        for k in range(10):
            rig.command(0.002 * k)
            rig.cycle()
            times.append(rig.t)
        kept = rig.backend.take_writes()
        assert [w.stamp for w in kept] == times
        assert [w.positions[0] for w in kept] == pytest.approx([0.002 * k for k in range(10)])
        # The last is what the motor decoded (its thread takes the frame a moment later).
        deadline = time.monotonic() + 10.0
        while abs(rig.sent()[0] - 0.018) > 1e-3 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert rig.sent()[0] == pytest.approx(kept[-1].positions[0], abs=1e-3)
        assert rig.backend.writes_lost == 0


def test_a_reader_that_falls_behind_gets_the_newest_and_the_count_of_the_rest() -> None:
    with _Elbow("position", record_writes=True) as rig:
        rig.backend.take_writes()
        stamps = []
        for _ in range(WRITES_KEPT + 40):
            rig.cycle()
            stamps.append(rig.t)
        kept = rig.backend.take_writes()
        assert [w.stamp for w in kept] == stamps[-WRITES_KEPT:]
        assert rig.backend.writes_lost == 40
        assert rig.backend.take_writes() == []


def test_without_record_writes_nothing_is_kept() -> None:
    with _Elbow("position") as rig:
        rig.cycle()
        assert rig.backend.take_writes() == []
