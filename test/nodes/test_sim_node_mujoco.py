"""sim_node with ``engine:=mujoco``: test_sim_node.py's topic and service tests, re-run.

The tests below are imported from test_sim_node.py unchanged (as python-can re-runs its
back-to-back suite on every interface): the node process here is started with
``engine:=mujoco`` on the same two-skeleton world, so the same joint names, /tf frames,
commands, trajectories, clamping reports, refusals and ~/pause, ~/step, ~/reset are
checked against MuJoCo. A few tests of its own: effort commands, the engine parameter,
and FollowJointTrajectory on the arm.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("mujoco")
pytest.importorskip("rclpy")

import test_sim_node as base  # the same world, probe and tests as for DART
from fjt_client import ActionProbe, codes, make_goal, status
from test_sim_node import JS_RATE, NAMES, PREFIX, TF_RATE, WORLD, Probe, SimProcess, _start

# test_sim_node.py's probe fixture (it takes this module's sim) and tests, run here again.
probe = base.probe
test_joint_states_rate_and_names = base.test_joint_states_rate_and_names
test_clock_advances_with_simulated_time = base.test_clock_advances_with_simulated_time
test_tf_equals_our_kinematics = base.test_tf_equals_our_kinematics
test_position_command_reaches_the_target = base.test_position_command_reaches_the_target
test_out_of_limit_command_is_clamped_and_reported = \
    base.test_out_of_limit_command_is_clamped_and_reported
test_trajectory_is_followed_in_simulated_time = base.test_trajectory_is_followed_in_simulated_time
test_bad_commands_are_rejected_with_a_warning = base.test_bad_commands_are_rejected_with_a_warning
test_bad_trajectories_are_rejected_and_the_node_goes_on = \
    base.test_bad_trajectories_are_rejected_and_the_node_goes_on
test_pause_step_and_reset = base.test_pause_step_and_reset

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_NAMES = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def sim(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcess]:
    """test_sim_node.py's node process, in MuJoCo."""
    tmp = tmp_path_factory.mktemp("sim_node_mujoco")
    skel = tmp / "pendulum.skel"
    skel.write_text(WORLD, encoding="utf-8")
    log = tmp / "sim_node.log"
    proc = _start(ros_env, log, skel_file=str(skel), frame_prefix=PREFIX, engine="mujoco",
                  joint_states_rate=str(JS_RATE), tf_rate=str(TF_RATE), real_time_factor="1.0")
    try:
        yield SimProcess(proc, log, skel)
    finally:
        _stop(proc)


def test_the_node_says_it_runs_mujoco(sim: SimProcess, probe: Probe) -> None:
    probe.wait_sim(0.01)
    assert " in mujoco: 2 skeleton(s), 3 DOF(s)" in sim.output()


def test_effort_command_is_applied_and_reported(probe: Probe) -> None:
    """An effort command holds: the joint_states effort is the command (a FORCE joint)."""
    # From rest at 0 with the wrist held straight (it starts bent, and a limp wrist's swing
    # would push the hinge), a constant positive effort moves the hinge the positive way.
    probe.command(NAMES, position=[0.0, 0.0, 0.0])

    def at_rest() -> bool:
        msg = probe.seen.joint_states[-1]
        return (max(abs(x) for x in msg.position) < 1e-3
                and max(abs(x) for x in msg.velocity) < 1e-3)

    probe.spin_until(at_rest, "the pendulum at rest at 0")
    probe.command(NAMES[:1], effort=[0.05])
    # Applied: joint_states report the commanded effort. (Waited for, not assumed after a
    # fixed time: the probe may still have messages of earlier steps to take, and in a
    # full run it once read a message from before the command arrived.)
    probe.spin_until(lambda: abs(probe.seen.joint_states[-1].effort[0] - 0.05) < 1e-9,
                     "joint_states with the commanded effort")
    probe.wait_sim(0.2)
    msg = probe.seen.joint_states[-1]
    assert msg.effort[0] == pytest.approx(0.05, abs=1e-9)  # it holds
    assert msg.position[0] > 0.0  # pushed the positive way
    probe.command(NAMES, position=[0.0, 0.0, 0.0])  # leave it held for the next test
    probe.wait_sim(0.5)


def test_unknown_engine_is_refused_at_start(ros_env: dict[str, str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """sim_node's main(argv) in this process (test_sim_node.py runs the real process)."""
    del ros_env  # main's node joins the test session's isolated domain
    returncode, output = base.sim_node_main(capsys, engine="bullet")
    assert returncode == 2, output
    assert "engine must be one of dart, mujoco, got 'bullet'" in output


# ----------------------------------------------------------------- FollowJointTrajectory


@pytest.fixture(scope="module")
def arm(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory,
        ) -> Iterator[ActionProbe]:
    """The arm in MuJoCo with the shipped parameters, and a FollowJointTrajectory client."""
    import rclpy

    log = tmp_path_factory.mktemp("fjt_mujoco") / "sim_node.log"
    args = [str(REPO / ".venv" / "bin" / "sim_node"), "--ros-args", "-r", "__ns:=/mj_arm",
            "--params-file", str(REPO / "config" / "sim.yaml"),
            "-p", f"skel_file:={ARM}", "-p", "engine:=mujoco", "-p", "real_time_factor:=1.0"]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, env=ros_env, stdout=out, stderr=subprocess.STDOUT)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        try:
            client = ActionProbe(context, namespace="/mj_arm")
        except AssertionError:
            raise AssertionError(log.read_text(errors="replace")[-3000:]) from None
        yield client
        client.destroy()
    finally:
        rclpy.try_shutdown(context=context)
        alive = proc.poll() is None
        _stop(proc)
        assert alive, log.read_text(errors="replace")[-3000:]


def _feedback_positions(client: ActionProbe) -> list[float]:
    count = len(client.states)
    client.spin_until(lambda: len(client.states) > count, "controller_state")
    state = client.states[-1]
    assert list(state.joint_names) == ARM_NAMES
    return list(state.feedback.positions)


def test_follow_joint_trajectory_goal_succeeds(arm: ActionProbe) -> None:
    q = _feedback_positions(arm)
    target = [0.4, -0.3, 0.6, 0.2]
    status_, result, goal = arm.run(make_goal(
        ARM_NAMES, [(0.6, [(a + b) / 2 for a, b in zip(q, target, strict=True)]), (1.2, target)],
        path=dict.fromkeys(ARM_NAMES, 0.3), goal=dict.fromkeys(ARM_NAMES, 0.02), goal_time=2.0,
        velocities=True))
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL), \
        result.error_string
    assert _feedback_positions(arm) == pytest.approx(target, abs=0.02)
    assert goal.feedback


def test_follow_joint_trajectory_beyond_the_limits_is_invalid(arm: ActionProbe) -> None:
    status_, result, _ = arm.run(make_goal(ARM_NAMES, [(1.0, [0.0, 0.0, 0.0, 2.5])]))
    assert status_ == status().STATUS_ABORTED
    assert result.error_code == codes().INVALID_GOAL
