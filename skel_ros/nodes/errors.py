"""Errors of the ROS nodes.

The tree::

    NodeError
    ├── NodeSetupError       a node cannot start: bad parameter, model or configuration
    └── CommandMessageError  a command message that is rejected whole (unknown joint, NaN, ...)
"""

from __future__ import annotations

__all__ = ["CommandMessageError", "NodeError", "NodeSetupError"]


class NodeError(Exception):
    """Any problem of a skel_ros node."""


class NodeSetupError(NodeError, RuntimeError):
    """The node cannot start; the message says which parameter, file or setting is wrong."""


class CommandMessageError(NodeError, ValueError):
    """A ``joint_commands`` / ``joint_trajectory`` message that is rejected whole.

    Attributes:
        topic: The topic the message came on.
        reason: Why, naming the joint or field.
    """

    def __init__(self, topic: str, reason: str) -> None:
        self.topic = topic
        self.reason = reason
        super().__init__(f"{topic}: {reason}")
