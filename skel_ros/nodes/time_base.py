"""Header stamps <-> the robot core's time, one object for every robot node.

The core runs on its backend's time base (:meth:`skel_ros.core.RobotCore.now`):
simulated time for an engine, a monotonic clock for the hardware. Messages carry ROS
time. A :class:`TimeBase` turns one into the other with an offset, ``stamp = core time +
offset``, asked anew every time (it moves):

* the simulation with ``time_base`` sim: 0, the stamps are simulated time
  (:meth:`TimeBase.core_time`);
* the simulation with ``time_base`` wall: the ROS time the real-time pacer puts at
  simulated time 0, so a state is stamped with the ROS time its step was due
  (:meth:`TimeBase.paced`);
* the hardware: ROS time now minus the backend's clock now, so a read is stamped
  ``ROS now - (clock now - read time)`` (:meth:`TimeBase.clock`).

The command intake reads trajectory header stamps with it (:meth:`TimeBase.to_core`),
the state publishing and the FollowJointTrajectory server stamp with it
(:meth:`TimeBase.stamp`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skel_ros.nodes.names import stamp_from_seconds

if TYPE_CHECKING:
    from collections.abc import Callable

    from builtin_interfaces.msg import Time
    from rclpy.node import Node

    from skel_ros.core import RealTimePacer

__all__ = ["TimeBase"]


def _zero() -> float:
    return 0.0


class TimeBase:
    """Stamp time = core time + ``offset()`` (seconds).

    Args:
        offset: Stamp time minus core time, now (default: 0, stamps in core time).
    """

    def __init__(self, offset: Callable[[], float] = _zero) -> None:
        self.offset = offset

    @classmethod
    def core_time(cls) -> TimeBase:
        """Stamps in the core's own time (a simulation publishing ``/clock``)."""
        return cls()

    @classmethod
    def paced(cls, pacer: RealTimePacer) -> TimeBase:
        """Stamps in the ROS time a real-time pacer schedules simulated time at.

        A step's stamp is the ROS time it was due: never later than the step, and at
        most the pacer's lag bound plus one batch earlier (further behind, the pacer
        re-anchors and the time is lost). Re-anchoring (a pause, a reset, falling
        behind) moves the offset forward, never back.
        """
        return cls(lambda: pacer.wall_at(0.0))

    @classmethod
    def clock(cls, node: Node, core_now: Callable[[], float]) -> TimeBase:
        """Stamps in ``node``'s ROS time; the core's time is the clock ``core_now``."""
        ros_clock = node.get_clock()
        return cls(lambda: ros_clock.now().nanoseconds * 1e-9 - core_now())

    def to_core(self, stamp: float) -> float:
        """The core time of a header stamp (seconds)."""
        return stamp - self.offset()

    def to_stamp(self, core_time: float) -> float:
        """The stamp time (seconds) of a core time."""
        return core_time + self.offset()

    def stamp(self, core_time: float) -> Time:
        """The header stamp of a core time (never before 0)."""
        return stamp_from_seconds(max(self.to_stamp(core_time), 0.0))
