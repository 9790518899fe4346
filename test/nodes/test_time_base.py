"""One time base per session: the simulation node's ``time_base`` (sim or wall).

Over DDS: the two nodes of a sim-to-real run, started with the command lines
``skel-ros sim-to-real`` uses, stamp matching ``sim/`` and ``real/`` transforms within a
control period of each other, and nothing publishes ``/clock``. In process: the sim
node with ``time_base`` wall stamps ROS time, takes header stamps in ROS time (the
``joint_trajectory`` topic and FollowJointTrajectory), publishes no ``/clock``, and
refuses what would break the wall clock lock. Comparisons are between stamps, never
against elapsed wall-clock time.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from polling import spin_until

from skel_ros.resources import example, resolve

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

pytestmark = [pytest.mark.ros, pytest.mark.timeout(180)]

rclpy = pytest.importorskip("rclpy")

PERIOD = 1.0 / 50.0  # s: the /tf period of both nodes (sim tf_rate, hardware publish_rate)
SPIN_LIMIT = 60.0  # s of spinning before a wait gives up (a bound, not a measurement)
WINDOW = 150  # /tf messages of each side looked at (3 s at 50 Hz)


def _seconds(stamp: Any) -> float:
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


def _spin_until(executor: Any, condition: Callable[[], bool], what: str,
                check: Callable[[], None] = lambda: None) -> None:
    spin_until(executor, condition, what, SPIN_LIMIT, step=0.05, check=check)


# ---------------------------------------------------------------- a sim-to-real session


@pytest.fixture
def session(ros_env: dict[str, str],
            tmp_path: Path) -> Iterator[dict[str, tuple[subprocess.Popen[bytes], Path]]]:
    """The run's simulation and hardware nodes (emulated servos), as ``sim-to-real`` starts them."""
    from skel_ros.nodes.sim_to_real import RunConfig, node_commands

    config = RunConfig(skel_file=example("arm.skel"),
                       hardware_config=resolve("package://skel_ros/config/hardware/"
                                               "arm_dynamixel.yaml"),
                       trajectory=example("arm_trajectory.xml"), out_dir=tmp_path)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    logs = {}
    try:
        for name, command in node_commands(config).items():
            logs[name] = tmp_path / f"{name}.log"
            with logs[name].open("wb") as out:
                procs[name] = subprocess.Popen(command, env=ros_env, stdout=out,
                                               stderr=subprocess.STDOUT)
        yield {name: (procs[name], logs[name]) for name in procs}
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=15)
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_sim_and_real_transforms_share_one_time_base(
        session: dict[str, tuple[subprocess.Popen[bytes], Path]]) -> None:
    """Matching sim/ and real/ transforms: stamps within a control period; no /clock."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    # (side, link) -> (stamp, ROS time of arrival here), in arrival order.
    received: dict[tuple[str, str], list[tuple[float, float]]] = {}

    def on_tf(msg: TFMessage) -> None:
        arrival = _ros_now(node)
        for t in msg.transforms:
            side, _, link = t.child_frame_id.partition("/")
            if side in ("sim", "real") and link:
                received.setdefault((side, link), []).append((_seconds(t.header.stamp), arrival))

    def check() -> None:
        for name, (proc, log) in session.items():
            if proc.poll() is not None:
                text = log.read_text(encoding="utf-8", errors="replace")
                pytest.fail(f"the {name} node exited ({proc.returncode}):\n{text}")

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("time_base_probe", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        node.create_subscription(TFMessage, "/tf", on_tf,
                                 QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))

        def links() -> set[str]:
            return ({link for side, link in received if side == "sim"}
                    & {link for side, link in received if side == "real"})

        _spin_until(executor, lambda: bool(links()), "/tf from both nodes", check)
        link = sorted(links())[0]
        start = {side: len(received[(side, link)]) for side in ("sim", "real")}
        _spin_until(executor, lambda: all(len(received[(side, link)]) >= start[side] + WINDOW
                                          for side in ("sim", "real")),
                    f"{WINDOW} transforms of {link} from each node", check)
        clock_publishers = node.count_publishers("/clock")
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)

    sim, real = (received[(side, link)][start[side]:] for side in ("sim", "real"))
    # The two streams cover one stretch of time (in separate time bases, nothing in common).
    first, last = max(sim[0][0], real[0][0]), min(sim[-1][0], real[-1][0])
    assert last - first > 0.5 * WINDOW * PERIOD, (sim[0], sim[-1], real[0], real[-1])
    # How old each side's stamps are when they arrive here (the same machine, the same
    # clock): never negative (no stamp from the future), and the freshest of each side, the
    # delivery least held up by a loaded machine, within a control period of the other's.
    ages = {side: [arrival - stamp for stamp, arrival in stream]
            for side, stream in (("sim", sim), ("real", real))}
    assert min(ages["sim"]) > -0.001, min(ages["sim"])
    assert min(ages["real"]) > -0.001, min(ages["real"])
    freshest = {side: min(a) for side, a in ages.items()}
    assert abs(freshest["sim"] - freshest["real"]) <= PERIOD, freshest
    assert clock_publishers == 0  # the session's time is the wall clock: no /clock


# ---------------------------------------------------------------- the sim node in process


def _sim_node(context: Any, **params: Any) -> Any:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.sim_node import SimNode

    values = {"skel_file": str(example("arm.skel")), "time_base": "wall", **params}
    return SimNode(context=context, start=False,
                   parameter_overrides=[Parameter(k, value=v) for k, v in values.items()])


def _ros_now(node: Any) -> float:
    return float(node.get_clock().now().nanoseconds) * 1e-9


class _Capture:
    """Stands in for the joint_states publisher: each stamp, and the ROS time it went out."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.sent: list[tuple[float, float]] = []

    def publish(self, msg: Any) -> None:
        self.sent.append((_seconds(msg.header.stamp), _ros_now(self.node)))

    @property
    def stamps(self) -> list[float]:
        return [stamp for stamp, _ in self.sent]


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    for _ in range(int(SPIN_LIMIT / 0.01)):
        if condition():
            return
        time.sleep(0.01)
    pytest.fail(f"gave up waiting for {what}")


def test_wall_time_base_stamps_ros_time_and_reads_stamps_as_ros_time(
        ros_env: dict[str, str]) -> None:
    """Stamps are ROS time, one step apart; header stamps are read as ROS time."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from skel_ros.nodes.names import stamp_from_seconds

    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = _sim_node(context, joint_states_rate=1000.0)
        assert node._clock_out is None  # no /clock publisher
        assert node.count_publishers("/clock") == 0
        out = node.shell.robot._joint_states_pub = _Capture(node)
        before = _ros_now(node)
        node._pacer.anchor(node.engine.time)
        node.run_steps(20)
        stamps = out.stamps
        assert len(stamps) == 20
        # ROS time (a generous bound: this is about the time base, not about timing) ...
        assert abs(stamps[0] - (before + 0.001)) < 0.5, (before, stamps[0])
        # ... one step of simulated time apart.
        np.testing.assert_allclose(np.diff(stamps), 0.001, atol=1e-6)
        # A trajectory stamped 0.5 s ahead in ROS time starts 0.5 s ahead in simulated time.
        point = JointTrajectoryPoint(positions=[0.1, 0.1, 0.3, 0.1])
        point.time_from_start.nanosec = 200_000_000
        msg = JointTrajectory(joint_names=["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"],
                              points=[point])
        msg.header.stamp = stamp_from_seconds(node.shell.time_base.to_stamp(node.engine.time + 0.5))
        node.shell.intake.on_trajectory(msg)
        assert node.core.following
        assert node.core._active.start == pytest.approx(node.engine.time + 0.5, abs=0.01)
        # FollowJointTrajectory's goals the same.
        _, start, _ = node.shell.trajectory_controller._prepare(msg)
        assert start == pytest.approx(node.engine.time + 0.5, abs=0.01)
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def test_wall_time_base_stamps_are_never_ahead_nor_sent_back(ros_env: dict[str, str]) -> None:
    """Stepping on its own, through a reset (simulated time back to 0), a pause and a
    manual step: no stamp is later than the ROS time it went out at, none goes back."""
    from std_srvs.srv import SetBool, Trigger

    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = _sim_node(context, joint_states_rate=1000.0)
        out = node.shell.robot._joint_states_pub = _Capture(node)
        node.start()
        _wait_for(lambda: len(out.sent) >= 50, "50 joint_states")
        node._on_reset(Trigger.Request(), Trigger.Response())
        count = len(out.sent)
        _wait_for(lambda: len(out.sent) >= count + 50, "50 joint_states after the reset")
        node._on_pause(SetBool.Request(data=True), SetBool.Response())
        reply = node._on_step(Trigger.Request(), Trigger.Response())
        assert reply.success, reply.message
        node.stop()
        stamps = out.stamps
        assert stamps == sorted(stamps)  # the reset did not send them back
        ahead = [(stamp, sent) for stamp, sent in out.sent if stamp > sent]
        assert not ahead, ahead[:5]
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def test_wall_time_base_refuses_what_breaks_the_lock(ros_env: dict[str, str]) -> None:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.errors import NodeSetupError
    from skel_ros.nodes.parameters import check
    from skel_ros.nodes.sim_node import PARAMETERS

    del ros_env
    assert check(PARAMETERS, "time_base", "wall") == ("wall", "")
    value, problem = check(PARAMETERS, "time_base", "gps")
    assert value is None
    assert "time_base must be one of sim, wall" in problem
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(NodeSetupError, match="real_time_factor must be 1"):
            _sim_node(context, real_time_factor=2.0)
        with pytest.raises(NodeSetupError, match="use_sim_time must be false"):
            _sim_node(context, use_sim_time=True)
        node = _sim_node(context)
        result = node.set_parameters([Parameter("real_time_factor", value=0.0)])[0]
        assert not result.successful
        assert "real_time_factor stays 1" in result.reason
        assert node.get_parameter("real_time_factor").value == 1.0
        node.destroy_node()
        node = _sim_node(context, time_base="sim")  # the default keeps /clock
        assert node.count_publishers("/clock") == 1
        assert node.shell.time_base.offset() == 0.0
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def test_pacer_maps_simulated_time_to_the_clock_and_only_moves_forward() -> None:
    from skel_ros.core import RealTimePacer

    now = [100.0]
    pacer = RealTimePacer(1.0, clock=lambda: now[0], max_lag=0.25)
    pacer.anchor(2.0)
    assert pacer.wall_at(2.5) == pytest.approx(100.5)
    now[0] += 1.0  # a second behind: re-anchored at the present
    assert pacer.due(2.0, 0.001) == 1
    assert pacer.lagging
    assert pacer.wall_at(2.001) == pytest.approx(101.0)  # the step it allows is due now
    assert pacer.lost == pytest.approx(0.999)
    now[0] -= 3600.0  # the system clock set back an hour: re-anchored, not an hour's stop
    assert pacer.due(2.001, 0.001) == 0
    now[0] += 0.002
    assert pacer.due(2.001, 0.001) == 2
