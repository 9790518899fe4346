"""Record topics to MCAP, as ``ros2 bag record -s mcap`` would, from inside a node.

Messages are taken serialized (``raw=True`` subscriptions) and written as CDR with
``ros2msg`` schemas, so Foxglove, ``ros2 bag`` and ``mcap-ros2-support`` open the file.
The schema text is generated from the message class's own introspection data, so no
``.msg`` file (and no ament index) is needed: that works the same on a ROS distro and
with the PyPI wheels. Log times are the recorder's wall clock when a message arrived,
which puts every stream of a run on one clock.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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
    """

    def __init__(self, node: Node, path: str | Path, topics: Mapping[str, type],
                 clock: Callable[[], int] = time.time_ns) -> None:
        from mcap.writer import Writer

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
        schemas: dict[str, int] = {}
        for topic, cls in topics.items():
            name, text = message_definition(cls)
            if name not in schemas:
                schemas[name] = self._writer.register_schema(name, "ros2msg", text.encode())
            channel = self._writer.register_channel(topic, "cdr", schemas[name])
            self.counts[topic] = 0
            self._subs.append(node.create_subscription(
                cls, topic, self._callback(topic, channel), RECORD_QOS, raw=True))

    def _callback(self, topic: str, channel: int) -> Callable[[bytes], None]:
        def write(data: bytes) -> None:
            now = self._clock()
            with self._lock:
                if self._closed:
                    return
                self._writer.add_message(channel, log_time=now, data=data, publish_time=now,
                                         sequence=self.counts[topic])
                self.counts[topic] += 1
        return write

    def close(self) -> None:
        """Finish the file (index, summary). Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._writer.finish()
            self._file.close()
