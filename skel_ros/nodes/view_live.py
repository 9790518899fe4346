"""The live view's subscriber: each robot's ``joint_states`` and ``robot_description``.

A node like any other subscriber (it never slows the robots' nodes): per namespace it
subscribes to ``/<ns>/joint_states`` (volatile, as published) and
``/<ns>/robot_description`` (transient local, so the description published before the
view started comes too), and hands each message to
:class:`skel_ros.view.live.LiveView`. A description the view cannot read is logged
each time it comes and the robot stays undrawn.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from skel_ros.nodes.qos import LATCHED_QOS, STATE_QOS
from skel_ros.view.errors import ViewError

if TYPE_CHECKING:
    from collections.abc import Callable

    from rclpy.context import Context

    from skel_ros.view.live import LiveView

__all__ = ["ViewLiveNode", "namespace_topic", "run_live_view"]


def namespace_topic(namespace: str, name: str) -> str:
    """``/<namespace>/<name>`` (``/<name>`` for the root namespace ``""`` or ``"/"``)."""
    ns = namespace.strip("/")
    return f"/{ns}/{name}" if ns else f"/{name}"


class ViewLiveNode(Node):
    """Subscribes to every namespace of ``view`` and feeds it.

    Args:
        view: The live view.
        context: The rclpy context (default: the global one).
    """

    def __init__(self, view: LiveView, *, context: Context | None = None) -> None:
        super().__init__(f"skel_ros_view_{os.getpid()}", context=context)
        self._view = view
        for ns in view.namespaces:
            self.create_subscription(
                JointState, namespace_topic(ns, "joint_states"),
                lambda msg, ns=ns: self._view.on_joint_state(ns, msg.name, msg.position),
                STATE_QOS)
            self.create_subscription(
                String, namespace_topic(ns, "robot_description"),
                lambda msg, ns=ns: self._on_description(ns, msg.data), LATCHED_QOS)

    def _on_description(self, namespace: str, urdf: str) -> None:
        try:
            self._view.on_description(namespace, urdf)
        except ViewError as exc:
            self.get_logger().error(f"robot {namespace!r} not drawn: {exc}")
        else:
            self.get_logger().info(f"drawing robot {namespace!r}")


def run_live_view(view: LiveView, ready: Callable[[], None] = lambda: None) -> None:
    """Spin the subscriber until Ctrl-C (the node process's usual start and stop).

    Args:
        view: The live view.
        ready: Called once the node exists (Ctrl-C stops it cleanly from then on).
    """
    from skel_ros.nodes.shutdown import run_node

    def make() -> ViewLiveNode:
        node = ViewLiveNode(view)
        ready()
        return node

    run_node("skel-ros view", make, args=[])
