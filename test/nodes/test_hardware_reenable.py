"""Safe re-enable, measured on the wire: a stream that never stopped is reached slowly.

The hardware node runs in this process on the arm's emulated Dynamixel servos, which the
test owns: the node reaches them through ``port:=``, a tap between them
(test/sync_write_tap.py) decodes every Sync Write, so the Goal Positions checked are what
the servos received (test/tapped_arm.py). A second node streams ``joint_commands`` at
100 Hz (the elbow to 1.2 rad) and never stops, across activate, deactivate and activate
again; between the two
activations the elbow is put back at 0 by hand (torque is off). After each activation the
goals sent move at most ``reenable_velocity`` (0.2) of the elbow's velocity limit
(4.8 rad/s) until they reach the stream's target: per write (the limiter's step is at
most two periods), and on average over the slew. Waits spin with timeouts, never sleep.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import pytest
from sync_write_tap import TICK
from tapped_arm import ELBOW, TappedArm

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

TARGET = 1.2  # rad, the stream's elbow target
LIMIT = 4.8  # rad/s, the elbow's velocity limit (examples/arm.skel)
REENABLE = 0.2  # the default reenable_velocity
PERIOD = 1.0 / 200.0  # the YAML's control_rate


@pytest.fixture
def rig(ros_env: dict[str, str], tmp_path: Path) -> Iterator[TappedArm]:
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    r = TappedArm(context, tmp_path, target=TARGET, node_name="reenable_hw")
    try:
        yield r
    finally:
        r.close()
        rclpy.shutdown(context=context)


def _activate_and_slew(rig: TappedArm) -> list[tuple[float, float]]:
    """Activate with the stream running; the elbow goals until the target is reached."""
    from rclpy.lifecycle import TransitionCallbackReturn

    since = len(rig.tap.goals)
    assert rig.node.trigger_activate() == TransitionCallbackReturn.SUCCESS
    rig.spin_until(lambda: any(abs(q - TARGET) < 2 * TICK for _, q in rig.elbow_goals(since)),
                   "the elbow's goal at the stream's target")
    slowed: list[tuple[str, ...]] = []
    rig.spin_until(lambda: (slowed.append(rig.node.backend.status().reenable_bounded)
                            or not slowed[-1]), "the re-enable bound released")
    return rig.elbow_goals(since)


def _check_bounded(goals: list[tuple[float, float]], start: float) -> None:
    bound = REENABLE * LIMIT  # rad/s
    assert abs(goals[0][1] - start) < 0.02, goals[:3]  # held where it was measured first
    reached = next(i for i, (_, q) in enumerate(goals) if abs(q - TARGET) < 2 * TICK)
    slew = goals[:reached + 1]
    # Per write: the limiter's step is at most two periods (a later cycle does not make a
    # longer one); each goal within a tick of its target.
    steps = [abs(b - a) for (_, a), (_, b) in itertools.pairwise(slew)]
    assert max(steps) <= bound * 2 * PERIOD + 2 * TICK, max(steps)
    # On average over the slew, timed at the tap (a write's timing jitters; not its sum).
    moving = next(i for i, (_, q) in enumerate(slew) if abs(q - start) > 2 * TICK)
    (t0, q0), (t1, q1) = slew[max(moving - 1, 0)], slew[-1]
    assert abs(q1 - q0) / (t1 - t0) <= 1.15 * bound, (q0, q1, t1 - t0)


def test_a_stream_that_never_stopped_is_reached_at_the_reenable_speed(rig: TappedArm) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn

    from skel_ros.hardware import MotionState

    rig.spin_until(lambda: rig.node.backend.status().state is MotionState.DISABLED,
                   "the buses connected, torque off")
    start = rig.node.backend.status().position[2]
    _check_bounded(_activate_and_slew(rig), start)

    assert rig.node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
    rig.servos.set_position(ELBOW, 0.0)  # by hand, torque off; the stream goes on
    rig.spin_until(lambda: abs(rig.node.backend.status().position[2]) < 0.01,
                   "the elbow measured at 0")
    _check_bounded(_activate_and_slew(rig), 0.0)
