"""What a robot node publishes (skel_ros.nodes.robot_publisher), in this process.

An rclpy node, no second process: published messages are captured where a test needs
their content. Frames are checked against the model's kinematics and, for every URDF
link, against an independent URDF implementation (yourdfpy).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from skel_ros.model import Kinematics, load_skel
from skel_ros.model.transforms import exp_rot, matrix_to_quaternions
from skel_ros.resources import example

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))
SKEL = CORPUS / "data" / "skel"
requires_corpus = pytest.mark.skipif(not SKEL.is_dir(), reason=f"SKEL corpus not found at"
                                     f" {CORPUS} (set SKEL_CORPUS to its path)")


# ----------------------------------------------------------------------------- quaternions


def _rebuild(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], 1)


def test_quaternions_rebuild_every_rotation() -> None:
    rng = np.random.default_rng(1)
    vectors = np.vstack([rng.normal(size=(500, 3)) * 2.0,
                         [[math.pi, 0, 0], [0, math.pi, 0], [0, 0, math.pi], [0, 0, 0]]])
    mats = np.array([exp_rot(w) for w in vectors])
    q = matrix_to_quaternions(mats)
    np.testing.assert_allclose(_rebuild(q), mats, atol=1e-12)
    assert (q[:, 3] >= 0).all()
    # Any leading shape; a 4x4 transform's rotation block.
    t = np.tile(np.eye(4), (2, 3, 1, 1))
    t[..., :3, :3] = mats[:6].reshape(2, 3, 3, 3)
    np.testing.assert_array_equal(matrix_to_quaternions(t), q[:6].reshape(2, 3, 4))


def test_quaternions_equal_the_half_angle_formula_at_every_angle() -> None:
    """(sin(a/2) u, cos(a/2)) for rotations by a about u, from 0 to a half-turn: a few ulps.

    Near a half-turn w is tiny and x, y, z come from the diagonal; near 0 the other way
    round: one formula for all would lose digits at one end.
    """
    rng = np.random.default_rng(2)
    directions = rng.normal(size=(600, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    angles = np.concatenate([rng.uniform(0.0, math.pi, 400), math.pi - np.logspace(-12, -1, 100),
                             np.logspace(-12, -1, 99), [0.0]])
    mats = np.array([exp_rot(u * a) for u, a in zip(directions, angles, strict=True)])
    want = np.column_stack([directions * np.sin(angles / 2)[:, None], np.cos(angles / 2)])
    got = matrix_to_quaternions(mats)
    np.testing.assert_allclose(got, want, rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=0.0, atol=1e-15)
    half = matrix_to_quaternions(np.array([exp_rot(u * math.pi) for u in directions[:50]]))
    np.testing.assert_allclose(np.abs(half[:, :3]), np.abs(directions[:50]), atol=1e-14)
    np.testing.assert_allclose(half[:, 3], 0.0, atol=1e-15)


# ----------------------------------------------------------------------------- publisher


@pytest.fixture(scope="module")
def node(ros_env: dict[str, str]) -> Iterator[Any]:
    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    n = rclpy.create_node("robot_publisher_test", context=context)
    try:
        yield n
    finally:
        n.destroy_node()
        rclpy.shutdown(context=context)


def _world_frames(pub: Any, q: np.ndarray) -> dict[str, np.ndarray]:
    """World transform of every frame, composed from the /tf and /tf_static messages."""
    from skel_ros.nodes.names import stamp_from_seconds

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


@requires_corpus
@pytest.mark.parametrize("name", ["fullbody1.skel", "shapes.skel", "biped.skel", "vehicle.skel"])
def test_frames_equal_our_kinematics_and_the_urdf(node: Any, name: str,
                                                  tmp_path: Path) -> None:
    import yourdfpy

    from skel_ros.nodes.robot_publisher import RobotPublisher

    world = load_skel(SKEL / name)
    pub = RobotPublisher(node, world, frame_prefix="p/")
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
    # The tree is the URDF's, as robot_state_publisher sends it: one transform per URDF
    # joint, parent link -> child link, the moving ones on /tf and the fixed ones on
    # /tf_static (a frame with two parents would flip between them in tf2).
    from skel_ros.nodes.names import stamp_from_seconds

    stamp = stamp_from_seconds(1.0)
    moving = [(t.header.frame_id, t.child_frame_id) for t in pub.transforms(q, stamp)]
    fixed = [(t.header.frame_id, t.child_frame_id)
             for t in pub._static_transforms(stamp).transforms]
    assert sorted(moving) == sorted((j.parent, j.child) for j in urdf.joint_map.values()
                                    if j.type != "fixed")
    assert sorted(fixed) == sorted((j.parent, j.child) for j in urdf.joint_map.values()
                                   if j.type == "fixed")


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


def test_frames_kept_for_unchanged_skeletons_follow_every_change(node: Any) -> None:
    """A skeleton is evaluated again exactly when its positions change (two skeletons).

    The publisher keeps each skeleton's last frames; moving one skeleton, moving the
    other, moving back, and changing the caller's array in place between calls must
    each give what a fresh publisher (nothing kept) gives, float for float.
    """
    from skel_ros.nodes.names import stamp_from_seconds
    from skel_ros.nodes.robot_publisher import RobotPublisher

    world = load_skel(_MIXED_JOINTS, name="mixed.skel")
    kept = RobotPublisher(node, world)
    stamp = stamp_from_seconds(1.0)
    first = world.skeletons[0].num_dofs
    rng = np.random.default_rng(5)
    q = kept.initial_positions + rng.uniform(-1.0, 1.0, kept.initial_positions.size)

    def numbers(transforms: list[Any]) -> list[tuple[float, ...]]:
        return [(t.transform.translation.x, t.transform.translation.y,
                 t.transform.translation.z, t.transform.rotation.x, t.transform.rotation.y,
                 t.transform.rotation.z, t.transform.rotation.w) for t in transforms]

    seen = []
    for change in ([], range(first), range(first, q.size), [], range(q.size), [first - 1]):
        for i in change:
            q[i] += 0.25  # in place: the array handed over last time changes too
        seen.append(numbers(kept.transforms(q, stamp)))
        assert seen[-1] == numbers(RobotPublisher(node, world).transforms(q, stamp))
        assert kept.urdf_joint_values(q) == RobotPublisher(node, world).urdf_joint_values(q)
    assert seen[1] != seen[0]
    assert seen[2] != seen[1]


@pytest.mark.parametrize("spread", [0.5, 3.0])
def test_batched_urdf_values_and_frames_equal_the_model(node: Any, spread: float) -> None:
    """The publisher's array evaluation equals the model's functions, every joint type.

    Ball, free and euler joints (Euler angles), a screw (mimic joint), prismatic and
    revolute joints, two skeletons; a small spread keeps every rotation under the
    w-first quaternion bound, a large one does not.
    """
    from skel_ros.model.urdf import world_joint_values
    from skel_ros.nodes.robot_publisher import RobotPublisher

    world = load_skel(_MIXED_JOINTS, name="mixed.skel")
    pub = RobotPublisher(node, world)
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


@requires_corpus
def test_markers_draw_every_skel_shape(node: Any) -> None:
    from visualization_msgs.msg import Marker

    from skel_ros.model.types import ShapeRole
    from skel_ros.nodes.robot_publisher import RobotPublisher

    world = load_skel(SKEL / "shapes.skel")
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
    from skel_ros.nodes.robot_publisher import RobotPublisher

    pub = RobotPublisher(node, load_skel(example("arm.skel")))
    assert pub.joint_names == ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
    assert pub.frame_names[0] == "base"
    assert pub.world_frame == "world"
    np.testing.assert_array_equal(pub.full_positions(["elbow"], [0.7])[2], 0.7)


def test_frames_are_named_after_bodies_and_dofs_once(node: Any) -> None:
    """Issue 26: /tf child frames were ``robot1/shoulder_yaw__shoulder_yaw__link``.

    Every frame on /tf and /tf_static is a body (its SKEL name) or an intermediate link
    named from one model name: a body's joint frame ``<body>__joint_frame``, or
    ``<dof>__link`` between the motions of a multi-DOF joint; and the frames are exactly
    robot_description's links, so RViz finds each one.
    """
    from lxml import etree

    from skel_ros.nodes.names import stamp_from_seconds
    from skel_ros.nodes.robot_publisher import RobotPublisher

    stamp = stamp_from_seconds(1.0)
    pub = RobotPublisher(node, load_skel(example("arm.skel")), frame_prefix="robot1/")
    moving = {t.child_frame_id: t.header.frame_id
              for t in pub.transforms(pub.initial_positions, stamp)}
    fixed = {t.child_frame_id: t.header.frame_id
             for t in pub._static_transforms(stamp).transforms}
    assert moving == {"robot1/turret__joint_frame": "robot1/base",
                      "robot1/upper_arm__joint_frame": "robot1/turret",
                      "robot1/forearm__joint_frame": "robot1/upper_arm",
                      "robot1/hand__joint_frame": "robot1/forearm"}
    assert fixed == {"robot1/base": "robot1/world",
                     "robot1/turret": "robot1/turret__joint_frame",
                     "robot1/upper_arm": "robot1/upper_arm__joint_frame",
                     "robot1/forearm": "robot1/forearm__joint_frame",
                     "robot1/hand": "robot1/hand__joint_frame"}
    links = {e.get("name") for e in etree.fromstring(pub.urdf.encode()).iter("link")}
    assert links == {"robot1/world", *moving, *fixed}

    # Multi-DOF joints (ball, screw, euler, free) and a closing revolute: one model name
    # per frame, never a joint's name next to its DOF's.
    world = load_skel(_MIXED_JOINTS, name="mixed.skel")
    pub = RobotPublisher(node, world)
    frames = {t.child_frame_id for t in pub.transforms(pub.initial_positions, stamp)}
    frames |= {t.child_frame_id for t in pub._static_transforms(stamp).transforms}
    skel = world.skeletons[0]
    bodies = {f"a/{b.name}" for b in skel.bodies} | {"b/c"}
    assert frames - bodies == {
        "a/root_pos_x__link", "a/root_pos_y__link", "a/root_pos_z__link",
        "a/root_rot_x__link", "a/root_rot_y__link",  # free: 3 translations, 3 rotations
        "a/ball_x__link", "a/ball_y__link", "a/b1__joint_frame",  # ball, joint offset
        "a/scr__link",  # screw: its rotation, then its translation into the body
        "a/eul_z__link", "a/eul_y__link",  # euler zyx
        "a/b5__joint_frame",  # revolute whose frame is not its child's
        "b/j_x__link", "b/j_y__link"}
    for joint in skel.joints:
        assert not any(f"{joint.name}__{joint.name}" in f for f in frames), joint.name


# ----------------------------------------------------------------------------- streams


class Capture:
    """Stands in for a publisher: keeps what is published."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)


@requires_corpus
@pytest.mark.parametrize("name", ["fullbody1.skel", "vehicle.skel", "chain.skel"])
def test_streams_are_rclpy_messages_with_the_model_values(node: Any, name: str) -> None:
    """joint_states, /tf and ~/urdf_joint_states go out as rclpy messages carrying the values.

    No serialized bytes: the middleware serializes the messages itself.
    """
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from skel_ros.nodes.names import stamp_from_seconds
    from skel_ros.nodes.robot_publisher import RobotPublisher

    pub = RobotPublisher(node, load_skel(SKEL / name))
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
        got = js.sent[-1]
        assert isinstance(got, JointState)
        assert got.header.stamp == stamp
        assert got.header.frame_id == ""
        assert list(got.name) == list(pub.joint_names)
        np.testing.assert_array_equal(got.position, q)
        np.testing.assert_array_equal(got.velocity, v)
        np.testing.assert_array_equal(got.effort, e)  # NaN too
        if tf.sent:
            assert isinstance(tf.sent[-1], TFMessage)
            sent = [(t.header.stamp, t.header.frame_id, t.child_frame_id, t.transform)
                    for t in tf.sent[-1].transforms]
            want = [(t.header.stamp, t.header.frame_id, t.child_frame_id, t.transform)
                    for t in pub.transforms(q, stamp)]
            assert sent == want
        if pub._urdf_pub is not None:
            got = urdf.sent[-1]
            assert isinstance(got, JointState)
            values = pub.urdf_joint_values(q)
            assert got.header.stamp == stamp
            assert list(got.name) == list(values)
            np.testing.assert_array_equal(got.position, list(values.values()))
            assert len(got.velocity) == len(got.effort) == 0
    euler = any(j.type.value in ("ball", "free") for s in pub.world.skeletons for j in s.joints)
    assert (pub._urdf_pub is not None) == euler


def test_joint_states_fields_left_empty_stay_empty(node: Any) -> None:
    """An empty field (unknown) is published empty; lists and column vectors are taken."""
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.names import stamp_from_seconds
    from skel_ros.nodes.robot_publisher import RobotPublisher

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
    pub.publish_joint_states([1.0, 2.0, 3.0, 4.0], np.ones((4, 1)), (0, 0, 0, 0), stamp)
    sent = js.sent[-1]
    assert (list(sent.position), list(sent.velocity), list(sent.effort)) == (
        [1.0, 2.0, 3.0, 4.0], [1.0] * 4, [0.0] * 4)


def test_clock_carries_the_stamp(node: Any) -> None:
    from rosgraph_msgs.msg import Clock

    from skel_ros.nodes.names import stamp_from_seconds
    from skel_ros.nodes.robot_publisher import ClockPublisher

    clock = ClockPublisher(node)
    capture = Capture()
    clock._pub = capture  # type: ignore[assignment]
    for seconds in (0.0, 0.001, 2**31 - 1.5):
        clock.publish(stamp_from_seconds(seconds))
        assert isinstance(capture.sent[-1], Clock)
        assert capture.sent[-1].clock == stamp_from_seconds(seconds)


def _moves_with(pub: Any, q: np.ndarray, dof: int) -> set[str]:
    """Frames whose /tf transform changes when DOF ``dof`` does (perturbed two ways)."""
    from skel_ros.nodes.names import stamp_from_seconds

    stamp = stamp_from_seconds(1.0)

    def frames(values: np.ndarray) -> dict[str, Any]:
        return {t.child_frame_id: (t.transform.translation, t.transform.rotation)
                for t in (_copy(m) for m in pub.transforms(values, stamp))}

    base = frames(q)
    moved: set[str] = set()
    for delta in (0.3, -0.7):
        changed = q.copy()
        changed[dof] += delta
        after = frames(changed)
        moved |= {f for f in base if not _same(base[f], after[f])}
    return moved


def _copy(t: Any) -> Any:
    import copy

    return copy.deepcopy(t)


def _same(a: Any, b: Any) -> bool:
    va = [a[0].x, a[0].y, a[0].z, a[1].x, a[1].y, a[1].z, a[1].w]
    vb = [b[0].x, b[0].y, b[0].z, b[1].x, b[1].y, b[1].z, b[1].w]
    return bool(np.allclose(va, vb, rtol=0.0, atol=1e-12))


# DOFs of _MIXED_JOINTS: 0-2 rotation and 3-5 translation of the free root, 6-8 the
# ball, 9 the screw, 10 the prismatic, 11-13 the euler, 14 the revolute joint, and
# 15-17 the second skeleton's ball joint.
@pytest.mark.parametrize("unknown", [[0], [4], [7], [6, 7, 8], [9], [10], [12], [14], [16],
                                     [2, 9, 15]])
def test_measured_leaves_out_what_depends_on_unknown_joints(node: Any,
                                                            unknown: list[int]) -> None:
    """publish_measured: unknown joints out of joint_states, and every /tf transform that
    moves with one of them (bodies and intermediate links) out of /tf; the rest as
    publish_tf would send it. What moves with a DOF is found here by moving it.
    """
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from skel_ros.nodes.names import stamp_from_seconds
    from skel_ros.nodes.robot_publisher import RobotPublisher

    world = load_skel(_MIXED_JOINTS, name="mixed.skel")
    pub = RobotPublisher(node, world)
    n = len(pub.joint_names)
    assert n == 18
    js, tf = Capture(), Capture()
    pub._joint_states_pub, pub._tf_pub = js, tf  # type: ignore[assignment]
    rng = np.random.default_rng(5)
    q = pub.initial_positions + rng.uniform(-0.8, 0.8, n)
    known = np.ones(n, dtype=bool)
    known[unknown] = False
    stamp = stamp_from_seconds(4.0)
    pub.publish_measured(q, np.zeros(n), np.zeros(n), known, stamp)
    (states,) = js.sent
    assert isinstance(states, JointState)
    assert list(states.name) == [pub.joint_names[i] for i in range(n) if known[i]]
    np.testing.assert_array_equal(states.position, q[known])
    stale = set().union(*(_moves_with(pub, q, u) for u in unknown))
    assert stale  # every DOF moves some frame
    (sent,) = tf.sent
    assert isinstance(sent, TFMessage)
    want = {t.child_frame_id: _copy(t) for t in pub.transforms(q, stamp)
            if t.child_frame_id not in stale}
    assert [t.child_frame_id for t in sent.transforms] == list(want)
    for t in sent.transforms:
        w = want[t.child_frame_id]
        assert (t.header.frame_id, t.header.stamp) == (w.header.frame_id, stamp)
        assert _same((t.transform.translation, t.transform.rotation),
                     (w.transform.translation, w.transform.rotation))


def test_measured_with_nothing_known_publishes_nothing(node: Any) -> None:
    from skel_ros.nodes.robot_publisher import RobotPublisher

    pub = RobotPublisher(node, load_skel(_MIXED_JOINTS, name="mixed.skel"))
    js, tf = Capture(), Capture()
    pub._joint_states_pub, pub._tf_pub = js, tf  # type: ignore[assignment]
    n = len(pub.joint_names)
    pub.publish_measured(np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n, dtype=bool))
    assert js.sent == tf.sent == []



def test_publishers_add_no_entity_to_the_executor(node: Any) -> None:
    """Every executor wake-up goes through the node's waitables: rclpy's default QoS event
    handlers of a publisher are two of them (Kilted). The robot publisher's streams carry
    none (docs/hardware.md, "CPU"); a plain publisher shows what the check would see."""
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.robot_publisher import RobotPublisher

    before = len(list(node.waitables))
    node.create_publisher(JointState, "plain_publisher_for_the_check", 10)
    plain = len(list(node.waitables)) - before
    assert plain >= 1  # rclpy's defaults: the check can see them
    before = len(list(node.waitables))
    RobotPublisher(node, load_skel(example("arm.skel")))
    assert len(list(node.waitables)) == before
