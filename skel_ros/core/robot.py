"""The robot core: one place that decides what a robot is commanded to do.

:class:`RobotCore` sits between whoever drives a robot (a ROS node, a script, a test)
and a :class:`~skel_ros.core.backend.RobotBackend` (DART, the hardware buses, a test
double). It is the same for every backend, so a robot behaves the same in simulation
and on hardware:

* **Command arbitration.** A ``joint_commands`` command holds until replaced. A
  trajectory replaces the trajectory before it (``PREEMPTED``); a command for one of
  the joints of a trajectory being followed ends it (``TAKEN_OVER``); an empty
  trajectory cancels it, and the joints hold where they are (``CANCELED``).
* **One commander at a time** (:class:`~skel_ros.core.commanders.Commanders`): every
  command and trajectory names its :class:`~skel_ros.core.commanders.Source`; a second
  source commanding a joint while another is active on it is said once per pair, and
  refused with :attr:`RobotCore.exclusive_commands`. :meth:`RobotCore.activity` says
  what the robot is doing and for whom.
* **The limits gate** (:meth:`RobotCore.gate`, the only one). Every command and every
  trajectory sample is checked once against what the backend declares (its
  :attr:`~skel_ros.core.backend.RobotBackend.limits`: the model's limit set, tightened
  where the configuration says so; the command kinds each DOF takes) before it is
  written: refused whole, or clamped and reported (a trajectory's clamps
  once per DOF).
* **Trajectory following.** :meth:`RobotCore.cycle`, called once per control cycle
  of the backend (the simulation: before every step, for the time the step ends at;
  the hardware: every read cycle), samples the active trajectory and writes the sample
  as position targets; a :class:`~skel_ros.core.follower.TrajectoryObserver` may watch
  and decide the end.
* **The command timeout** (:class:`~skel_ros.core.timeout.CommandTimeout`): commands,
  and a trajectory being followed every cycle, feed it; when it expires the backend
  applies its safe state (:meth:`~skel_ros.core.backend.RobotBackend.on_timeout`).
* **Power.** A backend whose devices can refuse motion (power off, e-stop, fault) says
  so through :meth:`~skel_ros.core.backend.RobotBackend.refusal`; the core then refuses
  commands and trajectories, and whatever stops the devices ends the trajectory
  (:meth:`RobotCore.stop_trajectory`, ``STOPPED``).

Rate limiting stays where the motion is made: the simulation's position controllers
and the hardware's motion limiter shape the way to each target.

Threads: every public method may be called from any thread; the core's lock
(:attr:`RobotCore.lock`) serialises them, and the backend is called under it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.core.commanders import DEFAULT_WINDOW, DIRECT, Commanders
from skel_ros.core.errors import CommandRefused
from skel_ros.core.follower import FollowOutcome
from skel_ros.core.lock import ContendedLock
from skel_ros.core.log import CoreLog, LoggingLog
from skel_ros.core.timeout import CommandTimeout
from skel_ros.model.limits import Clamp, CommandKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from skel_ros.core.backend import Capabilities, RobotBackend, RobotState
    from skel_ros.core.commanders import Conflict, Source
    from skel_ros.core.follower import Trajectory, TrajectoryObserver
    from skel_ros.model.limits import CheckResult
    from skel_ros.model.types import Array

__all__ = ["ActiveTrajectory", "CommandResult", "CoreLog", "LoggingLog", "RobotCore"]


_EMPTY_INDEX = np.zeros(0, dtype=np.intp)


@dataclass(frozen=True)
class CommandResult:
    """The outcome of handing in a command.

    Attributes:
        ok: Whether it was taken.
        message: Why not, or what was clamped; ``""`` when there is nothing to say.
        clamped: The values moved into the limits.
        reason: A stable key for throttling the log line (the message may hold values).
    """

    ok: bool
    message: str = ""
    clamped: tuple[Clamp, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class ActiveTrajectory:
    """The trajectory being followed, as :attr:`RobotCore.active_trajectory` shows it.

    Attributes:
        trajectory: What is sampled (its ``sample`` is ``t`` seconds after ``start``).
        names: Its DOFs (backend names), in the order of the sampled arrays.
        start: When its time 0 is (:meth:`RobotCore.now`'s time base); the core holds
            its first sample until then.
        received: When it was handed in (same time base): it was not in effect before.
        source: Who handed it in.
    """

    trajectory: Trajectory
    names: tuple[str, ...]
    start: float
    received: float
    source: Source = DIRECT


@dataclass(eq=False)
class _Active:
    """The trajectory being followed."""

    trajectory: Trajectory
    names: tuple[str, ...]
    index: npt.NDArray[np.intp]
    start: float
    observer: TrajectoryObserver | None
    received: float
    source: Source = DIRECT
    clamped: set[str] = field(default_factory=set)  # DOFs whose clamping was reported
    # Per DOF, its points' highest position above its upper limit and lowest below its
    # lower limit (DOFs whose points stay within are absent): what the clamp report says.
    above: dict[str, float] = field(default_factory=dict)
    below: dict[str, float] = field(default_factory=dict)


class RobotCore:
    """Commands in, limits gate, trajectory follower, command timeout, state out.

    Args:
        backend: The robot's joints.
        command_timeout: Seconds (of :meth:`now`) without a command before the backend's
            safe state; 0 = never. The owner arms it (:meth:`restart_timeout`) when
            motion starts: at once for a simulation, at enable for hardware.
        max_start_delay: How far ahead of :meth:`now` a trajectory may start; a later
            start is refused (a wrong stamp would keep the joints waiting for hours).
        log: Where log lines go (default: the ``skel_ros.core`` logger).
        exclusive_commands: Refuse a second source while another is active on the same
            joints (:attr:`exclusive_commands`).

    Raises:
        ValueError: ``command_timeout`` is NaN, ``max_start_delay`` negative or NaN.
    """

    def __init__(self, backend: RobotBackend, *, command_timeout: float = 0.0,
                 max_start_delay: float = math.inf, log: CoreLog | None = None,
                 exclusive_commands: bool = False) -> None:
        if not max_start_delay >= 0.0:
            raise ValueError(f"max_start_delay must be >= 0, got {max_start_delay!r}")
        self.backend = backend
        self.names: tuple[str, ...] = tuple(backend.names)
        """DOF names in the backend's (the model's) order."""
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        """DOF name -> index in :attr:`names`."""
        self.max_start_delay = float(max_start_delay)
        self._timeout = CommandTimeout(command_timeout)
        self._log: CoreLog = log or LoggingLog(logging.getLogger("skel_ros.core"))
        self._lock = ContendedLock()
        self._active: _Active | None = None
        modes = backend.capabilities.command_modes
        if modes and len(modes) != len(self.names):
            raise ValueError(f"the backend declares command modes for {len(modes)} DOF(s),"
                             f" not its {len(self.names)}")
        self._modes = modes
        missing = [n for n in self.names if n not in backend.limits]
        if missing:
            raise ValueError("the backend's limits do not cover its DOF(s) "
                             + ", ".join(map(repr, missing)))
        self._undriven_said: set[str] = set()  # DOFs without an actuator, said once each
        self._commanders = Commanders(self.names, exclusive=exclusive_commands, log=self._log)
        self._commanders.window = self._window()
        backend.bind_core(self)

    # ---------------------------------------------------------------- facts

    @property
    def capabilities(self) -> Capabilities:
        """The backend's capabilities."""
        return self.backend.capabilities

    @property
    def log(self) -> CoreLog:
        """Where the core's log lines go (the runner's too)."""
        return self._log

    @property
    def lock(self) -> ContendedLock:
        """The core's lock (re-entrant): the loop holds it through a batch of cycles."""
        return self._lock

    def now(self) -> float:
        """The core's time base: the backend's (simulated time, or the hardware clock)."""
        return self.backend.now()

    def read(self, now: float | None = None) -> RobotState:
        """The backend's latest measurement, with per-DOF freshness."""
        return self.backend.read(self.now() if now is None else now)

    @property
    def following(self) -> bool:
        """Whether a trajectory is active."""
        return self._active is not None

    @property
    def trajectory_names(self) -> tuple[str, ...]:
        """The joints of the active trajectory (empty when none)."""
        active = self._active
        return active.names if active is not None else ()

    @property
    def active_trajectory(self) -> ActiveTrajectory | None:
        """The trajectory being followed (None when none), read-only."""
        active = self._active
        if active is None:
            return None
        return ActiveTrajectory(active.trajectory, active.names, active.start, active.received,
                                active.source)

    # ---------------------------------------------------------------- commanders

    @property
    def exclusive_commands(self) -> bool:
        """Whether a second source is refused while another is active on the same joints.

        A source is active on a joint while its trajectory runs there, and for
        :attr:`commander_window` seconds after its last command or the end of its
        trajectory. False (the default): the second source's command is taken (the
        latest command wins) and the two are said once in the log.
        """
        return self._commanders.exclusive

    @exclusive_commands.setter
    def exclusive_commands(self, exclusive: bool) -> None:
        with self._lock:
            self._commanders.exclusive = bool(exclusive)

    @property
    def commander_window(self) -> float:
        """Seconds a source stays active after its last command.

        The command timeout, or :data:`~skel_ros.core.commanders.DEFAULT_WINDOW` when
        there is none.
        """
        return self._commanders.window

    def _window(self) -> float:
        timeout = self._timeout.timeout
        return timeout if timeout > 0 else DEFAULT_WINDOW

    def conflict(self, now: float | None = None) -> Conflict | None:
        """Two sources commanding the same joints, while it is recent (None otherwise).

        Without the core's lock (as :meth:`activity`): a diagnostics thread never waits
        for the loop.
        """
        return self._commanders.conflict(self.backend.now() if now is None else now)

    @property
    def refused_commands(self) -> int:
        """Commands and trajectories refused as a second source's (exclusive_commands)."""
        return self._commanders.refused

    def activity(self, now: float | None = None) -> str:
        """What the robot is doing now, for whom: the diagnostics' words.

        ``following a trajectory from <source>``, ``tracking a <channel> stream from
        <who>`` (commands within :attr:`commander_window`), ``holding: no command for
        <t> s`` (the command timeout fired) or ``holding``. Whether motion is on at all is
        the backend's to say (:meth:`~skel_ros.core.RobotBackend.refusal`).

        It reads without the core's lock (each fact is one reference, read once), so a
        diagnostics callback never waits for the loop; the facts may be a cycle apart.
        """
        now = self.backend.now() if now is None else now
        active = self._active
        if active is not None:
            waiting = " (waiting for its start time)" if now < active.start else ""
            return f"following a trajectory from {active.source}{waiting}"
        if self._timeout.tripped:
            return f"holding: no command for {self._timeout.timeout:g} s"
        source = self._commanders.streaming(now)
        return f"tracking {source.stream}" if source is not None else "holding"

    # ---------------------------------------------------------------- lifecycle

    def configure(self) -> None:
        """Configure the backend (connect or build; power stays off)."""
        self.backend.configure()

    def activate(self) -> None:
        """Activate the backend (power on, holding the measured positions)."""
        self.backend.activate()

    def deactivate(self, wait: float | None = None) -> None:
        """End any trajectory (``STOPPED``) and deactivate the backend (power off).

        Args:
            wait: Seconds to wait for the loop to let go of the core (None: as long as
                it takes). A loop stuck in a cycle (a bus that does not answer) must not
                hold the power off back: past the wait the backend is deactivated all the
                same (a hardware backend asks its loop and raises when it does not answer
                in time), and the trajectory is ended after it.
        """
        taken = self._lock.acquire(-1 if wait is None else wait)
        if taken:
            try:
                self.stop_trajectory("deactivated")
            finally:
                self._lock.release()
        self.backend.deactivate()
        if not taken:  # the loop answered: it lets go of the core now
            self.stop_trajectory("deactivated")

    def close(self) -> None:
        """End any trajectory (``STOPPED``) and close the backend."""
        self.stop_trajectory("backend closed")
        self.backend.close()

    # ---------------------------------------------------------------- the gate

    def gate(self, kind: CommandKind, names: Sequence[str], values: npt.ArrayLike
             ) -> CheckResult:
        """The one limits gate: validate a command and clamp it into the limits.

        Every command and every trajectory sample passes here, once, before the backend
        gets it: the backend's :attr:`~RobotBackend.limits` check (rejects NaN, unknown
        or repeated names, a count mismatch; clamps into the limits of the kind), then
        DOFs the backend does not drive are left out (said once per DOF), then each
        DOF's command kinds (:attr:`Capabilities.command_modes`).

        Returns:
            The limits module's result: ``ok`` False with ``reason`` when refused whole;
            ``names`` / ``indices`` (into the backend's limits) / ``values`` what to write.
        """
        check = self.backend.limits.check(kind, names, values)
        if not check.ok:
            return check
        index = self.index
        if any(n not in index for n in check.names):
            new = [n for n in check.names if n not in index and n not in self._undriven_said]
            if new:
                self._undriven_said.update(new)
                self._log.warning("commands for DOF(s) without an actuator are ignored: "
                                  + ", ".join(new), "no actuator")
            keep = [i for i, n in enumerate(check.names) if n in index]
            check = replace(check, names=tuple(check.names[i] for i in keep),
                            indices=check.indices[keep], values=check.values[keep],
                            requested=check.requested[keep],
                            clamped=tuple(c for c in check.clamped if c.name in index))
        modes = self._modes
        if modes:
            for name in check.names:
                taken = modes[index[name]]
                if kind not in taken:
                    what = " or ".join(sorted(k.value for k in taken)) or "no"
                    return replace(check, ok=False, reason=f"DOF {name!r} takes {what}"
                                                           f" commands, not {kind.value}",
                                   indices=_EMPTY_INDEX, values=np.zeros(0),
                                   requested=np.zeros(0), clamped=())
        return check

    # ---------------------------------------------------------------- commands

    def command(self, kind: CommandKind, names: Sequence[str],
                values: npt.ArrayLike, source: Source = DIRECT) -> CommandResult:
        """Hand in a command from ``source``: positions, velocities or efforts of some DOFs.

        The whole command is refused when the limits gate rejects it (NaN, unknown or
        repeated names, a count mismatch, a kind a DOF does not take), the backend
        refuses motion now, or another source is active on its joints and
        :attr:`exclusive_commands` is set; values outside the limits are clamped. A
        command for a joint of the trajectory being followed ends it (``TAKEN_OVER``).
        """
        check = self.gate(kind, names, values)
        if not check.ok:
            return CommandResult(ok=False, message=check.message,
                                 reason=f"{kind.value} command rejected")
        if not check.names:
            return CommandResult(ok=False, reason="no actuator",
                                 message=f"{kind.value} command names no DOF this robot"
                                         " drives")
        refusal = self.backend.refusal()
        if refusal:
            return CommandResult(ok=False, message=f"{kind.value} command ignored: {refusal}",
                                 reason="refused")
        index = np.fromiter((self.index[n] for n in check.names), np.intp, len(check.names))
        with self._lock:
            now = self.backend.now()
            refused = self._commanders.check(source, index, now)
            if refused:
                return CommandResult(ok=False, reason="second commander",
                                     message=f"{kind.value} command refused: {refused}")
            active = self._active
            if active is not None and np.isin(index, active.index).any():
                self._end(now, FollowOutcome.TAKEN_OVER,
                          f"taken over by a {kind.value} command for its joints from"
                          f" {source}")
                self._log.info(f"{source} took over: trajectory stopped")
            self._commanders.take(source, index, now)
            self.backend.write(now, kind, index, np.asarray(check.values, dtype=float))
            self._timeout.feed(now)
        return CommandResult(ok=True, message=check.message, clamped=check.clamped,
                             reason="clamped" if check.clamped else "")

    def follow(self, trajectory: Trajectory, start: float | None = None,
               observer: TrajectoryObserver | None = None,
               source: Source = DIRECT) -> None:
        """Follow ``trajectory`` from ``start`` (:meth:`now`'s time base; None: now).

        Its samples are position targets and pass the same gate as commands. It
        replaces an active trajectory (whose observer gets ``PREEMPTED``). ``source``
        commands its joints until it ends.

        Raises:
            CommandRefused: It cannot be followed (unknown joints, joints this robot
                does not drive or not in position mode, motion refused now, a start
                beyond ``max_start_delay``, another source active on its joints with
                :attr:`exclusive_commands`); nothing changed.
        """
        names = tuple(trajectory.joint_names)
        if not names:
            raise CommandRefused("trajectory rejected: no joints", "trajectory joint names")
        check = self.gate(CommandKind.POSITION, names, np.zeros(len(names)))
        if not check.ok:
            raise CommandRefused(f"trajectory rejected: {check.reason}",
                                 "trajectory joint names")
        if len(check.names) < len(names):
            missing = [n for n in names if n not in check.names]
            raise CommandRefused("trajectory rejected: DOF(s) without an actuator: "
                                 + ", ".join(missing), "no actuator")
        self.check_motion()
        index = np.fromiter((self.index[n] for n in names), np.intp, len(names))
        above, below = self._beyond_limits(trajectory, names)
        with self._lock:
            now = self.backend.now()
            begin = now if start is None else float(start)
            if not math.isfinite(begin):
                raise CommandRefused(f"trajectory rejected: start time {begin} is not finite",
                                     "trajectory start")
            if begin - now > self.max_start_delay:
                raise CommandRefused(
                    f"trajectory rejected: it starts {begin - now:.3g} s from now, more than"
                    f" max_start_delay ({self.max_start_delay:g} s); check its header stamp"
                    " (0 = start on receipt)", "trajectory starts too late")
            if begin + trajectory.duration < now:
                self._log.warning(f"trajectory: it ended {now - begin - trajectory.duration:.3f}"
                                  " s ago (start stamp in the past); going to its last point",
                                  "trajectory past")
            refused = self._commanders.check(source, index, now)
            if refused:
                raise CommandRefused(f"trajectory refused: {refused}", "second commander")
            if self._active is not None:
                self._end(now, FollowOutcome.PREEMPTED,
                          f"preempted by a newer trajectory from {source}")
            self._commanders.take(source, index, now, running=True)
            self._active = _Active(trajectory, names, index, begin, observer, now, source,
                                   above=above, below=below)
            self._timeout.feed(now)
        points = getattr(trajectory, "points", None)
        count = f"{len(points)} point(s) for " if points is not None else ""
        self._log.info(f"following a trajectory of {count}{len(names)} joint(s),"
                       f" {trajectory.duration:g} s")

    def _beyond_limits(self, trajectory: Trajectory, names: Sequence[str]
                       ) -> tuple[dict[str, float], dict[str, float]]:
        """Per DOF, the highest point above its upper limit and the lowest below its lower one.

        From the trajectory's points, when it has them (a
        :class:`~skel_ros.trajectory.points.PointTrajectory`): the peaks the clamp report
        names (the samples between points are checked as they are followed).
        """
        points = getattr(trajectory, "points", None)
        try:
            q = np.array([p.positions for p in points or ()], dtype=float)
        except (TypeError, ValueError, AttributeError):
            return {}, {}
        if not len(q) or q.shape != (len(q), len(names)):
            return {}, {}
        out: tuple[dict[str, float], dict[str, float]] = ({}, {})
        for peaks, extreme in zip(out, (q.max(axis=0), q.min(axis=0)), strict=True):
            check = self.gate(CommandKind.POSITION, names, extreme)
            if check.ok:
                peaks.update((c.name, c.requested) for c in check.clamped)
        return out

    def check_motion(self) -> None:
        """Raise when the backend takes no motion now (power off, e-stop, fault).

        What :meth:`follow` checks first; a caller that prepares a trajectory from the
        robot's present targets (:meth:`start_positions`) checks it before, as there are
        none to start from while motion is off.

        Raises:
            CommandRefused: The backend's reason, as :meth:`follow` gives it.
        """
        refusal = self.backend.refusal()
        if refusal:
            raise CommandRefused(f"trajectory ignored: {refusal}", "refused")

    def cancel_trajectory(self, source: Source | None = None) -> bool:
        """Stop following (``CANCELED``); its joints hold where they are.

        Args:
            source: Who cancels (None: the trajectory's own source). Another source is
                refused while the trajectory runs when :attr:`exclusive_commands` is set.

        Returns:
            Whether a trajectory was active.

        Raises:
            CommandRefused: Another source, with :attr:`exclusive_commands`.
        """
        with self._lock:
            active = self._active
            if active is None:
                return False
            now = self.backend.now()
            if source is not None:
                refused = self._commanders.check(source, active.index, now)
                if refused:
                    raise CommandRefused(f"cancel refused: {refused}", "second commander")
            by = "" if source is None or source.key == active.source.key else f" by {source}"
            self._end(now, FollowOutcome.CANCELED, f"canceled{by}: holding position")
            self.backend.hold(now, active.index)
            return True

    def stop_trajectory(self, message: str, now: float | None = None) -> bool:
        """End the active trajectory with ``STOPPED`` (e-stop, disable, reset, fault...).

        The joints are left to whoever stopped them (no hold is written).

        Returns:
            Whether a trajectory was active.
        """
        with self._lock:
            if self._active is None:
                return False
            self._end(self.backend.now() if now is None else now, FollowOutcome.STOPPED,
                      message)
            return True

    def start_positions(self, names: Sequence[str]) -> list[float]:
        """Where a trajectory for ``names`` starts: the backend's targets now."""
        index = np.fromiter((self.index[n] for n in names), np.intp, len(names))
        with self._lock:
            return [float(x) for x in self.backend.start_positions(index)]

    # ---------------------------------------------------------------- timeout

    @property
    def command_timeout(self) -> float:
        """Seconds without a command before the safe state (0 = never)."""
        return self._timeout.timeout

    def set_command_timeout(self, timeout: float, now: float | None = None) -> None:
        """Change the timeout; it counts from ``now`` (default: :meth:`now`).

        Raises:
            ValueError: ``timeout`` is NaN.
        """
        if math.isnan(timeout):
            raise ValueError("command timeout is NaN")
        with self._lock:
            self._timeout.timeout = float(timeout)
            self._timeout.feed(self.backend.now() if now is None else now)
            self._commanders.window = self._window()

    def restart_timeout(self, now: float) -> None:
        """Count the timeout from ``now`` (motion starts: start, reset, enable)."""
        with self._lock:
            self._timeout.feed(now)

    def disarm_timeout(self) -> None:
        """Stop counting until the next command (power off: nothing to guard)."""
        with self._lock:
            self._timeout.disarm()

    @property
    def timeout_tripped(self) -> bool:
        """Whether the timeout expired and no command came since."""
        return self._timeout.tripped

    # ---------------------------------------------------------------- the cycle

    def quiet_until(self) -> float:
        """The time from which :meth:`cycle` may act; a cycle for an earlier time does nothing.

        ``-inf`` while a trajectory is followed (every cycle samples it); the command
        timeout's expiry (last command + timeout) while it is armed and has not fired;
        ``+inf`` otherwise. An owner that advances its backend several cycles at once (the
        simulation node stepping between publications) may skip the cycles before it, and
        must call :meth:`cycle` for every one from it on. Commands, trajectories and
        timeout changes move it: ask again after handing one in. The expiry is the sum
        ``last + timeout`` as rounded, while :meth:`cycle` compares ``now - last`` with the
        timeout: keep a margin (the simulation node keeps half a step).
        """
        with self._lock:
            if self._active is not None:
                return -math.inf
            expiry = self._timeout.expiry
            return math.inf if expiry is None else expiry

    def cycle(self, now: float) -> None:
        """One control cycle at ``now``: follow the trajectory, then apply the timeout.

        Called by the backend's loop (the simulation: before each step, with the time
        the step ends at; the hardware: every read cycle while motion is enabled).
        """
        with self._lock:
            active = self._active
            if active is not None:
                self._follow(now, active)
            if self._timeout.poll(now):
                self.stop_trajectory("command timeout", now)
                message = self.backend.on_timeout(now, self._timeout.timeout)
                if message:
                    self._log.info(message)

    def _follow(self, now: float, active: _Active) -> None:
        t = now - active.start
        try:
            desired_q, desired_v, _ = active.trajectory.sample(max(t, 0.0))
            desired_q = np.asarray(desired_q, dtype=np.float64)
            desired_v = np.asarray(desired_v, dtype=np.float64)
        except (ValueError, TypeError, IndexError) as exc:
            self._abort(now, active, f"trajectory sampling failed, holding: {exc}")
            return
        check = self.gate(CommandKind.POSITION, active.names, desired_q)
        if not check.ok or len(check.names) != len(active.names):
            self._abort(now, active, f"trajectory sample rejected, holding: {check.reason}")
            return
        self._report_clamps(t, active, check.clamped)
        self.backend.write(now, CommandKind.POSITION, active.index,
                           np.asarray(check.values, dtype=float))
        self._timeout.feed(now)
        if active.observer is None:
            if t > active.trajectory.duration:  # done: the last point stays held
                self._end(now, FollowOutcome.SUCCEEDED, "reached its last point")
            return
        state = self.backend.read(now)
        fresh = state.fresh[active.index]
        actual_q = np.where(fresh, state.positions[active.index], np.nan)
        measured_v = state.velocities[active.index]
        actual_v: Array | None = (np.where(fresh, measured_v, np.nan)
                                  if np.isfinite(measured_v).any() else None)  # None: unknown
        try:
            decision = active.observer.on_cycle(now, t, active.names, (desired_q, desired_v),
                                                (actual_q, actual_v))
        except Exception as exc:  # noqa: BLE001 - an observer's bug must not stop the loop
            decision = (FollowOutcome.ABORTED, f"the trajectory's observer failed: {exc!r}")
            self._log.error(decision[1], "observer failed")
        if decision is None:
            return
        outcome, message = decision
        if outcome is FollowOutcome.SUCCEEDED:
            self._end(now, outcome, message)
        else:
            if outcome is not FollowOutcome.ABORTED:
                message = f"the observer returned {outcome!r}, not SUCCEEDED or ABORTED"
            self._end(now, FollowOutcome.ABORTED, message)
            self.backend.hold(now, active.index)

    def _report_clamps(self, t: float, active: _Active, clamped: Sequence[Clamp]) -> None:
        """Say, once per DOF and trajectory, how far the trajectory leaves the limits."""
        new = [c for c in clamped if c.name not in active.clamped]
        if not new:
            return
        active.clamped.update(c.name for c in new)

        def peak(c: Clamp) -> float:  # the farthest the trajectory goes on that side
            if c.requested > c.applied:
                return max(c.requested, active.above.get(c.name, c.requested))
            return min(c.requested, active.below.get(c.name, c.requested))

        self._log.warning(
            f"trajectory leaves the limits at t = {t:.3f} s: "
            + ", ".join(f"{c.name!r} reaches {peak(c):.6g} (limit {c.applied:.6g})"
                        for c in new)
            + " (clamped to the limit meanwhile; said once per DOF and trajectory)",
            "trajectory clamped")

    def _abort(self, now: float, active: _Active, message: str) -> None:
        self._log.error(message, "trajectory aborted")
        self._end(now, FollowOutcome.ABORTED, message)
        self.backend.hold(now, active.index)

    def _end(self, now: float, outcome: FollowOutcome, message: str) -> None:
        """Forget the active trajectory and tell its observer (exactly once)."""
        active, self._active = self._active, None
        if active is None:
            return
        self._commanders.release(active.source, active.index, now)
        if active.observer is None:
            return
        try:
            active.observer.on_end(now, outcome, message)
        except Exception as exc:  # noqa: BLE001 - an observer's bug must not stop the loop
            self._log.error(f"the trajectory's observer failed at its end: {exc!r}",
                            "observer failed")
