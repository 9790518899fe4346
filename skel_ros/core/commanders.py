"""Who commands the robot: one commander per joint at a time, as ros2_control's claims.

ros2_control lets one controller claim a joint; a second controller that wants it is
refused until the first lets go. A robot node has no controllers to switch, only
sources: the publishers of ``joint_commands`` and ``joint_trajectory``, the
FollowJointTrajectory action's goals, a script calling the core. :class:`Commanders`
keeps, per DOF, which source commanded it last and when, so the robot core can tell
when a second source commands a joint while the first still does, and say so:

* a source is **active** on a DOF while its trajectory runs there, and for ``window``
  seconds after its last command (or the end of its trajectory): the command timeout
  when there is one, else :data:`DEFAULT_WINDOW`;
* a command from another source for an active DOF is a **conflict**, said once per pair
  of sources in the log (naming both) and kept for the diagnostics
  (:meth:`Commanders.conflict`) while it is recent;
* by default the newcomer's command is taken, as before (the latest command wins);
  ``exclusive`` refuses it until the first source has been quiet on those DOFs for the
  window (:meth:`Commanders.claim` returns why).

Who a source is, is the caller's to say (:class:`Source`): the ROS shell names a
publisher by its node where rclpy tells the publisher of a message, and by its topic
otherwise. No ROS here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    import numpy.typing as npt

    from skel_ros.core.log import CoreLog

__all__ = ["DEFAULT_WINDOW", "DIRECT", "Commanders", "Conflict", "Source"]

DEFAULT_WINDOW = 1.0
"""Seconds (of the core's time) a source stays active after its last command when there
is no command timeout (``command_timeout`` 0)."""


@dataclass(frozen=True)
class Source:
    """Who sent a command or a trajectory.

    Attributes:
        channel: Where it came in: ``joint_commands``, ``joint_trajectory``,
            ``<controller>/follow_joint_trajectory`` ...
        who: Who sent it on that channel (a node's name, a goal's id); ``""`` when the
            channel does not tell (a publisher on a ROS distro whose rclpy does not
            say which publisher sent a message).
        key: What tells commanders apart: sources with equal keys are one commander
            (default: ``(channel, who)``).
    """

    channel: str
    who: str = ""
    key: Hashable = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.key is None:
            object.__setattr__(self, "key", (self.channel, self.who))

    def __str__(self) -> str:
        return f"{self.channel} ({self.who})" if self.who else self.channel

    @property
    def stream(self) -> str:
        """What tracking its commands is called: ``a joint_commands stream from /teleop``."""
        return f"a {self.channel} stream" + (f" from {self.who}" if self.who else "")


DIRECT = Source("RobotCore")
"""The source of commands handed to the core without one (scripts, tests)."""


@dataclass(frozen=True)
class Conflict:
    """Two sources commanding the same DOFs.

    Attributes:
        first: The source that was commanding them.
        second: The newcomer.
        names: The DOFs both commanded.
        refused: Whether the newcomer was refused (``exclusive``).
        at: When (the core's time).
    """

    first: Source
    second: Source
    names: tuple[str, ...]
    refused: bool
    at: float

    def __str__(self) -> str:
        both = f"{self.second} while {self.first} commands {', '.join(self.names)}"
        if self.refused:
            return f"{both}: refused (exclusive_commands)"
        return f"{both}: the latest command wins"


class Commanders:
    """Which source commands each DOF, and since when; see the module docstring.

    Not thread-safe: the robot core calls it under its lock; :meth:`streaming` and
    :meth:`conflict` read one reference each and may be called without it.

    Args:
        names: The DOFs, in the core's order.
        exclusive: Refuse a second source while the first is active.
        log: Where the conflicts are said (once per pair of sources).
    """

    def __init__(self, names: Sequence[str], *, exclusive: bool = False,
                 log: CoreLog | None = None) -> None:
        self.names = tuple(names)
        self.exclusive = exclusive
        """Refuse a second source while the first is active (``exclusive_commands``)."""
        self.window = DEFAULT_WINDOW
        """Seconds a source stays active after its last command (the core sets it to the
        command timeout when there is one)."""
        self._log = log
        n = len(self.names)
        self._owner = np.full(n, -1, dtype=np.intp)  # index into _sources; -1: nobody
        # When the owner last commanded the DOF; +inf while its trajectory runs there.
        self._last = np.full(n, -math.inf)
        self._sources: list[Source] = []
        self._ids: dict[Hashable, int] = {}
        self._said: set[tuple[int, int]] = set()  # pairs whose conflict was logged
        # The last claim: its source, when, and whether it was a trajectory.
        self._latest: tuple[int, float, bool] | None = None
        self._conflict: Conflict | None = None
        self.refused = 0
        """Commands and trajectories refused as a second source's (``exclusive``)."""

    def _id(self, source: Source) -> int:
        sid = self._ids.get(source.key)
        if sid is None:
            sid = self._ids[source.key] = len(self._sources)
            self._sources.append(source)
        else:
            self._sources[sid] = source  # its latest name (a goal's id changes)
        return sid

    # ---------------------------------------------------------------- claims

    def claim(self, source: Source, index: npt.NDArray[np.intp], now: float, *,
              running: bool = False) -> str:
        """:meth:`check`, then :meth:`take` unless refused; ``""`` or why it is refused."""
        refused = self.check(source, index, now)
        if not refused:
            self.take(source, index, now, running=running)
        return refused

    def check(self, source: Source, index: npt.NDArray[np.intp], now: float) -> str:
        """May ``source`` command the DOFs at ``index`` at ``now``? ``""`` or why not.

        A DOF another source is active on makes a conflict (logged once per pair of
        sources); with :attr:`exclusive` the command is refused (counted in
        :attr:`refused`). Nothing is taken: :meth:`take` does that.
        """
        sid = self._id(source)
        owners = self._owner[index]
        busy = (owners >= 0) & (owners != sid) & (now - self._last[index] < self.window)
        if busy.any():
            others = sorted(set(owners[busy].tolist()))
            first = self._sources[others[0]]
            names = tuple(self.names[i] for i in index[busy])
            self._conflict = Conflict(first, source, names, self.exclusive, now)
            for other in others:
                self._say(other, sid, names)
            if self.exclusive:
                self.refused += 1
                since = ("its trajectory runs" if np.isinf(self._last[index[busy]]).any()
                         else f"it commanded them within the last {self.window:g} s")
                return (f"{first} commands {', '.join(names)} ({since}); exclusive_commands:"
                        f" {source} may command them once {first} has been quiet for"
                        f" {self.window:g} s")
        return ""

    def take(self, source: Source, index: npt.NDArray[np.intp], now: float, *,
             running: bool = False) -> None:
        """``source`` owns the DOFs at ``index`` from ``now``.

        ``running``: its trajectory, active on them until :meth:`release`.
        """
        sid = self._id(source)
        self._owner[index] = sid
        self._last[index] = math.inf if running else now
        self._latest = (sid, now, running)

    def release(self, source: Source, index: npt.NDArray[np.intp], now: float) -> None:
        """``source``'s trajectory on the DOFs at ``index`` ended at ``now``."""
        sid = self._ids.get(source.key)
        if sid is None:
            return
        mine = index[(self._owner[index] == sid) & np.isinf(self._last[index])]
        self._last[mine] = now

    def _say(self, first: int, second: int, names: tuple[str, ...]) -> None:
        pair = (min(first, second), max(first, second))
        if pair in self._said or self._log is None:
            return
        self._said.add(pair)
        a, b = self._sources[first], self._sources[second]
        what = (f"{b} is refused until {a} has been quiet for {self.window:g} s"
                " (exclusive_commands: true)" if self.exclusive else
                "the latest command wins; exclusive_commands: true refuses the second")
        self._log.warning(f"two sources command {', '.join(names)}: {a} and {b}; {what}"
                          " (said once for these two)", f"commanders {pair}")

    # ---------------------------------------------------------------- what is going on

    def streaming(self, now: float) -> Source | None:
        """The source of the last claim when it was a command and is recent (None otherwise).

        A source whose commands came within the window is streaming them; after a
        trajectory, or once the window has passed, nobody is.
        """
        latest = self._latest
        if latest is None or latest[2] or not now - latest[1] < self.window:
            return None
        return self._sources[latest[0]]

    def conflict(self, now: float) -> Conflict | None:
        """The last conflict, while it is recent (within the window)."""
        conflict = self._conflict
        if conflict is None or not now - conflict.at < self.window:
            return None
        return conflict
