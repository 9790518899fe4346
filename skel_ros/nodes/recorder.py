"""Record topics to MCAP, as ``ros2 bag record -s mcap`` would, from inside a node.

Messages are taken serialized (``raw=True`` subscriptions) and written as CDR with
``ros2msg`` schemas, so Foxglove, ``ros2 bag`` and ``mcap-ros2-support`` open the file.
The schema text is generated from the message class's own introspection data, so no
``.msg`` file (and no ament index) is needed: that works the same on a ROS distro and
with the PyPI wheels. Log times are the recorder's wall clock when a message arrived,
which puts every stream of a run on one clock, whatever the nodes stamped (in a
sim-to-real session they stamp one time base too: ROS time).

QoS, as ``ros2 bag record`` does: each subscription adapts to the publishers seen when it
is made (best effort if any of them is, transient local if all of them are; reliable and
volatile otherwise), and each channel's ``offered_qos_profiles`` metadata (required by
the MCAP ``ros2`` profile) lists those publishers' QoS as YAML, in rosbag2's layout. A
publisher that appears later with an offer the subscription cannot match is warned
about once per topic: its messages are not recorded.

Latched topics (:func:`latched_topic`: ``/tf_static`` and every ``robot_description``)
are subscribed transient local whatever the graph offers, so a recorder that starts
before the robot nodes, or joins them late, gets each node's last message; each distinct
message is recorded once (a node that publishes it again adds nothing). A
``robot_description`` is recorded with its meshes embedded
(:func:`skel_ros.mesh_uris.embedded_mesh_uris`), so a viewer on another machine draws
the robot from the recording alone. :func:`robot_topics` names what a recording needs
for that: each robot's description, ``/tf_static`` and ``/tf``. A recorder asked to
(``drawn_first``) records a robot's ``joint_states`` only from when every link of its
description has a TF path to its root in what was recorded: DDS matches each topic's
endpoints on its own, so without that the first joint states of a run may come before
the transforms that draw them.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from rclpy.node import Node

_SEPARATOR = "=" * 80
_PRIMITIVES = {
    "double": "float64", "float": "float32", "boolean": "bool", "octet": "byte",
    "char": "char", "int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16",
    "int32": "int32", "uint32": "uint32", "int64": "int64", "uint64": "uint64",
    "string": "string", "wstring": "wstring",
}
RECORD_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                        reliability=ReliabilityPolicy.RELIABLE)
LATCHED_RECORD_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=RECORD_QOS.depth,
                                reliability=ReliabilityPolicy.RELIABLE,
                                durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""A latched topic's subscription: every publisher's last message, late or not."""

ROBOT_DESCRIPTION = "robot_description"
"""The last name of a robot's URDF topic (``/sim/robot_description``)."""


def latched_topic(topic: str) -> bool:
    """Whether ``topic`` is latched: ``/tf_static`` or a ``robot_description``."""
    return topic == "/tf_static" or topic.rsplit("/", 1)[-1] == ROBOT_DESCRIPTION


def robot_topics(namespaces: Iterable[str]) -> dict[str, type]:
    """What a viewer needs to draw the robots: topic -> message class.

    ``/<namespace>/robot_description`` of each robot namespace (``""``: the root one),
    ``/tf_static`` and ``/tf``.
    """
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    topics: dict[str, type] = {
        "/".join(("", *filter(None, ns.strip("/").split("/")), ROBOT_DESCRIPTION)): String
        for ns in namespaces}
    topics.update({"/tf_static": TFMessage, "/tf": TFMessage})
    return topics


class _DrawnGate:
    """Whether every link of a robot's URDF has a TF path to its root yet.

    Or to a link that hangs from a moving joint the robot's joint states never carry (a
    hardware node's floating base, which no actuator measures: no transform of it ever
    comes, docs/hardware.md "Honest state"), once a joint state has said which it carries.
    """

    def __init__(self) -> None:
        self.links: tuple[str, ...] | None = None  # None: no description yet
        self.roots: set[str] = set()  # the links that are no joint's child
        self.hung: dict[str, str] = {}  # link -> the moving joint it is the child of
        self.measured: set[str] | None = None  # the joints the states carry (None: unseen)
        self.parents: dict[str, str] = {}  # TF child frame -> parent frame
        self.open = False

    def describe(self, urdf: str) -> None:
        """Take the robot's links from its URDF (one that is not XML opens the gate)."""
        from lxml import etree

        try:
            root = etree.fromstring(urdf.encode(), etree.XMLParser(resolve_entities=False,
                                                                    no_network=True))
        except etree.XMLSyntaxError:
            self.links, self.open = (), True  # nothing to wait for: record as is
            return
        self.links = tuple(str(link.get("name", "")) for link in root.findall("link"))
        children = {str(child.get("link", "")) for child in root.findall("joint/child")}
        self.roots = {name for name in self.links if name not in children}
        self.hung = {str(child.get("link", "")): str(joint.get("name", ""))
                     for joint in root.findall("joint")
                     if joint.get("type") != "fixed" and (child := joint.find("child")) is not None}
        self._check()

    def transforms(self, msg: Any) -> None:  # noqa: ANN401 - tf2_msgs TFMessage
        self.parents.update({t.child_frame_id: t.header.frame_id for t in msg.transforms})
        self._check()

    def states(self, names: Iterable[str]) -> None:
        """Take the joints a joint state (not recorded yet) carries."""
        self.measured = (self.measured or set()) | set(names)
        self._check()

    def _check(self) -> None:
        if self.links is None:
            return
        for link in self.links:
            frame, hops = link, 0
            while frame not in self.roots and frame in self.parents and hops <= len(self.parents):
                frame, hops = self.parents[frame], hops + 1
            if frame not in self.roots and not self._unmeasured(frame):
                return
        self.open = True

    def _unmeasured(self, link: str) -> bool:
        """Whether ``link`` hangs from a moving joint the robot's joint states never carry."""
        joint = self.hung.get(link)
        return joint is not None and self.measured is not None and joint not in self.measured


def _joint_names(data: bytes) -> list[str]:
    """The joint names of a serialized ``sensor_msgs/JointState``."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    return list(deserialize_message(data, JointState).name)


def _embedded_description(data: bytes) -> bytes:
    """A serialized ``std_msgs/String`` URDF with its meshes embedded."""
    from lxml import etree
    from rclpy.serialization import deserialize_message, serialize_message
    from std_msgs.msg import String

    from skel_ros.mesh_uris import embedded_mesh_uris

    urdf = deserialize_message(data, String).data
    try:
        embedded = embedded_mesh_uris(urdf)
    except (etree.XMLSyntaxError, OSError):  # not a URDF, an unreadable mesh: as it came
        return data
    return data if embedded is urdf else serialize_message(String(data=embedded))


def adapted_qos(offers: Sequence[QoSProfile]) -> QoSProfile:
    """The subscription's QoS for these publishers' offers (rosbag2's rule).

    Best effort if any publisher is (a reliable subscription gets nothing from it),
    transient local if every publisher is (late-joiner messages too), else
    :data:`RECORD_QOS`'s reliable and volatile; the history is :data:`RECORD_QOS`'s.
    """
    best_effort = any(q.reliability == ReliabilityPolicy.BEST_EFFORT for q in offers)
    latched = bool(offers) and all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                   for q in offers)
    return QoSProfile(
        history=RECORD_QOS.history, depth=RECORD_QOS.depth,
        reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else RECORD_QOS.reliability,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


def offered_qos_yaml(offers: Sequence[QoSProfile]) -> str:
    """``offered_qos_profiles``: the publishers' QoS as rosbag2 writes them (YAML list)."""
    if not offers:
        return "[]"

    def duration(d: Any) -> list[str]:  # noqa: ANN401 - rclpy Duration
        sec, nsec = divmod(int(d.nanoseconds), 10**9)
        return [f"    sec: {sec}", f"    nsec: {nsec}"]

    lines: list[str] = []
    for q in offers:
        lines += [f"- history: {int(q.history)}", f"  depth: {int(q.depth)}",
                  f"  reliability: {int(q.reliability)}", f"  durability: {int(q.durability)}",
                  "  deadline:", *duration(q.deadline), "  lifespan:", *duration(q.lifespan),
                  f"  liveliness: {int(q.liveliness)}", "  liveliness_lease_duration:",
                  *duration(q.liveliness_lease_duration),
                  "  avoid_ros_namespace_conventions: "
                  + str(bool(q.avoid_ros_namespace_conventions)).lower()]
    return "\n".join(lines)


def _message_class(name: str) -> type:
    pkg, _, typ = name.partition("/")
    return getattr(importlib.import_module(f"{pkg}.msg"), typ)  # type: ignore[no-any-return]


def _field_type(rosidl: str, deps: list[str]) -> str:
    """A rosidl type string (``sequence<double, 3>``) as .msg syntax (``float64[<=3]``)."""
    m = re.fullmatch(r"sequence<(.+?)(?:, (\d+))?>", rosidl)
    if m:
        inner = _field_type(m.group(1), deps)
        return f"{inner}[<={m.group(2)}]" if m.group(2) else f"{inner}[]"
    m = re.fullmatch(r"(.+)\[(\d+)\]", rosidl)
    if m:
        return f"{_field_type(m.group(1), deps)}[{m.group(2)}]"
    m = re.fullmatch(r"(w?string)<(\d+)>", rosidl)
    if m:
        return f"{m.group(1)}<={m.group(2)}"
    if rosidl in _PRIMITIVES:
        return _PRIMITIVES[rosidl]
    if "/" in rosidl:
        deps.append(rosidl)
        return rosidl
    raise ValueError(f"unsupported field type {rosidl!r}")


def _fields_text(cls: type, deps: list[str]) -> str:
    fields: Mapping[str, str] = cls.get_fields_and_field_types()  # type: ignore[attr-defined]
    return "\n".join(f"{_field_type(t, deps)} {name}" for name, t in fields.items())


def message_definition(cls: type) -> tuple[str, str]:
    """Return ``("pkg/msg/Type", ros2msg text with every dependency)`` for a message class."""
    module = cls.__module__.split(".")
    name = f"{module[0]}/msg/{cls.__name__}"
    deps: list[str] = []
    parts = [_fields_text(cls, deps)]
    done: set[str] = set()
    while deps:
        dep = deps.pop(0)
        if dep in done:
            continue
        done.add(dep)
        parts.append(f"{_SEPARATOR}\nMSG: {dep}\n{_fields_text(_message_class(dep), deps)}")
    return name, "\n".join(parts) + "\n"


class McapRecorder:
    """Subscribe to some topics of ``node`` and write every message to an MCAP file.

    Args:
        node: the node to subscribe with.
        path: the MCAP file to write (its directory is created).
        topics: topic -> message class.
        clock: wall-clock nanoseconds for log times (injectable for tests).
        warn: where a publisher the recording cannot receive is said (default: the
            node's logger).
        drawn_first: a robot's ``joint_states`` topic -> its ``robot_description``
            topic (both in ``topics``, with ``/tf_static`` and ``/tf``): that robot's
            joint states are recorded (and counted) only from when every link of its
            description has a TF path to its root in what was recorded.

    Raises:
        ValueError: ``drawn_first`` names a topic that is not recorded.

    Each subscription's QoS adapts to the publishers ``node`` sees now (see the module's
    doc): let the graph be discovered first. Latched topics (:func:`latched_topic`) are
    transient local from the start, each distinct message recorded once.
    """

    def __init__(self, node: Node, path: str | Path, topics: Mapping[str, type], *,
                 clock: Callable[[], int] = time.time_ns,
                 warn: Callable[[str], object] | None = None,
                 drawn_first: Mapping[str, str] | None = None) -> None:
        from mcap.writer import Writer
        from rclpy.event_handler import SubscriptionEventCallbacks

        drawn_first = drawn_first or {}
        needed = {*drawn_first, *drawn_first.values(), *(("/tf", "/tf_static") if drawn_first
                                                          else ())}
        if needed - set(topics):
            raise ValueError(f"drawn_first needs {', '.join(sorted(needed - set(topics)))}"
                             " recorded too")
        self._gates = {state: _DrawnGate() for state in drawn_first}
        self._described = {d: [g for s, g in self._gates.items() if drawn_first[s] == d]
                           for d in set(drawn_first.values())}

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb")
        self._writer = Writer(self._file)
        self._writer.start(profile="ros2", library="skel_ros")
        self._lock = threading.Lock()
        self._clock = clock
        self._closed = False
        self.counts: dict[str, int] = {}
        self._subs: list[Any] = []
        self._warn = warn or node.get_logger().warning
        self._warned: set[str] = set()
        self._seen: dict[str, set[bytes]] = {}  # latched topic -> digests recorded
        schemas: dict[str, int] = {}
        for topic, cls in topics.items():
            name, text = message_definition(cls)
            if name not in schemas:
                schemas[name] = self._writer.register_schema(name, "ros2msg", text.encode())
            offers = [info.qos_profile for info in node.get_publishers_info_by_topic(topic)]
            channel = self._writer.register_channel(
                topic, "cdr", schemas[name],
                metadata={"offered_qos_profiles": offered_qos_yaml(offers)})
            self.counts[topic] = 0
            events = SubscriptionEventCallbacks(incompatible_qos=self._incompatible(topic))
            qos = adapted_qos(offers)
            if latched_topic(topic):
                self._seen[topic] = set()
                qos = LATCHED_RECORD_QOS
            self._subs.append(node.create_subscription(
                cls, topic, self._callback(topic, channel), qos, raw=True,
                event_callbacks=events))

    def _incompatible(self, topic: str) -> Callable[[Any], None]:
        def warn(info: Any) -> None:  # noqa: ANN401 - rclpy's QoSRequestedIncompatibleQoSInfo
            if topic in self._warned:
                return
            self._warned.add(topic)
            policy = getattr(getattr(info, "last_policy_kind", None), "name", "QoS")
            self._warn(f"{topic}: a publisher's QoS does not match the recording's subscription"
                       f" ({policy}, fixed when recording started): its messages are not"
                       " recorded")
        return warn

    def _callback(self, topic: str, channel: int) -> Callable[[bytes], None]:
        seen = self._seen.get(topic)
        description = seen is not None and topic.rsplit("/", 1)[-1] == ROBOT_DESCRIPTION
        gate = self._gates.get(topic)
        described = self._described.get(topic, [])
        gates = list(self._gates.values()) if topic in ("/tf", "/tf_static") else []

        def write(data: bytes) -> None:
            now = self._clock()
            if gate is not None and not gate.open:
                gate.states(_joint_names(data))
                if not gate.open:
                    return
            if any(not g.open for g in gates):
                self._feed(gates, data)
            if described:
                self._describe(described, data)
            if seen is not None:
                digest = hashlib.sha256(data).digest()
                with self._lock:
                    if digest in seen:
                        return
                    seen.add(digest)
                if description:
                    data = _embedded_description(data)
            with self._lock:
                if self._closed:
                    return
                self._writer.add_message(channel, log_time=now, data=data, publish_time=now,
                                         sequence=self.counts[topic])
                self.counts[topic] += 1
        return write

    def _feed(self, gates: Sequence[_DrawnGate], data: bytes) -> None:
        from rclpy.serialization import deserialize_message
        from tf2_msgs.msg import TFMessage

        msg = deserialize_message(data, TFMessage)
        with self._lock:
            for g in gates:
                if not g.open:
                    g.transforms(msg)

    def _describe(self, gates: Sequence[_DrawnGate], data: bytes) -> None:
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String

        urdf = deserialize_message(data, String).data
        with self._lock:
            for g in gates:
                if g.links is None:
                    g.describe(urdf)

    def close(self) -> None:
        """Finish the file (index, summary). Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._writer.finish()  # type: ignore[no-untyped-call]  # mcap is untyped
            self._file.close()


def command_message_class(topic: str, graph_types: Mapping[str, list[str]]) -> type:
    """The message class of a command topic: from the ROS graph, else from its name.

    Commands are ``sensor_msgs/JointState`` or ``trajectory_msgs/JointTrajectory``;
    a topic not (yet) in the graph is taken as a trajectory when its name says so.
    """
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    types = graph_types.get(topic, [])
    if "trajectory_msgs/msg/JointTrajectory" in types:
        return JointTrajectory  # type: ignore[no-any-return]
    if "sensor_msgs/msg/JointState" in types:
        return JointState  # type: ignore[no-any-return]
    return JointTrajectory if "trajectory" in topic.rsplit("/", 1)[-1] else JointState  # type: ignore[no-any-return]


def drawable_states(state_topics: Iterable[str], graph: Mapping[str, Sequence[str]]
                    ) -> dict[str, str]:
    """``drawn_first`` for a live recording: each state topic whose robot can be drawn.

    A ``joint_states`` topic whose namespace publishes a ``robot_description`` in
    ``graph`` (topic -> types) is recorded from when its robot can be drawn; one whose
    namespace has none is recorded from its first message (nothing would ever open its
    gate: its states would all be lost).
    """
    gates = {}
    for state in state_topics:
        description = f"{state.rsplit('/', 1)[0]}/robot_description"
        if "std_msgs/msg/String" in graph.get(description, ()):
            gates[state] = description
    return gates


def record_live(path: str | Path, command_topics: tuple[str, ...], state_topics: tuple[str, ...],
                *, duration: float | None = None, log: Callable[[str], None] = print,
                discovery: float = 1.0) -> dict[str, int]:
    """Record a running graph's commands and joint states to MCAP until Ctrl-C or ``duration``.

    Uses the environment's ROS settings (domain, discovery range) as any ROS tool does.
    The robots are recorded too (:func:`robot_topics`): the ``robot_description`` of the
    namespace of each state topic and every other one in the graph, ``/tf_static`` and
    ``/tf``.

    Args:
        path: the MCAP file to write.
        command_topics: JointState or JointTrajectory topics (type from the graph).
        state_topics: JointState topics (``/sim/joint_states``, ``/real/joint_states``).
        duration: seconds to record; None = until Ctrl-C (SIGINT).
        log: progress lines (counts every 5 s).
        discovery: seconds to look at the graph before subscribing (command types).

    Returns:
        Messages recorded per topic.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    context = rclpy.Context()
    rclpy.init(context=context)
    recorder: McapRecorder | None = None
    try:
        node = rclpy.create_node("skel_ros_recorder", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        end = time.monotonic() + discovery
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        graph = dict(node.get_topic_names_and_types())
        topics: dict[str, type] = {t: command_message_class(t, graph) for t in command_topics}
        topics.update(dict.fromkeys(state_topics, JointState))
        namespaces = {t.rsplit("/", 1)[0] for t in state_topics}
        namespaces.update(t.rsplit("/", 1)[0] for t, types in graph.items()
                          if latched_topic(t) and t != "/tf_static"
                          and types == ["std_msgs/msg/String"])
        topics.update(robot_topics(sorted(namespaces)))
        recorder = McapRecorder(node, path, topics,
                                drawn_first=drawable_states(state_topics, graph))
        log(f"recording {', '.join(topics)} to {path}"
            f" ({f'{duration:g} s' if duration is not None else 'Ctrl-C to stop'})")
        start = time.monotonic()
        next_report = start + 5.0
        try:
            while duration is None or time.monotonic() - start < duration:
                executor.spin_once(timeout_sec=0.05)
                if time.monotonic() >= next_report:
                    next_report += 5.0
                    log("  " + ", ".join(f"{t}: {n}" for t, n in recorder.counts.items()))
        except KeyboardInterrupt:
            log("stopped (Ctrl-C)")
        return dict(recorder.counts)
    finally:
        if recorder is not None:
            recorder.close()
        rclpy.try_shutdown(context=context)
