"""trajectory_player in its own process, a real subscriber in the test (rclpy, Fast DDS)."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from skel_ros.resources import example

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

SHORT_YAML = """joint_names: [elbow, wrist]
points:
  - {positions: [0.3, 0.0], time_from_start: 0.0}
  - {positions: [0.8, -0.5], time_from_start: 1.0}
"""
LONG_YAML = SHORT_YAML.replace("time_from_start: 1.0", "time_from_start: 8.0")
SHORT_CASPR = """<trajectories><joint_trajectories>
<cubic_spline_trajectory id="c" time_definition="absolute" time_step="0.25">
<points>
<point><q>0.3 0.0 7</q><q_dot>0 0 0</q_dot></point>
<point time="1"><q>0.8 -0.5 7</q><q_dot>0 0 0</q_dot></point>
</points></cubic_spline_trajectory></joint_trajectories></trajectories>
"""


def _ros_args(params: dict[str, str]) -> list[str]:
    args = ["--ros-args"]
    for name, value in {"skel_file": str(example("arm.skel")), **params}.items():
        args += ["-p", f"{name}:={value}"]
    return args


def _player(env: dict[str, str], **params: str) -> subprocess.Popen[str]:
    args = [sys.executable, "-c", "from skel_ros.nodes.trajectory_player import main; main()",
            *_ros_args(params)]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _player_main(capsys: pytest.CaptureFixture[str], **params: str) -> tuple[int, str]:
    """The player's ``main(argv)`` in this process: (exit status, what it printed).

    For the refusals at start: the same ``main`` as the console script, without the
    second a new interpreter costs (importing rclpy, the model code). One case of
    test_bad_parameters_end_with_a_message still runs the real process.
    """
    from skel_ros.nodes.trajectory_player import main

    with pytest.raises(SystemExit) as exited:
        main(_ros_args(params))
    captured = capsys.readouterr()
    assert not rclpy.ok(), "main left the default context initialized"
    return int(exited.value.code or 0), captured.out + captured.err


def _collect(msg_type: Any, topic: str, proc: subprocess.Popen[str],
             setup: Callable[[Any, list[Any]], None] | None = None,
             arrived: Callable[[list[Any]], bool] | None = None,
             ) -> tuple[list[Any], str]:
    """Subscribe, spin until the player exits (bounded), return the messages and its output.

    ``setup(node, received)`` adds more to the test node (a service) before spinning.
    ``arrived(received)``: everything the player sent is here (its last message); after
    the player exits, spinning goes on until then (bounded), else for 0.5 s.
    """
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    received: list[Any] = []
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("player_test", context=context)
        node.create_subscription(msg_type, topic, received.append,
                                 QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        if setup is not None:
            setup(node, received)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        for _ in range(1200):  # at most ~120 s
            executor.spin_once(timeout_sec=0.1)
            if proc.poll() is not None:
                break
        # What is still in flight: until the last message is here when the test knows
        # which it is (at most ~10 s), else a fixed 0.5 s.
        for _ in range(100 if arrived is not None else 5):
            if arrived is not None and arrived(received):
                break
            executor.spin_once(timeout_sec=0.1)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
        if proc.poll() is None:
            proc.kill()
        output, _ = proc.communicate(timeout=30)
    return received, output


def _stream_ended(received: list[Any]) -> bool:
    """The stream's last command (SHORT_YAML's end, elbow 0.8) is the last one received."""
    return bool(received) and not isinstance(received[-1], tuple) \
        and abs(received[-1].position[0] - 0.8) < 1e-9


def test_stream_mode_publishes_sampled_positions(ros_env: dict[str, str], tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState

    path = tmp_path / "short.yaml"
    path.write_text(SHORT_YAML, encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mode="stream", rate="50",
                   wait_for_subscribers="60.0")
    received, output = _collect(JointState, "/joint_commands", proc, arrived=_stream_ended)
    assert proc.returncode == 0, output
    assert "progress 100 %" in output
    assert "progress  50 %" in output
    assert len(received) >= 10, output  # 1 s at 50 Hz: about 51
    for msg in received:
        assert list(msg.name) == ["elbow", "wrist"]
        assert len(msg.velocity) == 0
        assert len(msg.effort) == 0
        elbow, wrist = msg.position
        assert 0.3 <= elbow <= 0.8
        assert wrist == pytest.approx(-(elbow - 0.3), abs=1e-12)  # both on the same line
    elbows = [m.position[0] for m in received]
    assert elbows == sorted(elbows)
    np.testing.assert_allclose(received[-1].position, [0.8, -0.5])


def test_stream_waits_for_every_subscriber(ros_env: dict[str, str], tmp_path: Path) -> None:
    """``subscribers:=2``: the stream starts once both are matched, so the one that comes
    2 s late (as a robot or a recorder whose discovery a loaded machine delays) hears it
    from its first sample. Waiting for the first subscriber only, it heard none of it."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    path = tmp_path / "short.yaml"
    path.write_text(SHORT_YAML, encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mode="stream", rate="50",
                   wait_for_subscribers="60.0", subscribers="2")
    late: list[Any] = []

    def setup(node: Any, _received: list[Any]) -> None:
        def join() -> None:
            timer.cancel()
            node.create_subscription(JointState, "/joint_commands", late.append,
                                     QoSProfile(depth=1000,
                                                reliability=ReliabilityPolicy.RELIABLE))
        timer = node.create_timer(2.0, join)

    received, output = _collect(JointState, "/joint_commands", proc, setup,
                                lambda received: _stream_ended(received) and _stream_ended(late))
    assert proc.returncode == 0, output
    assert late, output
    assert late[0].position[0] == pytest.approx(0.3, abs=1e-12)  # the first sample
    assert len(late) == len(received), output


def _late_subscriber(msg_type: Any, topic: str, late: list[Any], after: float,
                     ) -> Callable[[Any, list[Any]], None]:
    """A ``setup`` for :func:`_collect`: a second subscriber joins ``after`` s later."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    def setup(node: Any, _received: list[Any]) -> None:
        def join() -> None:
            timer.cancel()
            node.create_subscription(msg_type, topic, late.append,
                                     QoSProfile(depth=1000,
                                                reliability=ReliabilityPolicy.RELIABLE))
        timer = node.create_timer(after, join)

    return setup


def test_the_one_trajectory_reaches_every_robot_the_player_waits_for(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 34: the simulation moved and the hardware did not: the player sent its one
    JointTrajectory as soon as the first robot matched. With ``subscribers:=2`` it waits
    for both, so the one that comes 2 s late gets the trajectory too."""
    from trajectory_msgs.msg import JointTrajectory

    path = tmp_path / "short.yaml"
    path.write_text(SHORT_YAML, encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mode="trajectory",
                   wait_for_subscribers="60.0", subscribers="2")
    late: list[Any] = []
    received, output = _collect(JointTrajectory, "/joint_trajectory", proc,
                                _late_subscriber(JointTrajectory, "/joint_trajectory", late, 2.0),
                                lambda received: bool(received) and bool(late))
    assert proc.returncode == 0, output
    assert len(received) == 1, output
    assert len(late) == 1, output
    assert list(late[0].joint_names) == ["elbow", "wrist"]
    assert "2 of 2 subscriber(s) of /joint_trajectory matched (" in output


def test_robots_not_reached_in_time_mean_no_play_and_status_2(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    """Two robots expected, one there: after ``wait_for_subscribers`` the player says how
    many it did not reach and which it did, sends nothing and exits with status 2 (it
    played anyway, to the one robot, with status 0)."""
    from trajectory_msgs.msg import JointTrajectory

    path = tmp_path / "short.yaml"
    path.write_text(SHORT_YAML, encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mode="trajectory",
                   wait_for_subscribers="3.0", subscribers="2")
    received, output = _collect(JointTrajectory, "/joint_trajectory", proc)
    assert proc.returncode == 2, output
    assert received == [], output
    # 1 of 2 reached, or none when this machine was too busy to match even one in 3 s
    line = next(x for x in output.splitlines() if x.startswith("trajectory_player: "))
    assert " of 2 subscriber(s) of /joint_trajectory not reached within 3 s" in line, output
    assert "Not playing: a robot matched late would miss the trajectory" in line
    if "reached 1:" in line:
        assert line.startswith("trajectory_player: 1 of 2 subscriber(s)"), output
        assert "reached 1: /player_test." in line, output
    assert "progress" not in output


def test_a_subscriber_matched_after_the_trajectory_was_sent_is_warned_about(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    """``subscribers`` left at 1 with two robots: the one matched after the trajectory was
    sent missed it, and the player says so instead of ending "done" in silence."""
    from trajectory_msgs.msg import JointTrajectory

    path = tmp_path / "long.yaml"
    path.write_text(LONG_YAML, encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mode="trajectory",
                   wait_for_subscribers="60.0")
    late: list[Any] = []

    def join_once_received(node: Any, received: list[Any]) -> None:
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        def join() -> None:
            if received and not joined:
                joined.append(node.create_subscription(
                    JointTrajectory, "/joint_trajectory", late.append,
                    QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)))

        joined: list[Any] = []
        node.create_timer(0.1, join)

    received, output = _collect(JointTrajectory, "/joint_trajectory", proc, join_once_received)
    assert proc.returncode == 0, output
    assert len(received) == 1, output
    assert late == []
    warning = next(line for line in output.splitlines() if "matched after" in line)
    assert ("1 subscriber(s) of /joint_trajectory matched after the trajectory was sent (now 2:"
            in warning), output
    assert "/player_test" in warning  # who, as the ROS graph names them
    assert "they missed what was sent before" in warning


def test_trajectory_mode_publishes_one_joint_trajectory(ros_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    from trajectory_msgs.msg import JointTrajectory

    path = tmp_path / "short.xml"
    path.write_text(SHORT_CASPR, encoding="utf-8")
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("[elbow, wrist, null]\n", encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mapping_file=str(mapping),
                   mode="trajectory", wait_for_subscribers="60.0")
    received, output = _collect(JointTrajectory, "/joint_trajectory", proc, arrived=bool)
    assert proc.returncode == 0, output
    assert "progress 100 %" in output
    assert len(received) == 1, output
    msg = received[0]
    assert list(msg.joint_names) == ["elbow", "wrist"]
    assert msg.header.stamp.sec == 0
    assert msg.header.stamp.nanosec == 0
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points]
    np.testing.assert_allclose(times, [0, 0.25, 0.5, 0.75, 1.0])
    # cubic 0.3 -> 0.8 over 1 s from rest: 0.3 + 0.5 (3 s^2 - 2 s^3); at 0.25 s: 0.3 + 0.078125
    np.testing.assert_allclose(msg.points[1].positions, [0.378125, -0.078125])
    np.testing.assert_allclose(msg.points[1].velocities, [0.5625, -0.5625])
    np.testing.assert_allclose(msg.points[1].accelerations, [1.5, -1.5])  # 0.5 (6 - 12 s)


def _enable_service(success: bool) -> Callable[[Any, list[Any]], None]:
    """A SetBool service /test/enable that logs its call into ``received`` and answers."""
    from std_srvs.srv import SetBool

    def setup(node: Any, received: list[Any]) -> None:
        def serve(request: Any, response: Any) -> Any:
            received.append(("enable", request.data))
            response.success = success
            response.message = "enabled: holding" if success else "E-stop latched"
            return response

        node.create_service(SetBool, "/test/enable", serve)

    return setup


def test_enable_service_is_called_before_playing(ros_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState

    path = tmp_path / "short.yaml"
    path.write_text(SHORT_YAML, encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mode="stream", rate="50",
                   wait_for_subscribers="60.0", enable_service="/test/enable")
    received, output = _collect(JointState, "/joint_commands", proc, _enable_service(True),
                                _stream_ended)
    assert proc.returncode == 0, output
    # Before the first command; once, unless its answer was lost (then asked again).
    enables = _enables(received)
    assert received[:len(enables)] == enables == [("enable", True)] * len(enables) != [], output
    assert len(received) > 10
    assert "/test/enable: enabled: holding" in output


def _enables(received: list[Any]) -> list[Any]:
    return [r for r in received if isinstance(r, tuple)]


HARDWARE = "/robot/hardware_node"  # HardwareLikeServer's node: <node>/enable, get_state


def _play_to_hardware(ros_env: dict[str, str], tmp_path: Path, text: str = SHORT_YAML,
                      ) -> subprocess.Popen[str]:
    path = tmp_path / "short.yaml"
    path.write_text(text, encoding="utf-8")
    return _player(ros_env, trajectory_file=str(path), mode="stream", rate="50",
                   wait_for_subscribers="60.0", enable_service=f"{HARDWARE}/enable")


def test_a_lost_enable_answer_is_not_sent_again_when_the_node_is_active(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    """The node serves the first enable and its answer never comes (as rmw_fastrtps drops
    the answer to a client it has not matched yet): the player asks get_state, which says
    active, and the diagnostics say enabled, so it plays without sending enable again."""
    from sensor_msgs.msg import JointState
    from service_call import HardwareLikeServer

    with HardwareLikeServer(HARDWARE) as server:
        proc = _play_to_hardware(ros_env, tmp_path)
        received, output = _collect(JointState, "/joint_commands", proc,
                                    arrived=_stream_ended)
    assert proc.returncode == 0, output
    assert server.enable_requests == [True], output
    assert server.events[:2] == ["enable (answer lost)", "get_state active"], output
    assert (f"{HARDWARE}/enable: no answer within 2 s; asking {HARDWARE}/get_state whether it"
            " was served") in output
    assert f"{HARDWARE}/get_state says active: the enable was served" in output
    assert "/diagnostics: enabled: test" in output
    assert len(received) > 10


def test_an_estop_after_a_lost_enable_answer_stays_in_force(ros_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    """The first enable is served, its answer lost, and the operator presses the e-stop
    (topic ``~/estop``) at once: the player does not enable again (that would clear the
    e-stop), says the node is active but in estop, and plays nothing."""
    from sensor_msgs.msg import JointState
    from service_call import HardwareLikeServer
    from std_msgs.msg import Bool

    with HardwareLikeServer(HARDWARE) as server:
        def press_estop_once_enabled(node: Any, _received: list[Any]) -> None:
            estop = node.create_publisher(Bool, f"{HARDWARE}/estop", 10)

            def press() -> None:
                if server.enable_requests and not server.estops:
                    estop.publish(Bool(data=True))

            node.create_timer(0.05, press)

        proc = _play_to_hardware(ros_env, tmp_path)
        received, output = _collect(JointState, "/joint_commands", proc,
                                    press_estop_once_enabled)
    assert proc.returncode == 2, output
    assert server.enable_requests == [True], output
    assert server.motion == "estop", server.events
    assert received == [], output  # not one command
    assert f"{HARDWARE}/get_state says active: the enable was served" in output
    assert "but /diagnostics says estop (estop: test)" in output
    assert "the estop stays in force" in output
    assert "not playing" in output


def test_an_enable_lost_before_it_was_served_is_sent_again(ros_env: dict[str, str],
                                                          tmp_path: Path) -> None:
    """The first enable never reaches the node: get_state says inactive, so the player
    sends it again, and plays once that one is answered."""
    from sensor_msgs.msg import JointState
    from service_call import HardwareLikeServer

    with HardwareLikeServer(HARDWARE, served=False) as server:
        proc = _play_to_hardware(ros_env, tmp_path)
        received, output = _collect(JointState, "/joint_commands", proc,
                                    arrived=_stream_ended)
    assert proc.returncode == 0, output
    assert server.events == ["enable (not served)", "get_state inactive", "enable"], output
    assert (f"{HARDWARE}/get_state: inactive: the enable was not served (or was refused);"
            " sending it again (request 2)") in output
    assert f"{HARDWARE}/enable: enabled: holding (request 2)" in output
    assert len(received) > 10



def test_an_estop_while_playing_stops_the_player(ros_env: dict[str, str],
                                                tmp_path: Path) -> None:
    """Enabled (answered), then the e-stop while the stream plays: the hardware node
    refuses the commands, and the player stops and says so (status 3) instead of playing
    on and ending "done"."""
    from sensor_msgs.msg import JointState
    from service_call import HardwareLikeServer
    from std_msgs.msg import Bool

    with HardwareLikeServer(HARDWARE, drop=0) as server:
        def press_estop_while_playing(node: Any, received: list[Any]) -> None:
            estop = node.create_publisher(Bool, f"{HARDWARE}/estop", 10)

            def press() -> None:
                if len(received) >= 5 and not server.estops:
                    estop.publish(Bool(data=True))

            node.create_timer(0.05, press)

        proc = _play_to_hardware(ros_env, tmp_path, LONG_YAML)
        received, output = _collect(JointState, "/joint_commands", proc,
                                    press_estop_while_playing)
    assert proc.returncode == 3, output
    assert server.enable_requests == [True], output
    assert server.motion == "estop"
    assert f"{HARDWARE} reports estop (estop: test)" in output
    assert "stopped playing" in output
    assert "progress 100 %" not in output
    assert 5 <= len(received) < 8 * 50, output


def test_refused_enable_means_no_motion(ros_env: dict[str, str], tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState

    path = tmp_path / "short.yaml"
    path.write_text(SHORT_YAML, encoding="utf-8")
    proc = _player(ros_env, trajectory_file=str(path), mode="stream", rate="50",
                   wait_for_subscribers="60.0", enable_service="/test/enable")
    received, output = _collect(JointState, "/joint_commands", proc, _enable_service(False))
    assert proc.returncode == 2, output
    assert received == _enables(received) != [], output  # not one command
    assert "/test/enable refused to enable: E-stop latched; not playing" in output


def test_out_of_limit_trajectory_is_refused(ros_env: dict[str, str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    del ros_env  # main's node joins the test session's isolated domain
    path = tmp_path / "far.yaml"
    path.write_text("joint_names: [wrist]\npoints:\n"
                    "- {positions: [0.0], time_from_start: 0}\n"
                    "- {positions: [3.8], time_from_start: 2}\n", encoding="utf-8")
    returncode, output = _player_main(capsys, trajectory_file=str(path), mode="stream")
    assert returncode == 2, output
    assert "refusing to play" in output
    assert ("far.yaml: DOF 'wrist' at t = 1.005 s: position 1.9095000000000002 is outside its"
            " limits [-1.9, 1.9]") in output


@pytest.mark.parametrize(
    ("params", "message"),
    [
        # The first case runs the real process (the console script's exit status and
        # output); the others run the same main(argv) in this process.
        ({"mode": "fast"},
         "invalid parameters: mode must be one of trajectory, stream, got 'fast'"),
        ({"rate": "0"}, "invalid parameters: rate must be in (0, 1000] Hz, got 0.0"),
        ({"rate": ".nan"}, "rate must be in (0, 1000] Hz, got nan"),
        ({"rate": ".inf"}, "rate must be in (0, 1000] Hz, got inf"),
        ({"start_delay": "-1.0"}, "start_delay must be finite and >= 0, got -1.0"),
        ({"trajectory_file": "''"}, "trajectory_file is required"),
        ({"rate": "fast"}, "rate must be a number, got 'fast'"),
        ({"subscribers": "0"}, ("subscribers must be an integer >= 1 (every robot, and a"
                               " recorder), got 0")),
        ({"loop": "3"}, "loop must be a bool (true or false): "),
        ({"subscribers": "2.5"}, "subscribers must be a whole number: "),
        # Every problem at once, each named (the shared skel_ros.nodes.parameters check).
        ({"rate": "0", "wait_for_subscribers": "-2"},
         ("rate must be in (0, 1000] Hz, got 0.0; wait_for_subscribers must be finite and"
         " >= 0, got -2.0")),
        ({"trajectory_file": "/nonexistent/t.yaml"}, "cannot read trajectory file"),
        ({"mapping_file": "/nonexistent/m.yaml"}, "a mapping file applies to CASPR"),
    ],
)
def test_bad_parameters_end_with_a_message(ros_env: dict[str, str], params: dict[str, str],
                                           message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    params = {"trajectory_file": str(example("arm_trajectory.yaml")), **params}
    if params.get("mode") == "fast":  # the first case: the real process
        proc = _player(ros_env, **params)
        output, _ = proc.communicate(timeout=120)
        returncode = proc.returncode
    else:
        returncode, output = _player_main(capsys, **params)
    assert returncode == 2, output
    assert message in output
    if params.get("mode") == "fast":  # one line, not the ROS log's copy as well
        assert output.strip().splitlines() == [f"trajectory_player: {output.split(': ', 1)[1]}"
                                               .strip()], output


def test_play_passes_strings_that_look_like_yaml_values(
        ros_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``skel-ros play`` passes ``-p name:=value``, which ROS reads as YAML: a trajectory
    file named ``true``, ``--trajectory-id 1`` or a quote must reach the node as strings
    (they were a bool, an integer: "expecting type 'STRING'")."""
    del ros_env  # main's node joins the test session's isolated domain
    from skel_ros.cli.main import main as skel_ros_main
    from skel_ros.nodes import trajectory_player

    seen: dict[str, Any] = {}

    class Loaded(trajectory_player.TrajectoryPlayer):
        """The real node, which stops once it has read its parameters and files."""

        def __init__(self) -> None:
            super().__init__()
            seen.update({name: self.get_parameter(name).value
                         for name in ("trajectory_file", "trajectory_id", "skel_file")})
            seen["points"] = len(self.trajectory.points)
            self.done = True

    monkeypatch.setattr(trajectory_player, "TrajectoryPlayer", Loaded)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "true").write_text(SHORT_CASPR.replace('id="c"', 'id="1"').replace(
        "0.3 0.0 7", "0 0 0.3 0.0").replace("0.8 -0.5 7", "0 0 0.8 -0.5").replace(
        "<q_dot>0 0 0</q_dot>", "<q_dot>0 0 0 0</q_dot>"), encoding="utf-8")
    model = tmp_path / "it's 1.skel"
    model.write_bytes(example("arm.skel").read_bytes())
    status = skel_ros_main(["play", "true", "--skel", model.name, "--trajectory-id", "1"])
    output = capsys.readouterr().err
    assert status == 0, output
    assert seen == {"trajectory_file": "true", "trajectory_id": "1", "skel_file": "it's 1.skel",
                    "points": 5}


PLANAR_BODIES = """<bodies_system><links>
<link_rigid num="1" name="platform">
  <joint type="PLANAR_XZ" q_initial="0 0 0" q_min="-2 -2 -2" q_max="2 2 2"/>
  <physical><mass>1.0</mass><com_location>0 0 0</com_location>
    <end_location>0 0 0.1</end_location>
    <inertia ref="com"><Ixx>0.01</Ixx><Iyy>0.01</Iyy><Izz>0.01</Izz>
      <Ixy>0</Ixy><Ixz>0</Ixz><Iyz>0</Iyz></inertia></physical>
  <parent><num>0</num><location>0 0 0</location></parent>
</link_rigid></links></bodies_system>
"""
X_ONLY = """<trajectories><joint_trajectories>
<linear_spline_trajectory id="x" time_definition="absolute" time_step="0.5"><points>
<point><q>0 0 0</q></point><point time="1"><q>0.7 0 0</q></point>
</points></linear_spline_trajectory></joint_trajectories></trajectories>
"""


def test_caspr_columns_follow_the_mapping_convert_wrote(
        ros_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 26: a SKEL converted from CASPR (DOF order z, x, theta for CASPR's x, z, theta)
    played by the node: q[0] drives x through the ``.q_mapping.yaml`` convert wrote beside
    it; without that file the node refuses to play rather than swap the columns."""
    del ros_env  # main's node joins the test session's isolated domain
    from skel_ros.cli.main import main as skel_ros_main
    from skel_ros.nodes import trajectory_player

    bodies, trajectory = tmp_path / "planar_bodies.xml", tmp_path / "x.xml"
    bodies.write_text(PLANAR_BODIES, encoding="utf-8")
    trajectory.write_text(X_ONLY, encoding="utf-8")
    model = tmp_path / "planar.skel"
    assert skel_ros_main(["convert", str(bodies), "-o", str(model)]) == 0
    ends: list[dict[str, float]] = []

    class Loaded(trajectory_player.TrajectoryPlayer):
        """The real node, which stops once it has read its parameters and files."""

        def __init__(self) -> None:
            super().__init__()
            t = self.trajectory
            ends.append(dict(zip(t.joint_names, t.sample(t.duration)[0].tolist(),
                                 strict=True)))
            self.done = True

    with monkeypatch.context() as patch:
        patch.setattr(trajectory_player, "TrajectoryPlayer", Loaded)
        returncode, output = _player_main(capsys, trajectory_file=str(trajectory),
                                          skel_file=str(model))
    assert returncode == 0, output
    assert ends == [{"platform_x": 0.7, "platform_z": 0.0, "platform_theta": 0.0}]

    (tmp_path / "planar.skel.q_mapping.yaml").unlink()
    returncode, output = _player_main(capsys, trajectory_file=str(trajectory),
                                      skel_file=str(model), wait_for_subscribers="0.0")
    assert returncode == 2, output
    assert "cannot tell which DOF each q column drives: joint 'platform'" in output
