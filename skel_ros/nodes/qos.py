"""The QoS profiles of the robot nodes' topics, one named constant each.

:data:`LATCHED_QOS` (transient local, reliable, depth 1) for ``/tf_static``,
``robot_description`` and ``~/markers``, so late subscribers get them (they must be
reliable and transient local too); volatile streams otherwise (:data:`TF_QOS`,
:data:`STATE_QOS`, :data:`COMMAND_QOS`, :data:`CLOCK_QOS`).
"""

from __future__ import annotations

from typing import Any

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

__all__ = ["CLOCK_QOS", "COMMAND_QOS", "LATCHED_QOS", "STATE_QOS", "TF_QOS",
           "quiet_publisher_events"]

LATCHED_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
"""``/tf_static``, ``robot_description``, ``~/markers``: late subscribers get the last one."""

TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                    durability=DurabilityPolicy.VOLATILE, reliability=ReliabilityPolicy.RELIABLE)
"""``/tf``: tf2_ros's dynamic broadcaster profile."""

STATE_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                       durability=DurabilityPolicy.VOLATILE,
                       reliability=ReliabilityPolicy.RELIABLE)
"""``joint_states``, ``~/urdf_joint_states``."""

GOALS_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                       durability=DurabilityPolicy.VOLATILE,
                       reliability=ReliabilityPolicy.RELIABLE)
"""``written_goals``: the writes between two reads, published in one burst (a loop at
1 kHz beside joint_states at 10 Hz: 100)."""

COMMAND_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.VOLATILE,
                         reliability=ReliabilityPolicy.RELIABLE)
"""``joint_commands``, ``joint_trajectory`` subscriptions."""

CLOCK_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                       durability=DurabilityPolicy.VOLATILE,
                       reliability=ReliabilityPolicy.RELIABLE)
"""``/clock`` (rclpy's time source subscribes best effort, which a reliable writer serves)."""


def quiet_publisher_events() -> Any:  # noqa: ANN401 - rclpy's PublisherEventCallbacks
    """Event callbacks for a robot node's publishers: none, not rclpy's defaults.

    rclpy gives every publisher default handlers (incompatible QoS; on Kilted also
    incompatible type), and each is one more entity the executor goes through at every
    wake-up: on the hardware node, 14 of its 24. These publishers offer the strongest
    policies of their stream (reliable; transient local where late subscribers need the
    last message), so a subscriber is incompatible with them only by asking for a
    deadline or liveliness, or a different type: its own side says so (every
    subscription keeps rclpy's default handlers, ours included).
    """
    try:
        from rclpy.event_handler import PublisherEventCallbacks
    except ImportError:  # Humble
        from rclpy.qos_event import PublisherEventCallbacks
    return PublisherEventCallbacks(use_default_callbacks=False)
