"""robot_io and the sim node's pacing, in this process (rclpy node, no second process)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from skel_ros.model import Kinematics, load_skel
from skel_ros.model.transforms import exp_rot
from skel_ros.resources import example

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

CORPUS = Path("/work/shared/skel-corpus/data/skel")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# ----------------------------------------------------------------------------- pacing


def test_pacer_follows_wall_time_times_the_factor_without_drift() -> None:
    from skel_ros.nodes.sim_node import RealTimePacer

    clock = FakeClock()
    pacer = RealTimePacer(2.0, clock=clock)
    pacer.anchor(0.0)
    sim, dt = 0.0, 0.001
    assert pacer.due(sim, dt) == 0
    assert pacer.wait(sim, dt) == pytest.approx(0.0005)
    # Wake up late, many times, by odd amounts: the schedule never slips.
    for _ in range(1000):
        clock.now += 0.0013
        n = pacer.due(sim, dt)
        sim += n * dt
    assert sim == pytest.approx(2.0 * 1.3, abs=dt)


def test_pacer_reanchors_when_the_world_is_too_slow_and_runs_flat_out_at_zero() -> None:
    from skel_ros.nodes.sim_node import RealTimePacer

    clock = FakeClock()
    pacer = RealTimePacer(1.0, clock=clock, max_lag=0.25)
    pacer.anchor(0.0)
    clock.now += 1.0  # a second behind schedule
    assert pacer.due(0.0, 0.001) == 1
    assert pacer.lagging
    clock.now += 0.01
    assert pacer.due(0.001, 0.001) == 9  # from the new anchor, not 1000 to catch up
    assert not pacer.lagging
    pacer.anchor(0.0, factor=0.0)
    assert pacer.due(0.0, 0.001) > 10**6
    assert pacer.wait(0.0, 0.001) == 0.0


def test_parameter_checks() -> None:
    from skel_ros.nodes.sim_node import check_parameter

    assert check_parameter("real_time_factor", 3) == (3.0, "")
    assert check_parameter("real_time_factor", 0.0) == (0.0, "")
    assert "must be in [0, 1000]" in check_parameter("real_time_factor", math.inf)[1]
    assert "must be a number" in check_parameter("tf_rate", True)[1]
    assert "(0, 10000] Hz" in check_parameter("joint_states_rate", 20000.0)[1]
    assert "finite and >= 0" in check_parameter("command_timeout", -0.5)[1]
    assert "must be a bool" in check_parameter("paused", "yes")[1]


def test_throttle_keys_on_the_problem_and_counts_what_it_hid() -> None:
    from skel_ros.nodes.robot_io import Throttle

    lines: list[str] = []
    clock = FakeClock()
    warn = Throttle(lines.append, period=1.0, clock=clock)
    assert warn("unknown joint 'a'")
    assert not warn("unknown joint 'a'")
    assert not warn("unknown joint 'a'")
    assert warn("NaN in 'b'")  # another problem is not hidden by the first
    clock.now += 1.5
    assert warn("unknown joint 'a'")
    assert lines == ["unknown joint 'a'", "NaN in 'b'",
                     "unknown joint 'a' (2 more like this suppressed)"]


# ----------------------------------------------------------------------------- parsing


KNOWN = {"elbow": 0, "wrist": 1}


def test_joint_command_is_checked_and_converted() -> None:
    from sensor_msgs.msg import JointState

    from skel_ros.model.limits import CommandKind
    from skel_ros.nodes.robot_io import parse_joint_command

    cmd = parse_joint_command(JointState(name=["wrist"], effort=[0.5]), KNOWN)
    assert cmd.kind is CommandKind.EFFORT
    assert cmd.names == ("wrist",)
    np.testing.assert_array_equal(cmd.values, [0.5])


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"name": ["elbow"], "position": [1.0, 2.0]}, "1 names but 2 position values"),
        ({"name": ["elbo"], "position": [1.0]}, "unknown joint 'elbo'; did you mean 'elbow'?"),
        ({"name": ["x"], "position": [1.0]}, "unknown joint 'x'; the joints are 'elbow', 'wrist'"),
        ({"name": ["elbow", "elbow"], "position": [1.0, 1.0]}, "appears twice"),
        ({"name": ["elbow"], "velocity": [-math.inf]}, "velocity of joint 'elbow' is -inf"),
        ({"name": ["elbow"]}, "fill exactly one of position, velocity, effort (filled: none)"),
        ({"name": [], "position": []}, "no joint names"),
        ({"name": [""], "position": [1.0]}, "name[0] is '', not a joint name"),
    ],
)
def test_bad_joint_commands_are_rejected(fields: dict[str, Any], problem: str) -> None:
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.errors import CommandMessageError
    from skel_ros.nodes.robot_io import parse_joint_command

    with pytest.raises(CommandMessageError) as info:
        parse_joint_command(JointState(**fields), KNOWN)
    assert problem in str(info.value)
    assert str(info.value).startswith("joint_commands: ")


def test_joint_trajectory_starts_where_the_joints_are() -> None:
    from builtin_interfaces.msg import Duration, Time
    from std_msgs.msg import Header
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from skel_ros.nodes.robot_io import parse_joint_trajectory

    msg = JointTrajectory(joint_names=["wrist"], points=[JointTrajectoryPoint(
        positions=[1.0], time_from_start=Duration(sec=2))])
    cmd = parse_joint_trajectory(msg, KNOWN, lambda names: [0.25] * len(names))
    assert cmd.start is None  # zero stamp: on receipt
    assert cmd.trajectory is not None
    assert cmd.trajectory.sample(0.0)[0][0] == pytest.approx(0.25)
    assert cmd.trajectory.sample(2.0)[0][0] == pytest.approx(1.0)
    msg.header = Header(stamp=Time(sec=3, nanosec=500_000_000))
    assert parse_joint_trajectory(msg, KNOWN, lambda _: [0.0]).start == pytest.approx(3.5)
    stop = parse_joint_trajectory(JointTrajectory(), KNOWN, lambda _: [])
    assert stop.trajectory is None


def test_quaternions_rebuild_every_rotation() -> None:
    from skel_ros.nodes.robot_io import _quaternions

    rng = np.random.default_rng(1)
    vectors = np.vstack([rng.normal(size=(500, 3)) * 2.0,
                         [[math.pi, 0, 0], [0, math.pi, 0], [0, 0, math.pi], [0, 0, 0]]])
    mats = np.array([exp_rot(w) for w in vectors])
    q = _quaternions(mats)
    x, y, z, w = q.T
    rebuilt = np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], 1)
    np.testing.assert_allclose(rebuilt, mats, atol=1e-12)
    assert (w >= 0).all()


def test_quaternions_of_moderate_rotations_take_the_short_formulas_and_agree() -> None:
    from skel_ros.nodes.robot_io import _quaternions

    rng = np.random.default_rng(2)
    directions = rng.normal(size=(400, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    # Up to 2.4 rad (1 + trace > 0.5 for all: the w-first formulas), and exactly 0.
    vectors = np.vstack([directions * rng.uniform(0.0, 2.4, (400, 1)), np.zeros((1, 3))])
    mats = np.array([exp_rot(w) for w in vectors])
    short = _quaternions(mats)
    # The same rotations with one half-turn added go through Shepperd's method.
    half_turn = exp_rot(np.array([0.0, 0.0, math.pi]))[None]
    shepperd = _quaternions(np.concatenate([mats, half_turn]))[:-1]
    np.testing.assert_allclose(short, shepperd, rtol=0.0, atol=1e-14)  # a few ulps
    assert (short[:, 3] > 0.0).all()
    np.testing.assert_allclose(np.linalg.norm(short, axis=1), 1.0, rtol=0.0, atol=1e-14)


# ----------------------------------------------------------------------------- publisher


@pytest.fixture(scope="module")
def node(ros_env: dict[str, str]) -> Iterator[Any]:
    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    n = rclpy.create_node("robot_io_test", context=context)
    try:
        yield n
    finally:
        n.destroy_node()
        rclpy.shutdown(context=context)


def _world_frames(pub: Any, q: np.ndarray) -> dict[str, np.ndarray]:
    """World transform of every frame, composed from the /tf and /tf_static messages."""
    from skel_ros.nodes.robot_io import stamp_from_seconds

    stamp = stamp_from_seconds(1.0)
    edges = {}
    for t in [*pub.transforms(q, stamp), *pub._static_transforms(stamp).transforms]:
        r, p = t.transform.rotation, t.transform.translation
        m = np.eye(4)
        m[:3, :3] = exp_rot(_rotvec(r.x, r.y, r.z, r.w))
        m[:3, 3] = [p.x, p.y, p.z]
        edges[t.child_frame_id] = (t.header.frame_id, m)
    out = {}
    for frame in edges:
        m, f = np.eye(4), frame
        while f != pub.world_frame:
            parent, local = edges[f]
            m, f = local @ m, parent
        out[frame] = m
    return out


def _rotvec(x: float, y: float, z: float, w: float) -> np.ndarray:
    v = np.array([x, y, z])
    s = np.linalg.norm(v)
    return v if s == 0 else v / s * 2.0 * math.atan2(s, w)


@pytest.mark.parametrize("name", ["fullbody1.skel", "shapes.skel", "biped.skel", "vehicle.skel"])
def test_frames_equal_our_kinematics_and_the_urdf(node: Any, name: str,
                                                  tmp_path: Path) -> None:
    import yourdfpy

    from skel_ros.nodes.robot_io import RobotPublisher

    world = load_skel(CORPUS / name)
    pub = RobotPublisher(node, world, frame_prefix="p/")
    assert pub.solver_exact
    rng = np.random.default_rng(7)
    q = pub.initial_positions + rng.uniform(-0.8, 0.8, pub.initial_positions.size)
    frames = _world_frames(pub, q)
    start = 0
    for skel in world.skeletons:
        expected = Kinematics(skel).body_transforms(q[start:start + skel.num_dofs])
        ns = f"{skel.name}/" if len([s for s in world.skeletons if s.bodies]) > 1 else ""
        for body, want in zip(skel.bodies, expected, strict=True):
            np.testing.assert_allclose(frames[f"p/{ns}{body.name}"], want, atol=1e-9)
        start += skel.num_dofs
    # Every URDF link, intermediate ones too, where URDF forward kinematics puts it.
    path = tmp_path / "robot.urdf"
    path.write_text(pub.urdf, encoding="utf-8")
    urdf = yourdfpy.URDF.load(str(path), load_meshes=False, build_collision_scene_graph=False,
                              load_collision_meshes=False)
    urdf.update_cfg({k: v for k, v in pub.urdf_joint_values(q).items()
                     if k in urdf.actuated_joint_names})
    assert set(frames) == set(urdf.link_map) - {"p/world"}
    for link, got in frames.items():
        np.testing.assert_allclose(got, urdf.get_transform(link, "p/world"), atol=1e-9,
                                   err_msg=link)


_MIXED_JOINTS = (
    '<skel version="1.0"><world name="w"><physics><time_step>0.001</time_step>'
    "<gravity>0 0 -9.81</gravity></physics>"
    '<skeleton name="a">'
    + "".join(f'<body name="{b}"><transformation>0 0 {0.1 * k} 0.1 0 0.2</transformation>'
              "<inertia><mass>1</mass></inertia></body>"
              for k, b in enumerate(["base", "b1", "b2", "b3", "b4", "b5"]))
    + '<joint type="free" name="root"><parent>world</parent><child>base</child></joint>'
    '<joint type="ball" name="ball"><transformation>0 0 0.05 0.3 0 0</transformation>'
    "<parent>base</parent><child>b1</child></joint>"
    '<joint type="screw" name="scr"><parent>b1</parent><child>b2</child>'
    "<axis><xyz>0 0 1</xyz><pitch>0.25</pitch></axis></joint>"
    '<joint type="prismatic" name="pri"><parent>b2</parent><child>b3</child>'
    "<axis><xyz>1 0 1</xyz></axis></joint>"
    '<joint type="euler" name="eul"><parent>b3</parent><child>b4</child>'
    "<axis_order>zyx</axis_order></joint>"
    '<joint type="revolute" name="rev"><transformation>0 0 0 0.3 0 0</transformation>'
    "<parent>b4</parent><child>b5</child><axis><xyz>0 1 0</xyz></axis></joint>"
    '</skeleton><skeleton name="b"><body name="c"><inertia><mass>1</mass></inertia></body>'
    '<joint type="ball" name="j"><parent>world</parent><child>c</child></joint>'
    "</skeleton></world></skel>"
)


@pytest.mark.parametrize("spread", [0.5, 3.0])
def test_batched_urdf_values_and_frames_equal_the_model(node: Any, spread: float) -> None:
    """The publisher's array evaluation equals the model's functions, every joint type.

    Ball, free and euler joints (Euler angles), a screw (mimic joint), prismatic and
    revolute joints, two skeletons; a small spread keeps every rotation under the
    w-first quaternion bound, a large one does not.
    """
    from skel_ros.model.urdf import world_joint_values
    from skel_ros.nodes.robot_io import RobotPublisher

    world = load_skel(_MIXED_JOINTS, name="mixed.skel")
    pub = RobotPublisher(node, world)
    assert pub.solver_exact
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = pub.initial_positions + rng.uniform(-spread, spread, pub.initial_positions.size)
        split: dict[str, np.ndarray] = {}
        start = 0
        for skel in world.skeletons:
            split[skel.name] = q[start:start + skel.num_dofs]
            start += skel.num_dofs
        expected = world_joint_values(world, split)
        got = pub.urdf_joint_values(q)
        assert list(got) == list(expected)
        assert got == expected  # the same floats, not merely close
        frames = _world_frames(pub, q)
        start = 0
        for skel in world.skeletons:
            want = Kinematics(skel).body_transforms(q[start:start + skel.num_dofs])
            for body, transform in zip(skel.bodies, want, strict=True):
                np.testing.assert_allclose(frames[f"{skel.name}/{body.name}"], transform,
                                           atol=1e-9, err_msg=body.name)
            start += skel.num_dofs


def test_markers_draw_every_skel_shape(node: Any) -> None:
    from visualization_msgs.msg import Marker

    from skel_ros.model.types import ShapeRole
    from skel_ros.nodes.robot_io import RobotPublisher

    world = load_skel(CORPUS / "shapes.skel")
    pub = RobotPublisher(node, world, collision_markers=True)
    per_kind = {"sphere": [Marker.SPHERE], "box": [Marker.CUBE], "ellipsoid": [Marker.SPHERE],
                "cylinder": [Marker.CYLINDER], "plane": [Marker.CUBE],
                "capsule": [Marker.CYLINDER, Marker.SPHERE, Marker.SPHERE],
                "cone": [Marker.TRIANGLE_LIST], "pyramid": [Marker.TRIANGLE_LIST],
                "mesh": [Marker.MESH_RESOURCE]}
    expected: dict[str, list[int]] = {"visual": [], "collision": []}
    for skel in world.skeletons:
        for body in skel.bodies:
            for shape in body.shapes:
                kind = shape.geometry.kind
                types = per_kind.get(kind, [Marker.SPHERE] * len(
                    getattr(shape.geometry, "spheres", ())))
                expected[shape.role.value] += types
    for ns in ("visual", "collision"):
        got = [m.type for m in pub.markers.markers if m.ns == ns]
        assert sorted(got) == sorted(expected[ns])
        assert [m.id for m in pub.markers.markers if m.ns == ns] == list(range(len(got)))
    assert all(m.frame_locked and m.header.frame_id for m in pub.markers.markers)
    # An ellipsoid is a sphere scaled to its diameters; colours are the SKEL's.
    for skel in world.skeletons:
        for body in skel.bodies:
            for shape in body.shapes:
                if shape.geometry.kind == "ellipsoid" and shape.role is ShapeRole.VISUAL:
                    m = next(m for m in pub.markers.markers if m.ns == "visual"
                             and m.header.frame_id.endswith(body.name) and m.type == Marker.SPHERE)
                    np.testing.assert_allclose([m.scale.x, m.scale.y, m.scale.z],
                                               shape.geometry.size)


def test_one_skeleton_keeps_plain_names(node: Any) -> None:
    from skel_ros.nodes.robot_io import RobotPublisher

    pub = RobotPublisher(node, load_skel(example("arm.skel")))
    assert pub.joint_names == ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
    assert pub.frame_names[0] == "base"
    assert pub.world_frame == "world"
    np.testing.assert_array_equal(pub.full_positions(["elbow"], [0.7])[2], 0.7)


# ----------------------------------------------------------------------------- wire format


class Capture:
    """Stands in for a publisher: keeps what is published."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)


def _received(sent: Any, msg_type: Any) -> Any:
    """What a subscriber gets: serialized bytes read back by the middleware, or the message."""
    from rclpy.serialization import deserialize_message

    return deserialize_message(sent, msg_type) if isinstance(sent, bytes) else sent


@pytest.mark.parametrize("name", ["fullbody1.skel", "vehicle.skel", "chain.skel"])
def test_serialized_streams_carry_what_the_messages_would(node: Any, name: str) -> None:
    """joint_states, /tf and ~/urdf_joint_states go out as bytes that read back as the messages."""
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from skel_ros.nodes.robot_io import RobotPublisher, stamp_from_seconds

    pub = RobotPublisher(node, load_skel(CORPUS / name))
    assert pub.serialized  # this middleware reads the templates back
    js, tf, urdf = Capture(), Capture(), Capture()
    pub._joint_states_pub, pub._tf_pub = js, tf  # type: ignore[assignment]
    if pub._urdf_pub is not None:
        pub._urdf_pub = urdf  # type: ignore[assignment]
    rng = np.random.default_rng(3)
    n = len(pub.joint_names)
    for seconds in (0.0, 1.001, 12345.678901234):
        stamp = stamp_from_seconds(seconds)
        q = pub.initial_positions + rng.uniform(-0.8, 0.8, n)
        v, e = rng.normal(size=n), np.append(rng.normal(size=n - 1), np.nan)
        pub.publish_joint_states(q, v, e, stamp)
        pub.publish_kinematics(q, stamp)
        assert isinstance(js.sent[-1], bytes)
        got = _received(js.sent[-1], JointState)
        assert got.header.stamp == stamp
        assert got.header.frame_id == ""
        assert list(got.name) == list(pub.joint_names)
        np.testing.assert_array_equal(got.position, q)
        np.testing.assert_array_equal(got.velocity, v)
        np.testing.assert_array_equal(got.effort, e)  # NaN too
        if pub._tf.transforms:
            assert isinstance(tf.sent[-1], bytes)
            assert _received(tf.sent[-1], TFMessage).transforms == pub.transforms(q, stamp)
        if pub._urdf_pub is not None:
            got = _received(urdf.sent[-1], JointState)
            values = pub.urdf_joint_values(q)
            assert got.header.stamp == stamp
            assert list(got.name) == list(values)
            np.testing.assert_array_equal(got.position, list(values.values()))
            assert len(got.velocity) == len(got.effort) == 0


def test_joint_states_with_unknown_fields_go_out_as_a_message(node: Any) -> None:
    """An empty field (unknown) or one of another length: the message, as before."""
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.robot_io import RobotPublisher, stamp_from_seconds

    pub = RobotPublisher(node, load_skel(example("arm.skel")))
    js = Capture()
    pub._joint_states_pub = js  # type: ignore[assignment]
    stamp = stamp_from_seconds(2.5)
    pub.publish_joint_states([0.1, 0.2, 0.3, 0.4], [], np.zeros(4), stamp)
    sent = js.sent[-1]
    assert isinstance(sent, JointState)
    assert (list(sent.position), list(sent.velocity), list(sent.effort)) == (
        [0.1, 0.2, 0.3, 0.4], [], [0.0] * 4)
    assert sent.header.stamp == stamp
    # Lists and column vectors are fine for the serialized path.
    pub.publish_joint_states([1.0, 2.0, 3.0, 4.0], np.ones((4, 1)), (0, 0, 0, 0), stamp)
    got = _received(js.sent[-1], JointState)
    assert isinstance(js.sent[-1], bytes)
    assert (list(got.position), list(got.velocity), list(got.effort)) == (
        [1.0, 2.0, 3.0, 4.0], [1.0] * 4, [0.0] * 4)


def test_clock_goes_out_serialized(node: Any) -> None:
    from rosgraph_msgs.msg import Clock

    from skel_ros.nodes.robot_io import ClockPublisher, stamp_from_seconds

    clock = ClockPublisher(node)
    assert clock.serialized
    capture = Capture()
    clock._pub = capture  # type: ignore[assignment]
    for seconds in (0.0, 0.001, 2**31 - 1.5):
        clock.publish(stamp_from_seconds(seconds))
        assert _received(capture.sent[-1], Clock).clock == stamp_from_seconds(seconds)


def test_templates_that_do_not_read_back_are_not_used(node: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A middleware with another wire format: messages are published (and it is said)."""
    from sensor_msgs.msg import JointState

    from skel_ros.nodes import robot_io
    from skel_ros.nodes.robot_io import ClockPublisher, RobotPublisher, stamp_from_seconds

    monkeypatch.setattr(robot_io, "_CDR_LE", b"\x00\x00\x00\x00")  # says big-endian
    pub = RobotPublisher(node, load_skel(CORPUS / "fullbody1.skel"))
    assert not pub.serialized
    assert pub._tf_wire is None
    assert pub._urdf_wire is None
    assert not ClockPublisher(node).serialized
    js = Capture()
    pub._joint_states_pub = js  # type: ignore[assignment]
    q = pub.initial_positions
    pub.publish_joint_states(q, q, q, stamp_from_seconds(1.0))
    assert isinstance(js.sent[-1], JointState)
    np.testing.assert_array_equal(js.sent[-1].position, q)
