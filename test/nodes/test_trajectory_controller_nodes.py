"""FollowJointTrajectory on the simulation node and the hardware node, as MoveIt uses it.

Each node runs in a subprocess (the bundled arm; the hardware node on emulated Dynamixel
servos); an rclpy ActionClient sends goals to ``joint_trajectory_controller/
follow_joint_trajectory`` in the node's namespace over DDS. Times in goals are the nodes'
own (simulated time for the simulation); the tests wait by spinning, with bounds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from fjt_client import ActionProbe, codes, make_goal, status
from service_call import spin_call

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
NAMES = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]


class NodeProcess:
    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", *args], stdout=out, stderr=subprocess.STDOUT,
                text=True, env=env, start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def _probe(node: NodeProcess, namespace: str) -> Iterator[ActionProbe]:
    import rclpy

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        try:
            probe = ActionProbe(context, namespace=namespace)
        except AssertionError:
            raise AssertionError(node.output()[-3000:]) from None
        yield probe
        probe.destroy()
    finally:
        rclpy.try_shutdown(context=context)
    assert node.proc.poll() is None, f"the node died:\n{node.output()[-3000:]}"


# ------------------------------------------------------------------ simulation

@pytest.fixture(scope="module")
def sim(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory,
        ) -> Iterator[ActionProbe]:
    log = tmp_path_factory.mktemp("fjt_sim") / "sim_node.log"
    node = NodeProcess(["from skel_ros.nodes.sim_node import main; main()", "--ros-args",
                        "-r", "__ns:=/fjt_sim", "--params-file",
                        str(REPO / "config" / "sim.yaml"),  # the shipped settings
                        "-p", f"skel_file:={ARM}", "-p", "real_time_factor:=1.0"], ros_env, log)
    try:
        yield from _probe(node, "/fjt_sim")
    finally:
        node.stop()


def _sim_time(probe: ActionProbe) -> float:
    count = len(probe.states)
    probe.spin_until(lambda: len(probe.states) > count, "controller_state")
    stamp = probe.states[-1].header.stamp
    return stamp.sec + 1e-9 * stamp.nanosec


def _feedback_positions(probe: ActionProbe) -> list[float]:
    count = len(probe.states)
    probe.spin_until(lambda: len(probe.states) > count, "controller_state")
    state = probe.states[-1]
    assert list(state.joint_names) == NAMES
    return list(state.feedback.positions)


def test_sim_goal_succeeds_within_tolerances(sim: ActionProbe) -> None:
    q = _feedback_positions(sim)
    target = [0.4, -0.3, 0.6, 0.2]
    status_, result, goal = sim.run(make_goal(
        NAMES, [(0.6, [(a + b) / 2 for a, b in zip(q, target, strict=True)]), (1.2, target)],
        path=dict.fromkeys(NAMES, 0.3), goal=dict.fromkeys(NAMES, 0.02), goal_time=2.0,
        velocities=True))
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL), \
        result.error_string
    assert _feedback_positions(sim) == pytest.approx(target, abs=0.02)
    assert goal.feedback
    fb = goal.feedback[-1].feedback
    assert list(fb.joint_names) == NAMES
    assert len(fb.desired.positions) == len(fb.actual.positions) == len(fb.error.positions) == 4


def test_sim_the_documented_goal_succeeds_twice_in_a_row(sim: ActionProbe) -> None:
    """docs/trajectory_controller.md's command-line goal, as written: it was ABORTED on the
    simulation node, twice in a row (the arm settled short: 'wrist' position error 0.01147
    beyond 0.01) where the emulated servos reached it. A simulated position joint reaches a
    reachable goal as the servo it models does."""
    target = [0.5, -0.3, 0.6, 0.2]
    for _ in range(2):
        status_, result, _ = sim.run(make_goal(NAMES, [(2.0, target)], goal={"wrist": 0.01},
                                               goal_time=1.0))
        assert (status_, result.error_code) == (status().STATUS_SUCCEEDED,
                                                codes().SUCCESSFUL), result.error_string
        assert _feedback_positions(sim)[3] == pytest.approx(0.2, abs=0.01)


def test_sim_path_tolerance_violated(sim: ActionProbe) -> None:
    q = _feedback_positions(sim)
    target = [q[0] - 2.0 if q[0] > 0.0 else q[0] + 2.0, *q[1:]]  # 20 rad/s: beyond 4.8 rad/s
    status_, result, _ = sim.run(make_goal(NAMES, [(0.1, target)],
                                           path={"shoulder_yaw": 0.05}))
    assert status_ == status().STATUS_ABORTED
    assert result.error_code == codes().PATH_TOLERANCE_VIOLATED, result.error_string
    assert "'shoulder_yaw' position error" in result.error_string


def test_sim_goal_tolerance_violated(sim: ActionProbe) -> None:
    q = _feedback_positions(sim)
    target = [q[0], q[1], q[2] + (0.3 if q[2] < 0.0 else -0.3), q[3]]
    status_, result, _ = sim.run(make_goal(NAMES, [(0.2, target)], goal={"elbow": 1e-9},
                                           goal_time=0.05))
    assert status_ == status().STATUS_ABORTED
    assert result.error_code == codes().GOAL_TOLERANCE_VIOLATED, result.error_string


def test_sim_cancel_holds_position(sim: ActionProbe) -> None:
    q = _feedback_positions(sim)
    goal = sim.send(make_goal(NAMES, [(30.0, [q[0] + (0.5 if q[0] < 0 else -0.5), *q[1:]])]))
    sim.spin_until(lambda: len(goal.feedback) >= 3, "feedback while moving")
    assert sim.cancel(goal).return_code == 0
    status_, _ = sim.wait(goal)
    assert status_ == status().STATUS_CANCELED
    held = _feedback_positions(sim)[0]
    for _ in range(5):  # it stays where it was stopped
        assert _feedback_positions(sim)[0] == pytest.approx(held, abs=0.01)


def test_sim_new_goal_preempts(sim: ActionProbe) -> None:
    q = _feedback_positions(sim)
    first = sim.send(make_goal(NAMES, [(30.0, [q[0] + (0.5 if q[0] < 0 else -0.5), *q[1:]])]))
    sim.spin_until(lambda: bool(first.feedback), "feedback of the first goal")
    second = sim.send(make_goal(NAMES, [(0.3, q)]))
    status_, result = sim.wait(first)
    assert (status_, result.error_code) == (status().STATUS_ABORTED, codes().INVALID_GOAL)
    assert "preempted" in result.error_string
    status_, result = sim.wait(second)
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL)


def test_sim_invalid_joints_are_rejected(sim: ActionProbe) -> None:
    """As joint_trajectory_controller's goal callback: rejected when it arrives."""
    assert not sim.accepts(make_goal(["shoulder_yaw", "elbo"], [(1.0, [0.0, 0.0])]))


def test_sim_stale_header_stamp_is_rejected(sim: ActionProbe) -> None:
    sim.spin_until(lambda: _sim_time(sim) > 1.5, "simulated time past 1.5 s")
    assert not sim.accepts(make_goal(NAMES, [(0.5, [0.0] * 4)], stamp=0.5))


def test_sim_goal_beyond_the_limits_is_invalid(sim: ActionProbe) -> None:
    status_, result, _ = sim.run(make_goal(NAMES, [(1.0, [0.0, 0.0, 0.0, 2.5])]))
    assert (status_, result.error_code) == (status().STATUS_ABORTED, codes().INVALID_GOAL)
    assert "'wrist' at 2.5 is beyond its limits" in result.error_string


def test_sim_query_state(sim: ActionProbe) -> None:
    """joint_trajectory_controller/query_state in simulated time: a goal starting 2 s after
    it is sent, 0.5 s long; asked before it was sent, while it waits, half-way and after its
    last point, then once it succeeded.

    The simulation is paused (``~/pause``) once the goal is followed, and resumed after the
    questions: the answers are for the times asked, but only while the goal is active, and a
    loaded host once took longer than the goal's 2.5 s to answer them (the goal had ended:
    "no trajectory is being followed")."""
    from std_srvs.srv import SetBool

    q = _feedback_positions(sim)
    assert list(sim.query_state(0.0).name) == NAMES  # the client, discovered before timing
    pause = sim.node.create_client(SetBool, "/fjt_sim/sim_node/pause")
    spin_call(sim.executor, pause, SetBool.Request(data=False), idempotent=True)  # discovered
    now = _sim_time(sim)
    start = now + 2.0
    target = [q[0] + (0.4 if q[0] < 0.0 else -0.4), *q[1:]]
    goal = sim.send(make_goal(NAMES, [(0.5, target)], stamp=start, velocities=True))
    sim.spin_until(lambda: bool(goal.feedback), "feedback: the goal is followed")
    reply = spin_call(sim.executor, pause, SetBool.Request(data=True), idempotent=True)
    assert reply.success, reply.message
    try:
        stamp = goal.feedback[-1].feedback.header.stamp  # followed then; paused since
        followed = stamp.sec + 1e-9 * stamp.nanosec
        assert followed < start, (f"paused at {reply.message}, after the goal's start"
                                  f" ({start:.6f} s): the host took over 2 s to pause")
        before = sim.query_state(now - 0.5)
        assert not before.success
        assert "before the trajectory was received" in before.message
        assert list(before.name) == NAMES
        assert list(before.position) == pytest.approx(q, abs=0.05)  # measured
        waiting = sim.query_state(followed)  # received, not started: its start positions
        assert waiting.success, waiting.message
        assert list(waiting.velocity) == [0.0] * 4
        half = sim.query_state(start + 0.25)
        assert half.success, half.message
        # The other joints go from their held targets to where they were measured: the same
        # but for the position controller's residual (its integral's tail, well under 1e-3).
        assert list(half.position[1:]) == pytest.approx(list(waiting.position[1:]), abs=1e-3)
        assert abs(half.velocity[0]) > 0.05
        assert (half.position[0] - waiting.position[0]) * (target[0] - waiting.position[0]) > 0
        assert abs(half.position[0] - waiting.position[0]) < abs(target[0] - waiting.position[0])
        after = sim.query_state(start + 1.0)
        assert not after.success
        assert "not before the trajectory's last point" in after.message
        assert list(after.position) == pytest.approx(target, abs=1e-9)
    finally:
        spin_call(sim.executor, pause, SetBool.Request(data=False), idempotent=True)
    sim.node.destroy_client(pause)
    status_, result = sim.wait(goal)
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL), \
        result.error_string
    done = sim.query_state(start + 0.25)
    assert (done.success, done.message) == (False, "no trajectory is being followed")


# ------------------------------------------------------------------ MoveIt's configuration

def test_moveit_controllers_yaml_matches_the_server() -> None:
    from skel_ros.nodes.follow_joint_trajectory import DEFAULT_CONTROLLER

    config = yaml.safe_load((REPO / "config" / "moveit" / "arm_moveit_controllers.yaml")
                            .read_text(encoding="utf-8"))
    assert config["moveit_controller_manager"] == (
        "moveit_simple_controller_manager/MoveItSimpleControllerManager")
    manager = config["moveit_simple_controller_manager"]
    assert manager["controller_names"] == [DEFAULT_CONTROLLER]
    controller = manager[DEFAULT_CONTROLLER]
    assert controller["type"] == "FollowJointTrajectory"
    assert controller["action_ns"] == "follow_joint_trajectory"
    assert controller["joints"] == NAMES  # the controller's joints: test_sim_* see them


# ------------------------------------------------------------------ hardware, emulated servos

@pytest.fixture(scope="module")
def hardware(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory,
             ) -> Iterator[ActionProbe]:
    pytest.importorskip("skel_ros.hardware.dynamixel")
    log = tmp_path_factory.mktemp("fjt_hw") / "hardware_node.log"
    node = NodeProcess(
        ["from skel_ros.nodes.hardware_node import main; main()", "--ros-args",
         "-r", "__ns:=/fjt_hw", "-p", f"skel_file:={ARM}",
         "-p", f"hardware_config:={REPO / 'config' / 'hardware' / 'arm_dynamixel.yaml'}",
         "-p", "emulate:=true", "-p", "command_timeout:=5.0"], ros_env, log)
    try:
        for probe in _probe(node, "/fjt_hw"):
            _enable(probe, on=True)
            yield probe
    finally:
        node.stop()


def test_hardware_goal_succeeds_within_tolerances(hardware: ActionProbe) -> None:
    q = _feedback_positions(hardware)
    target = [0.3, -0.2, 0.5, -0.3]
    status_, result, goal = hardware.run(make_goal(
        NAMES, [(1.0, target)], path=dict.fromkeys(NAMES, 0.5), goal=dict.fromkeys(NAMES, 0.03),
        goal_time=2.0))
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL), \
        result.error_string
    assert _feedback_positions(hardware) == pytest.approx(target, abs=0.03)
    assert goal.feedback
    assert q != pytest.approx(target, abs=0.03)  # it did move


def test_hardware_path_tolerance_violated_then_cancel_and_stale_stamp(
        hardware: ActionProbe) -> None:
    q = _feedback_positions(hardware)
    target = [q[0] - 1.5 if q[0] > 0.0 else q[0] + 1.5, *q[1:]]  # faster than the servo
    status_, result, _ = hardware.run(make_goal(NAMES, [(0.1, target)],
                                                path={"shoulder_yaw": 0.05}))
    assert (status_, result.error_code) == (status().STATUS_ABORTED,
                                            codes().PATH_TOLERANCE_VIOLATED), result.error_string
    q = _feedback_positions(hardware)
    goal = hardware.send(make_goal(NAMES, [(30.0, [q[0] + (0.5 if q[0] < 0 else -0.5),
                                                   *q[1:]])]))
    hardware.spin_until(lambda: len(goal.feedback) >= 2, "feedback while moving")
    assert hardware.cancel(goal).return_code == 0
    assert hardware.wait(goal)[0] == status().STATUS_CANCELED
    # A stamp in ROS time (the node's clock): the trajectory ended 5 s ago, rejected on
    # arrival as joint_trajectory_controller does.
    now = hardware.node.get_clock().now().nanoseconds * 1e-9
    assert not hardware.accepts(make_goal(NAMES, [(1.0, q)], stamp=now - 6.0))


def _enable(probe: ActionProbe, on: bool) -> None:
    """``~/enable`` on or off (idempotent: asked again if its answer is lost)."""
    from std_srvs.srv import SetBool

    enable = probe.node.create_client(SetBool, "hardware_node/enable")
    reply = spin_call(probe.executor, enable, SetBool.Request(data=on), idempotent=True)
    assert reply.success, reply.message
    probe.node.destroy_client(enable)


def test_hardware_disable_ends_a_goal_and_torque_off_refuses_one(hardware: ActionProbe) -> None:
    q = _feedback_positions(hardware)
    goal = hardware.send(make_goal(NAMES, [(30.0, [q[0] + (0.5 if q[0] < 0 else -0.5),
                                                   *q[1:]])]))
    hardware.spin_until(lambda: len(goal.feedback) >= 2, "feedback while moving")
    _enable(hardware, on=False)
    try:
        status_, result = hardware.wait(goal)
        assert (status_, result.error_code) == (status().STATUS_ABORTED, codes().INVALID_GOAL)
        status_, result, _ = hardware.run(make_goal(NAMES, [(1.0, q)]))
        assert (status_, result.error_code) == (status().STATUS_ABORTED, codes().INVALID_GOAL)
        assert result.error_string, "no reason given"
    finally:
        _enable(hardware, on=True)
