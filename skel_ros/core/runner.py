"""The loop owner: one thread that runs a robot's control cycle, for simulation and hardware.

ros2_control's controller manager owns the loop and calls read / update / write on
passive hardware components; here the :class:`Runner` does that for one
:class:`~skel_ros.core.RobotCore` and its :class:`~skel_ros.core.RobotBackend`. A cycle
at backend time ``now`` is always the same three steps::

    backend.sense(now)       # read the devices (hardware); nothing for an engine
    core.cycle(now)          # trajectory sample, command timeout -> the gate -> backend.write
    backend.actuate(now, 1)  # write the targets (hardware); step the world (engine)

with ``now`` from :meth:`~skel_ros.core.RobotBackend.cycle_time` (the hardware clock;
for an engine the time its next step ends at). The core's cycle runs only while the
backend takes motion (:meth:`~skel_ros.core.RobotBackend.refusal` empty). An engine's
quiet cycles (no trajectory, no timeout due, nothing to publish:
:meth:`~skel_ros.core.RobotCore.quiet_until` and the listener's
:meth:`LoopListener.next_event`) are handed over in one ``actuate(now, k)``: the engine's
own loop steps them.

When the cycles are due is the pacer's business: :class:`GridPacer` (hardware: a
deadline grid at the control rate on the backend's clock; a late cycle does not shift
the later ones) or :class:`RealTimePacer` (simulation: simulated time follows the wall
clock times a real-time factor, scheduled against an anchor so it does not drift).

The lifecycle goes through the same object: :meth:`Runner.configure` (connect or build,
then the loop runs; nothing moves), :meth:`Runner.activate` (power on, holding),
:meth:`Runner.deactivate` (power off), :meth:`Runner.cleanup` (the loop stops, the
backend is closed). The nodes are shells over a runner; they own no loop.

Threads: the loop thread holds :attr:`RobotCore.lock` (a :class:`ContendedLock`) through
a batch of cycles and lets go between batches; other threads (a ROS executor) take it
to hand in commands. A backend wakes the loop (:meth:`Runner.wake`, given to it by
:meth:`~skel_ros.core.RobotBackend.bind_wake`) when it has work between cycles (an
e-stop, an enable request, a command to write at once): the loop then calls
:meth:`~skel_ros.core.RobotBackend.serve`.

Wake-ups of an engine's loop: ahead of its real-time schedule, the loop sleeps until the
cycle on which the listener's next event falls is due (a publication: 100 a second at the
simulation node's defaults), not until the next cycle; at that wake-up it takes every
cycle due, each at its own time. The cycles in between are quiet: nothing reads them.
A thread that takes the lock meanwhile (a command, a service, a parameter) first runs
the cycles due at that moment (:meth:`Runner._catch_up`, bound to the lock), so what it
does acts from the cycle due when it came, as if the loop had woken for every cycle.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from typing import TYPE_CHECKING, Protocol

from skel_ros.core.robot import RobotCore

if TYPE_CHECKING:
    from collections.abc import Callable

    from skel_ros.core.backend import RobotBackend
    from skel_ros.core.lock import ContendedLock
    from skel_ros.core.log import CoreLog

__all__ = ["GridPacer", "LoopListener", "Pacer", "RealTimePacer", "Runner"]

_MAX_LAG = 0.25  # s of wall time behind schedule before a RealTimePacer re-anchors
# s: ahead of the schedule, an engine's loop sleeps until its listener's next event, and
# at least this long (events closer together than this go out in pairs); then it takes
# the cycles that fell due meanwhile in one batch (their times are still the times they
# were due).
_MIN_SLEEP = 0.002
_BATCH_WALL = 0.005  # s: the loop lets go of the lock at least this often


class Pacer(Protocol):
    """When a runner's cycles are due."""

    lagging: bool
    """True after the last :meth:`due` found the schedule too far behind to catch up."""

    def anchor(self, now: float) -> None:
        """Restart the schedule at backend time ``now`` (start, reset, pause ended)."""
        ...

    def due(self, now: float, period: float) -> int:
        """How many cycles of ``period`` are due at backend time ``now``."""
        ...

    def wait(self, now: float, period: float) -> float:
        """Wall seconds until the next cycle is due (0 when it already is)."""
        ...


class GridPacer:
    """Cycles on a deadline grid of the backend's own clock (hardware).

    One cycle is due when the clock reaches the deadline; the next deadline is one period
    later. A cycle that ends after the next deadline is an overrun: the deadlines already
    missed are skipped (the grid is kept, no burst of catch-up cycles).

    Args:
        clock: The backend's clock (monotonic seconds); the runner waits in real time.
    """

    lagging = False

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._deadline = -math.inf
        self.overruns = 0
        """Cycles that ended after the next deadline."""

    def anchor(self, now: float) -> None:
        """The next cycle is due at ``now``."""
        self._deadline = now

    def due(self, now: float, period: float) -> int:
        """One cycle when the deadline is reached (the deadline moves one period on)."""
        if now < self._deadline:
            return 0
        self._deadline = now if self._deadline == -math.inf else self._deadline
        self._deadline += period
        return 1

    def wait(self, now: float, period: float) -> float:  # noqa: ARG002 - the clock's now
        """Seconds to the next deadline; skips the deadlines already missed (an overrun)."""
        late = self._clock() - self._deadline
        if late > 0:
            self.overruns += 1
            self._deadline += math.ceil(late / period) * period
        return max(0.0, self._deadline - self._clock())


class RealTimePacer:
    """When to step: simulated time follows ``anchor + factor * (wall - wall anchor)``.

    Steps are scheduled against an anchor, not one after the other, so rounding and
    sleeping late do not add up (no drift). Falling more than ``max_lag`` wall seconds
    behind (a world slower than real time) re-anchors the schedule at the present, so
    the simulation then runs as fast as it can instead of rushing to catch up; the
    wall time dropped is counted in :attr:`lost`.

    A clock that steps back (a system clock set back) re-anchors the schedule too,
    instead of holding the simulation until it catches up.

    Args:
        factor: Real-time factor; 0 = as fast as possible.
        clock: Wall seconds: monotonic, or the ROS clock (injected for tests).
        max_lag: Wall seconds behind schedule before re-anchoring.
    """

    def __init__(self, factor: float, clock: Callable[[], float] = time.monotonic,
                 max_lag: float = _MAX_LAG) -> None:
        self._clock = clock
        self._max_lag = max_lag
        self.factor = float(factor)
        # (wall, simulated) time of the anchor: one attribute, replaced whole, so another
        # thread reading it (wall_at) never sees half of a re-anchoring.
        self._anchor = (clock(), 0.0)
        self.lagging = False
        """True after the last :meth:`due` found the schedule more than ``max_lag`` behind."""
        self.lost = 0.0
        """Wall seconds skipped by re-anchoring when behind (the simulation did not run)."""

    def anchor(self, now: float, factor: float | None = None) -> None:
        """Restart the schedule at simulated time ``now`` (a pause, a reset, a new factor)."""
        if factor is not None:
            self.factor = float(factor)
        self._anchor = (self._clock(), float(now))

    def wall_at(self, sim_time: float) -> float:
        """The clock's time at which ``sim_time`` is scheduled (factor > 0)."""
        wall, sim = self._anchor
        return wall + (sim_time - sim) / self.factor

    def due(self, now: float, period: float) -> int:
        """How many steps are due at simulated time ``now`` (unbounded when the factor is 0)."""
        if self.factor == 0.0:
            self.lagging = False
            return sys.maxsize
        wall_now = self._clock()
        wall, sim = self._anchor
        target = sim + (wall_now - wall) * self.factor
        behind = (target - now) / self.factor  # wall seconds
        self.lagging = behind > self._max_lag
        if self.lagging:  # one step due now (not one step from now: stamps never ahead)
            self._anchor = (wall_now - period / self.factor, now)
            self.lost += behind - period / self.factor
            return 1
        if behind < -period / self.factor - self._max_lag:  # the clock went back
            self._anchor = (wall_now, now)
            return 0
        return max(0, math.floor((target - now) / period + 1e-9))

    def wait(self, now: float, period: float) -> float:
        """Wall seconds until the next step is due (0 when it already is)."""
        if self.factor == 0.0:
            return 0.0
        return max(0.0, self.wall_at(now + period) - self._clock())


class LoopListener(Protocol):
    """What a runner tells its owner (a node publishing what the cycles measured)."""

    def next_event(self) -> float:
        """The backend time from which a cycle must end a batch (a publication due); inf: none."""
        ...

    def after_cycles(self, now: float, count: int) -> None:
        """``count`` cycles ended at backend time ``now`` (0: the backend served a wake)."""
        ...

    def flush(self) -> None:
        """A batch of cycles ended and the loop lets go of the lock: send what is waiting."""
        ...

    def on_lagging(self) -> None:
        """The pacer found the loop too far behind its schedule (throttle the message)."""
        ...

    def on_error(self, exc: Exception) -> bool:
        """A cycle raised ``exc``; the runner pauses. Return False to end the loop quietly."""
        ...


class _Silent:
    """A listener that hears nothing (a runner without an owner: tests, tools)."""

    def next_event(self) -> float:
        return math.inf

    def after_cycles(self, now: float, count: int) -> None:
        pass

    def flush(self) -> None:
        pass

    def on_lagging(self) -> None:
        pass

    def on_error(self, exc: Exception) -> bool:  # noqa: ARG002
        return True


class Runner:
    """The loop of one robot: paced cycles of sense -> core -> actuate, and the lifecycle.

    Args:
        core: The robot core (its backend is the runner's); its lock must be a
            :class:`ContendedLock` (the core's default).
        pacer: When cycles are due (:class:`GridPacer`, :class:`RealTimePacer`).
        listener: Hears of the cycles (default: nobody).
        name: The loop thread's name.
    """

    def __init__(self, core: RobotCore, pacer: Pacer, *, listener: LoopListener | None = None,
                 name: str = "skel_ros-loop") -> None:
        self.core = core
        self.backend = core.backend
        self.pacer = pacer
        self.listener: LoopListener = listener or _Silent()
        self.name = name
        self.lock: ContendedLock = core.lock
        self.paused = False
        """No cycles while set (:meth:`step` runs one by hand)."""
        self.cycles = 0
        """Cycles run since the runner was made (resets do not zero it)."""
        self._cycle_wall = 1e-3  # wall seconds per cycle, as last measured (caps a batch)
        self._listener_failed = False
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._asleep = False  # the loop thread waits ahead of its schedule (or paused)
        self.backend.bind_wake(self.wake)
        # An engine paced in real time: whoever takes the lock finds the world at the present.
        self._realtime = pacer if isinstance(pacer, RealTimePacer) else None
        if self._realtime is not None and self.backend.capabilities.has_clock:
            self.lock.bind_on_take(self._catch_up)

    @classmethod
    def over(cls, backend: RobotBackend, *, command_timeout: float = 0.0,
             max_start_delay: float = math.inf, log: CoreLog | None = None,
             real_time_factor: float = 1.0, clock: Callable[[], float] = time.monotonic,
             listener: LoopListener | None = None, name: str = "skel_ros-loop") -> Runner:
        """A core over ``backend`` and its runner, paced as the backend keeps time.

        A backend with its own clock (an engine) is paced by a :class:`RealTimePacer`
        (``real_time_factor``, wall seconds from ``clock``); one on a wall clock (the
        hardware) by a :class:`GridPacer` on its own clock, at its period.
        The other arguments are the :class:`~skel_ros.core.RobotCore`'s and the runner's.
        """
        core = RobotCore(backend, command_timeout=command_timeout,
                         max_start_delay=max_start_delay, log=log)
        pacer: Pacer = (RealTimePacer(real_time_factor, clock) if backend.capabilities.has_clock
                        else GridPacer(backend.now))
        return cls(core, pacer, listener=listener, name=name)

    # ---------------------------------------------------------------- lifecycle

    def configure(self) -> None:
        """Connect or build (nothing moves), then run the loop."""
        self.core.configure()
        self.start()

    def activate(self) -> None:
        """Power on, holding the measured positions; the command timeout counts from now."""
        self.core.activate()
        self.core.restart_timeout(self.core.now())

    def deactivate(self, wait: float | None = None) -> None:
        """End any trajectory and power off; the loop goes on measuring.

        ``wait``: as :meth:`RobotCore.deactivate`'s.
        """
        self.core.deactivate(wait)
        self.core.disarm_timeout()

    def cleanup(self) -> None:
        """Stop the loop and close the backend (power off first). Never raises."""
        self.stop()
        self.core.close()

    # ---------------------------------------------------------------- the thread

    @property
    def running(self) -> bool:
        """Whether the loop thread runs."""
        return self._thread is not None

    def start(self) -> None:
        """Start the loop thread (once); the schedule starts now."""
        if self._thread is not None:
            return
        self._stop.clear()
        with self.lock:
            self.pacer.anchor(self.backend.now())
        # Known to stop() only once started: a stop that lands while it starts (a signal
        # handler, run between two bytecodes of this thread) would join an unstarted thread.
        thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        thread.start()
        self._thread = thread

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop thread (idempotent)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None

    def wake(self) -> None:
        """Have the loop serve the backend now (between cycles), or re-read the schedule."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                wait = self._run_due()
            except Exception as exc:  # noqa: BLE001 - keep the owner up: it says what happened
                if not self.listener.on_error(exc):
                    return
                self.paused = True
                continue
            if wait > 0.0:
                self._asleep = True
                try:
                    woken = self._wake.wait(wait)
                finally:
                    self._asleep = False
                if woken:
                    self._wake.clear()
                    if not self._stop.is_set():
                        self._serve()
            elif self.lock.contended:
                time.sleep(0)  # let the waiting thread take the GIL and the lock

    def _run_due(self) -> float:
        """Run the cycles due now; the wall seconds until the loop has work again."""
        with self.lock:
            if self.paused:
                return 0.05
            self._take_due()
            return self._until_work()

    def _take_due(self) -> None:
        """Run the cycles due now (at most one batch's wall time of them)."""
        self.run_cycles(self.pacer.due(self.backend.now(), self.backend.period),
                        budget=_BATCH_WALL)
        if self.pacer.lagging:
            self.listener.on_lagging()

    def _until_work(self) -> float:
        """Wall seconds until the next cycle is due; for an engine, until its next event.

        An engine's cycles before the cycle on which the listener's next event falls
        are quiet (nothing reads them; a thread that takes the lock runs them first:
        :meth:`_catch_up`), so the loop sleeps until that cycle is due, even when some
        of them are due already, and at least :data:`_MIN_SLEEP`. The hardware's cycles
        each have their deadline.
        """
        backend = self.backend
        now, period = backend.now(), backend.period
        if not backend.capabilities.has_clock:
            return self.pacer.wait(now, period)
        event = self.listener.next_event()
        cycles = (1 if event == math.inf  # the cycle it falls on, as _batch_size counts them
                  else max(1, math.ceil((event - now) / period - 0.5 - 1e-3)))
        wait = self.pacer.wait(now + (cycles - 1) * period, period)
        return wait if wait <= 0.0 else max(wait, _MIN_SLEEP)

    def _catch_up(self) -> None:
        """Run the cycles due now, in a thread that takes the lock between the loop's batches.

        Bound to the lock (:meth:`ContendedLock.bind_on_take`) for an engine paced in real
        time: the loop sleeps until its next event (:meth:`_until_work`), and a command,
        a trajectory, a service or a parameter handed in meanwhile acts from the cycle
        due when it came, not from the last one the loop ran. Only while the loop sleeps
        ahead of its schedule: not when it is paused, and not while it works through the
        cycles due (behind its schedule, or as fast as it can): it takes them itself. A
        failing cycle pauses the loop, as there.
        """
        if (not self._asleep or self.paused or self._stop.is_set() or self._realtime is None
                or self._realtime.factor == 0.0):
            return
        try:
            self._take_due()
        except Exception as exc:  # noqa: BLE001 - as in _run: the owner says what happened
            if self.listener.on_error(exc):
                self.paused = True

    def _serve(self) -> None:
        try:
            with self.lock:
                now = self.backend.now()
                if self.backend.serve(now):
                    self._tell(now, 0)
                    self.listener.flush()
        except Exception as exc:  # noqa: BLE001 - as in _run
            if self.listener.on_error(exc):
                self.paused = True

    # ---------------------------------------------------------------- cycles

    def run_cycles(self, count: int, budget: float = math.inf) -> int:
        """Run up to ``count`` cycles, for at most ``budget`` wall seconds.

        An engine's cycles go to it in batches (:meth:`_batch_size`): every quiet cycle
        up to the next event in one ``actuate(now, k)``. The listener hears of each batch
        and is flushed at the end (before the lock is let go).

        Returns:
            The number of cycles run.
        """
        start = time.monotonic()
        taken = 0
        with self.lock:
            try:
                while taken < count:
                    limit = count - taken
                    if budget != math.inf:  # the cycles that fit in the rest of the budget
                        left = budget - (time.monotonic() - start)
                        limit = min(limit, max(1, int(left / self._cycle_wall)))
                    k = self._batch_size(limit)
                    called = time.monotonic()
                    self.cycle(k)
                    self._cycle_wall = max((time.monotonic() - called) / k, 1e-7)
                    taken += k
                    if budget != math.inf and time.monotonic() - start >= budget:
                        break
            finally:
                self.listener.flush()
        return taken

    def cycle(self, count: int = 1) -> float:
        """Run ``count`` cycles now (more than one: quiet engine cycles, no core cycle).

        Returns:
            The backend time the cycles ended at.
        """
        backend = self.backend
        with self.lock:
            now = backend.cycle_time(count)
            if count == 1:
                backend.sense(now)
                if not backend.refusal():
                    self.core.cycle(now)
            backend.actuate(now, count)
            self.cycles += count
            if backend.capabilities.has_clock:  # the steps' own sum (no rounding apart)
                now = backend.now()
            self._tell(now, count)
            return now

    def _tell(self, now: float, count: int) -> None:
        """The listener hears of the cycles; its bug is said once and never stops the loop."""
        try:
            self.listener.after_cycles(now, count)
        except Exception as exc:  # noqa: BLE001 - a listener's bug must not stop the loop
            if not self._listener_failed:
                self._listener_failed = True
                say = self.core.log
                say.error(f"the loop's listener failed (said once; the loop goes on): {exc!r}",
                          "listener failed")

    def step(self) -> float:
        """One cycle by hand (paused), published at once; returns its time."""
        with self.lock:
            try:
                return self.cycle(1)
            finally:
                self.listener.flush()

    def _batch_size(self, limit: int) -> int:
        """How many cycles, at most ``limit``, to hand the backend at once (at least 1).

        Only an engine (a backend with its own clock) takes several: every cycle up to
        and including the next one on which the listener has something due, as long as
        the core says their cycles are no-ops (:meth:`RobotCore.quiet_until`, with half a
        cycle of margin for rounding); 1 when the next cycle may act. Only the last
        cycle of a batch can be due: the count errs on the short side.
        """
        backend = self.backend
        if limit <= 1 or not backend.capabilities.has_clock:
            return 1
        now, dt = backend.now(), backend.period
        # Cycles j = 1, 2, ... end at now + j dt; one is due once now + j dt + dt / 2
        # reaches the listener's next event.
        event = self.listener.next_event()
        steps = (limit if event == math.inf
                 else min(limit, math.ceil((event - now) / dt - 0.5 - 1e-3)))
        if steps <= 1:
            return 1
        quiet_until = self.core.quiet_until()
        if quiet_until == -math.inf:  # a trajectory: every cycle samples it
            return 1
        quiet = (quiet_until - now) / dt - 0.5
        if quiet != math.inf and quiet <= steps + 1:
            steps = math.ceil(quiet) - 1
        return max(1, steps)
