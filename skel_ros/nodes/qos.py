"""The QoS profiles of the robot nodes' topics, one named constant each.

:data:`LATCHED_QOS` (transient local, reliable, depth 1) for ``/tf_static``,
``robot_description`` and ``~/markers``, so late subscribers get them (they must be
reliable and transient local too); volatile streams otherwise (:data:`TF_QOS`,
:data:`STATE_QOS`, :data:`COMMAND_QOS`, :data:`CLOCK_QOS`).
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

__all__ = ["CLOCK_QOS", "COMMAND_QOS", "LATCHED_QOS", "STATE_QOS", "TF_QOS"]

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

COMMAND_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.VOLATILE,
                         reliability=ReliabilityPolicy.RELIABLE)
"""``joint_commands``, ``joint_trajectory`` subscriptions."""

CLOCK_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                       durability=DurabilityPolicy.VOLATILE,
                       reliability=ReliabilityPolicy.RELIABLE)
"""``/clock`` (rclpy's time source subscribes best effort, which a reliable writer serves)."""
