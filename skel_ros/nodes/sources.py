"""Who sent a command message: the ROS side of the core's :class:`~skel_ros.core.commanders.Source`.

The robot core tells commanders apart by the :class:`~skel_ros.core.commanders.Source`
each command names (:mod:`skel_ros.core.commanders`). Here a command subscription finds
it for each message:

* **rclpy that says which publisher sent a message** (Kilted on: the subscription
  callback may take the message's ``MessageInfo``, whose ``publisher_gid`` names the
  publisher): the publisher is looked up in the ROS graph
  (``Node.get_publishers_info_by_topic``, once per publisher, cached) to name it by its
  node, ``joint_commands (/teleop)``. The commander is the publisher (its GID): a
  publisher the graph does not show yet is named by its GID
  (``joint_commands (publisher 010f78fd6039)``) and looked up again a second later, and
  stays the same commander when its node's name is found.
* **Humble and Jazzy**: their rclpy gives a subscription callback no publisher identity
  at all (Humble passes no ``MessageInfo``; Jazzy's has no ``publisher_gid``), and the
  ROS graph lists the publishers of a topic without saying which one sent a message. The
  source is then the topic alone (``joint_commands``): commands from two publishers of
  one topic look like one commander's, and only sources on different channels (topic
  against topic, a topic against the FollowJointTrajectory action) are told apart.

The feature is detected, not assumed: :data:`PUBLISHER_IDENTITY` is true where rclpy's
``MessageInfo`` declares ``publisher_gid``; elsewhere the callback takes the message only,
as every rclpy calls it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import rclpy.subscription

from skel_ros.core.commanders import Source

if TYPE_CHECKING:
    from collections.abc import Callable

    from rclpy.node import Node
    from rclpy.qos import QoSProfile

__all__ = ["PUBLISHER_IDENTITY", "PublisherSources", "subscribe_with_source"]

PUBLISHER_IDENTITY: bool = "publisher_gid" in getattr(
    getattr(rclpy.subscription, "MessageInfo", None), "__annotations__", {})
"""Whether this rclpy tells a subscription callback which publisher sent the message."""

_RETRY = 1.0  # s before a publisher the graph did not show is looked up again


def _gid(raw: Any) -> bytes:  # noqa: ANN401 - a MessageInfo's or an endpoint's GID
    """A GID as bytes without its zero padding (storage sizes differ between rmw versions)."""
    data = raw.get("data", b"") if isinstance(raw, dict) else raw
    return bytes(data).rstrip(b"\0")


class PublisherSources:
    """The :class:`~skel_ros.core.commanders.Source` of each message on one topic.

    Args:
        node: The subscribing node (its graph view names the publishers).
        topic: The topic, as subscribed (relative names are the node's).
        channel: The channel the sources name (default: ``topic``).
        identify: Look publishers up (default: :data:`PUBLISHER_IDENTITY`); False: every
            message is the topic's.
    """

    def __init__(self, node: Node, topic: str, channel: str | None = None, *,
                 identify: bool = PUBLISHER_IDENTITY) -> None:
        self._node = node
        self._topic = topic
        self.channel = channel or topic
        self.identify = identify
        self.anonymous = Source(self.channel, key=("topic", self.channel))
        """The source of a message whose publisher is not known."""
        self._known: dict[bytes, tuple[Source, float]] = {}  # GID -> source, retry time

    def source(self, info: Any = None) -> Source:  # noqa: ANN401 - rclpy's MessageInfo
        """The source of a message with ``info`` (None: not known)."""
        if info is None:
            return self.anonymous
        gid = _gid(info.get("publisher_gid") or b"")
        if not gid:
            return self.anonymous
        known = self._known.get(gid)
        if known is not None and known[1] <= time.monotonic():
            known = None  # named by its GID until the graph shows it: look again
        if known is None:
            known = self._look_up(gid)
            self._known[gid] = known
        return known[0]

    def _look_up(self, gid: bytes) -> tuple[Source, float]:
        try:
            endpoints = self._node.get_publishers_info_by_topic(self._topic)
        except Exception:  # noqa: BLE001 - the graph is a nicety; the GID still names it
            endpoints = []
        for endpoint in endpoints:
            if _gid(endpoint.endpoint_gid) == gid:
                namespace = endpoint.node_namespace.rstrip("/")
                name = f"{namespace}/{endpoint.node_name}"
                # One key per publisher, whatever its name: the name found later must not
                # make a publisher a second commander (it refused its own stream).
                return Source(self.channel, name, key=("gid", gid)), float("inf")
        return (Source(self.channel, f"publisher {gid.hex()[:12]}", key=("gid", gid)),
                time.monotonic() + _RETRY)


def subscribe_with_source(node: Node, msg_type: Any, topic: str,  # noqa: ANN401 - a message type
                          callback: Callable[[Any, Source], None], qos: QoSProfile, *,
                          sources: PublisherSources | None = None) -> PublisherSources:
    """Subscribe ``callback(message, source)`` to ``topic``.

    Returns:
        The topic's :class:`PublisherSources` (``sources`` when given).
    """
    sources = sources or PublisherSources(node, topic)
    if sources.identify:
        def with_info(msg: Any, info: Any) -> None:  # noqa: ANN401 - rclpy's types
            callback(msg, sources.source(info))
        node.create_subscription(msg_type, topic, with_info, qos)
    else:
        anonymous = sources.anonymous

        def without_info(msg: Any) -> None:  # noqa: ANN401 - a message
            callback(msg, anonymous)
        node.create_subscription(msg_type, topic, without_info, qos)
    return sources
