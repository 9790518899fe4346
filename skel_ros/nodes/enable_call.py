"""Enabling a hardware node when the answer can be lost, without ever undoing an e-stop.

``~/enable true`` is not idempotent with respect to an e-stop: served a second time, it
clears an e-stop pressed after the first was served. So when its answer is lost (rmw_fastrtps
drops the answer to a client it has not matched yet: :mod:`skel_ros.nodes.service_calls`),
it is not re-sent blindly; the node is asked, read-only, whether the first one was served:

1. ``<node>/enable`` (std_srvs/SetBool, true) is sent once.
2. No answer within ``attempt_timeout`` (2 s): ``<node>/get_state`` (lifecycle_msgs/GetState,
   read-only, re-sent freely) is asked. The hardware node runs the activate transition for
   ``~/enable true`` from ``inactive``, so

   * ``active``: the enable was served (or something else activated the node). It is not
     sent again. An e-stop, a fault or a command timeout since leaves the node ``active``
     with torque off and commands refused, so what it is now is read from its summary on
     ``/diagnostics`` (status ``"<node name>: hardware"``, key ``state``; the first summary
     received after the get_state answer, ``diagnostics_wait`` seconds at most):
     ``enabled`` is a success; any other state (``estop``, ``fault``, ``disabled``,
     ``holding``) is reported as not enabled, and left as it is. No summary (not a hardware
     node, or none in time): a success that says the motion state is unknown (commands are
     refused if it is stopped).
   * ``inactive``: the enable was not served, or was served and refused (a failed activate
     leaves the node ``inactive``): it is sent again, as a new request (back to 1.).
   * ``unconfigured``, ``finalized``: the node cannot be enabled; the call fails naming the
     state. A transition in progress: asked again ``attempt_timeout`` later.

   An answer to any enable request, whenever it comes, is the call's (a slow node loses
   nothing).
3. After ``timeout`` seconds in all: :class:`~skel_ros.nodes.service_calls.ServiceTimeoutError`,
   saying which step did not answer.

Where the get_state service is: a node's ``~/enable`` is named ``<node's full name>/enable``
and a lifecycle node serves ``<node's full name>/get_state``, so :func:`get_state_service`
replaces the last name segment, ``enable``, by ``get_state``:
``/real/hardware_node/enable`` -> ``/real/hardware_node/get_state`` (a relative name stays
relative and resolves in the caller's namespace as the enable service does). A name whose
last segment is not ``enable``, or that has no node part (``enable``, ``/enable``), names no
lifecycle node's ``~/enable``: the enable is then never sent again, nor when the derived
``get_state`` does not appear (not a lifecycle node); the wait ends after ``timeout``,
saying that the answer was lost and why re-sending could undo an e-stop.

:class:`HardwareStateWatch` also serves the callers while they play: they stop and report
an ``estop`` or ``fault`` the node's summary shows, or a ``holding`` or ``disabled`` (a bus
fault that reconnected within a diagnostics period shows only ``holding``), instead of
claiming success. The
diagnostics name a node by its name without namespace, as the hardware node does: two
hardware nodes of the same name in different namespaces are not told apart (a stop of one
is reported to both callers).

Left open: an enable request that the node takes from its queue only after the get_state
asked ``attempt_timeout`` later (its executor busy all that time, both waiting, get_state
served first) is served after a get_state that read ``inactive``; the enable then sent
again finds the node active, and would clear an e-stop pressed in the milliseconds between
the two.

Only rclpy API common to Humble, Jazzy and Kilted is used (``create_client``,
``create_subscription`` and what :class:`~skel_ros.nodes.service_calls.ServiceCall` uses).
The caller spins the node, as for any ``call_async``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skel_ros.nodes.service_calls import (
    ATTEMPT_TIMEOUT,
    POLL_INTERVAL,
    ServiceCall,
    ServiceTimeoutError,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "DIAGNOSTICS_WAIT",
    "STOPPED_STATES",
    "EnableCall",
    "EnableResult",
    "HardwareState",
    "HardwareStateWatch",
    "get_state_service",
    "node_of_enable_service",
    "start_enable",
]

DIAGNOSTICS_WAIT = 3.0
"""Seconds to wait for the node's ``/diagnostics`` summary after get_state read ``active``
(the hardware node publishes it once a second)."""

STOPPED_STATES = frozenset({"estop", "fault"})
"""The summary states a player reports as a stop of the robot while it plays, from the
first summary after the enable on. Any other state but ``enabled`` (``holding``,
``disabled``) is one too from the second summary on (:meth:`HardwareStateWatch.stopped_since`).
"""

_ENABLED = "enabled"
_ACTIVE, _INACTIVE = "active", "inactive"
_CANNOT_ENABLE = frozenset({"unconfigured", "finalized"})


def node_of_enable_service(enable_service: str) -> str | None:
    """The node whose ``~/enable`` ``enable_service`` is, or None (see the module docstring).

    ``/real/hardware_node/enable`` -> ``/real/hardware_node``; ``hardware_node/enable`` ->
    ``hardware_node`` (relative); ``/robot/power_on``, ``enable``, ``/enable`` -> None.
    """
    node, sep, last = enable_service.rpartition("/")
    if not sep or last != "enable" or node in ("", "~") or node.endswith("/"):
        return None
    return node


def get_state_service(enable_service: str) -> str | None:
    """The lifecycle ``get_state`` service beside ``enable_service``, or None.

    ``/real/hardware_node/enable`` -> ``/real/hardware_node/get_state``: the node's
    ``~/enable`` and its lifecycle ``~/get_state`` (see the module docstring).
    """
    node = node_of_enable_service(enable_service)
    return None if node is None else f"{node}/get_state"


@dataclass(frozen=True)
class HardwareState:
    """A hardware node's summary on ``/diagnostics``.

    Attributes:
        state: Its ``state`` value (``enabled``, ``disabled``, ``estop``, ``fault``, ...).
        message: The status message (``"estop: ..."``).
        index: How many summaries of the node had been received, this one included.
    """

    state: str
    message: str
    index: int


class HardwareStateWatch:
    """The safety state a hardware node reports on ``/diagnostics``, as it arrives.

    Args:
        node: The rclpy node to subscribe with (the caller spins it).
        hardware_node: The hardware node's full name (``/real/hardware_node``); its
            summary status is ``"<name without namespace>: hardware"``.
    """

    def __init__(self, node: Any, hardware_node: str) -> None:  # noqa: ANN401 - rclpy Node
        from diagnostic_msgs.msg import DiagnosticArray

        self.hardware_node = hardware_node
        self.status_name = f"{hardware_node.rpartition('/')[2]}: hardware"
        self._lock = threading.Lock()
        self._latest: HardwareState | None = None
        self._last_stop: HardwareState | None = None
        self._last_idle: HardwareState | None = None  # the newest not enabled
        self._subscription = node.create_subscription(
            DiagnosticArray, "/diagnostics", self.on_diagnostics, 10)

    @property
    def count(self) -> int:
        """How many summaries of the node have been received (a mark for :meth:`since`)."""
        with self._lock:
            return 0 if self._latest is None else self._latest.index

    def since(self, mark: int) -> HardwareState | None:
        """The newest summary received after ``mark`` (a :attr:`count`), else None."""
        with self._lock:
            latest = self._latest
        return latest if latest is not None and latest.index > mark else None

    def stopped_since(self, mark: int) -> HardwareState | None:
        """A summary since ``mark`` saying the node no longer follows commands, else None.

        ``mark`` is the :attr:`count` when the enable was answered. The newest in
        :data:`STOPPED_STATES` after ``mark``, else the newest in any other state but
        ``enabled`` from ``mark + 2`` on. A bus fault that reconnects within one
        diagnostics period shows no ``fault`` at all: the summaries go from ``enabled``
        straight to ``holding`` (torque on where the devices kept it, commands refused until
        the next enable), and a run going on would record an arm standing still. The first
        summary after the mark may have been published before the enable was served
        (``disabled``, or ``holding`` before an ``~/enable``) and only delivered after its
        answer: it is not taken for a stop. The second was published a diagnostics period
        after the first, so after the enable.
        """
        with self._lock:
            stop, idle = self._last_stop, self._last_idle
        if stop is not None and stop.index > mark:
            return stop
        return idle if idle is not None and idle.index >= mark + 2 else None

    def on_diagnostics(self, msg: Any) -> None:  # noqa: ANN401 - DiagnosticArray
        """Take the node's summary from a ``/diagnostics`` message (the subscription's)."""
        for status in msg.status:
            if status.name != self.status_name:
                continue
            values = {kv.key: kv.value for kv in status.values}
            if "state" not in values:
                continue
            with self._lock:
                index = 1 if self._latest is None else self._latest.index + 1
                self._latest = HardwareState(values["state"], status.message, index)
                if self._latest.state in STOPPED_STATES:
                    self._last_stop = self._latest
                if self._latest.state != _ENABLED:
                    self._last_idle = self._latest


@dataclass(frozen=True)
class EnableResult:
    """How an enable ended.

    Attributes:
        service: The enable service.
        success: Motion is enabled: the answer said so, or, the answer lost, get_state said
            ``active`` and the diagnostics ``enabled`` (or said nothing).
        message: The answer's message, or what was read instead of it.
        answered: The enable's own answer came (False: read from get_state, diagnostics).
    """

    service: str
    success: bool
    message: str
    answered: bool


class EnableCall:
    """``<node>/enable`` true, advanced by :meth:`poll` while the caller's node spins.

    The rules are the module docstring's. :func:`start_enable` makes one from a node.

    Args:
        enable_client: The ``std_srvs/SetBool`` client of the enable service.
        get_state_client: The ``lifecycle_msgs/GetState`` client of the node's get_state
            (:func:`get_state_service`), or None: the enable is never sent again.
        watch: The node's diagnostics, read when get_state says ``active`` (None: not read).
        timeout: Total seconds to wait for the outcome, from construction.
        attempt_timeout: Seconds without an answer before get_state is asked.
        diagnostics_wait: Seconds to wait for the diagnostics after get_state said active.
        clock: Monotonic seconds (injected by tests).
        log: Told, in one line, when get_state is asked and when the enable is sent again.

    Raises:
        ValueError: A wait is not positive.
    """

    def __init__(self, enable_client: Any, get_state_client: Any | None, *,  # noqa: ANN401
                 watch: HardwareStateWatch | None = None, timeout: float,
                 attempt_timeout: float = ATTEMPT_TIMEOUT,
                 diagnostics_wait: float = DIAGNOSTICS_WAIT,
                 clock: Callable[[], float] = time.monotonic,
                 log: Callable[[str], Any] | None = None) -> None:
        if not (timeout > 0.0 and attempt_timeout > 0.0 and diagnostics_wait > 0.0):
            raise ValueError(f"enable waits must be > 0, got timeout {timeout!r},"
                             f" attempt_timeout {attempt_timeout!r} and diagnostics_wait"
                             f" {diagnostics_wait!r}")
        self.enable_client = enable_client
        self.get_state_client = get_state_client
        self.watch = watch
        self.timeout = timeout
        self.attempt_timeout = attempt_timeout
        self.diagnostics_wait = diagnostics_wait
        self._clock = clock
        self._log = log
        self._start = clock()
        self._sent_at = self._start
        self._futures: list[Any] = []  # every enable request sent
        self._send_due = True  # the first request, or a re-send get_state allowed
        self._asking: ServiceCall | None = None
        self._asked_at = self._start
        self._last_state = ""  # what get_state said last
        self._active_at: float | None = None  # when get_state said active
        self._diagnostics_mark = 0
        self._result: EnableResult | None = None

    @property
    def service(self) -> str:
        """The enable service's name, as the client has it."""
        return str(self.enable_client.srv_name)

    @property
    def get_state(self) -> str:
        """The get_state service's name ("" without one)."""
        return "" if self.get_state_client is None else str(self.get_state_client.srv_name)

    @property
    def attempts(self) -> int:
        """How many enable requests have been sent."""
        return len(self._futures)

    @property
    def result(self) -> EnableResult | None:
        """The outcome, once :meth:`poll` has returned it (else None)."""
        return self._result

    def poll(self) -> EnableResult | None:
        """Send, ask or read as due; the outcome once known, else None.

        Raises:
            ServiceTimeoutError: No outcome within ``timeout`` seconds; the message says
                why the enable was not sent again.
        """
        if self._result is None:
            self._result = self._advance()
            if self._result is not None:
                self.cancel()
        return self._result

    def run(self, wait: Callable[[float], Any]) -> EnableResult:
        """Poll until done, calling ``wait(POLL_INTERVAL)`` in between (as ``call_service``).

        Raises:
            ServiceTimeoutError: As :meth:`poll`.
        """
        try:
            while (result := self.poll()) is None:
                wait(POLL_INTERVAL)
        except BaseException:
            self.cancel()
            raise
        return result

    def cancel(self) -> None:
        """Stop waiting: the pending requests' answers, if any come, are dropped."""
        for future in self._futures:
            if not future.done():
                self.enable_client.remove_pending_request(future)
        if self._asking is not None:
            self._asking.cancel()

    # ------------------------------------------------------------------ steps

    def _advance(self) -> EnableResult | None:
        for future in self._futures:  # an answer to any request, whenever it comes
            if future.done():
                reply = future.result()
                return EnableResult(self.service, success=bool(reply.success),
                                    message=str(reply.message), answered=True)
        now = self._clock()
        if now - self._start > self.timeout:
            raise self._timeout_error()
        if self._active_at is not None:
            return self._read_diagnostics(now, self._active_at)
        if self._send_due:
            self._send(now)
        elif now - self._sent_at >= self.attempt_timeout:
            return self._ask(now)
        return None

    def _send(self, now: float) -> None:
        if not self.enable_client.service_is_ready():
            return
        from std_srvs.srv import SetBool

        if self._futures and self._log is not None:
            self._log(f"{self.get_state}: {self._last_state}: the enable was not served (or"
                      f" was refused); sending it again (request {len(self._futures) + 1})")
        self._futures.append(self.enable_client.call_async(SetBool.Request(data=True)))
        self._sent_at, self._send_due = now, False

    def _ask(self, now: float) -> EnableResult | None:
        """Ask get_state (again, ``attempt_timeout`` later) and act on its answer."""
        if self.get_state_client is None:
            return None  # nothing to ask: wait for the answer until the timeout
        if self._asking is None:
            if self._last_state and now - self._asked_at < self.attempt_timeout:
                return None  # a transition was in progress: ask again later
            from lifecycle_msgs.srv import GetState

            if self._log is not None:
                self._log(f"{self.service}: no answer within {self.attempt_timeout:g} s;"
                          f" asking {self.get_state} whether it was served (not sent again:"
                          " a second enable would clear an e-stop pressed since)")
            remaining = max(self.timeout - (now - self._start), 1e-3)
            self._asking = ServiceCall(self.get_state_client, GetState.Request(),
                                       idempotent=True, timeout=remaining,
                                       attempt_timeout=self.attempt_timeout, clock=self._clock)
            self._asked_at = now
        try:
            reply = self._asking.poll()
        except ServiceTimeoutError:
            raise self._timeout_error() from None
        if reply is None:
            return None
        self._asking = None
        self._last_state = str(reply.current_state.label) or f"state {reply.current_state.id}"
        if self._last_state == _INACTIVE:
            self._send_due = True
            self._send(now)
        elif self._last_state == _ACTIVE:
            self._active_at = now
            self._diagnostics_mark = 0 if self.watch is None else self.watch.count
            return self._read_diagnostics(now, now)
        elif self._last_state in _CANNOT_ENABLE:
            return self._unanswered(success=False, message=(
                f"the answer to {self.service} was lost; {self.get_state} says"
                f" {self._last_state}: the node cannot be enabled (configure it first)"))
        return None

    def _read_diagnostics(self, now: float, active_at: float) -> EnableResult | None:
        """After get_state said active (at ``active_at``): what the node says it is."""
        served = (f"the answer to {self.service} was lost; {self.get_state} says active:"
                  " the enable was served, and is not sent again")
        seen = None if self.watch is None else self.watch.since(self._diagnostics_mark)
        if seen is None:
            left = self.timeout - (active_at - self._start)
            if self.watch is not None and now - active_at < min(self.diagnostics_wait, left):
                return None
            where = ("it publishes no diagnostics" if self.watch is None else
                     f"no /diagnostics summary '{self.watch.status_name}' within"
                     f" {self.diagnostics_wait:g} s")
            return self._unanswered(success=True, message=(
                f"{served}; whether it is still enabled is unknown ({where}): an e-stop"
                " since would leave it active with torque off and commands refused"))
        if seen.state == _ENABLED:
            return self._unanswered(success=True,
                                    message=f"{served}; /diagnostics: {seen.message}")
        return self._unanswered(success=False, message=(
            f"{served}, but /diagnostics says {seen.state} ({seen.message}): motion is off,"
            f" commands are refused, and the {seen.state} stays in force (a second enable"
            " would clear it)"))

    def _unanswered(self, *, success: bool, message: str) -> EnableResult:
        return EnableResult(self.service, success=success, message=message, answered=False)

    def _timeout_error(self) -> ServiceTimeoutError:
        if not self._futures:
            what = f"service {self.service} did not appear within {self.timeout:g} s"
        else:
            if self.get_state_client is None:
                why = (f"{self.service} is not a lifecycle node's ~/enable (<node>/enable),"
                       " so whether it was served cannot be asked")
            elif self._last_state:
                why = f"{self.get_state} says {self._last_state}"
            else:
                why = (f"{self.get_state}, which would say whether it was served, did not"
                       " answer (not a lifecycle node?)")
            what = (f"no answer from {self.service} within {self.timeout:g} s"
                    f" ({len(self._futures)} request(s)); not sent again: its answer may have"
                    " been lost after it was served, and a second enable would clear an"
                    f" e-stop pressed since; {why}")
        return ServiceTimeoutError(what, service=self.service, timeout=self.timeout,
                                   attempt_timeout=self.attempt_timeout,
                                   attempts=len(self._futures))


def start_enable(node: Any, service: str, *, timeout: float,  # noqa: ANN401 - rclpy Node
                 attempt_timeout: float = ATTEMPT_TIMEOUT,
                 diagnostics_wait: float = DIAGNOSTICS_WAIT,
                 log: Callable[[str], Any] | None = None) -> EnableCall:
    """Start enabling ``service`` (``<node>/enable``) from ``node``: an :class:`EnableCall`.

    It gets a get_state client and a :class:`HardwareStateWatch` (its ``watch``, for the
    caller to keep while it plays) when ``service`` names a node's ``~/enable``
    (:func:`get_state_service`), else neither. ``node`` must be spun meanwhile.
    """
    from lifecycle_msgs.srv import GetState
    from std_srvs.srv import SetBool

    hardware_node = node_of_enable_service(service)
    get_state = get_state_service(service)
    return EnableCall(
        node.create_client(SetBool, service),
        None if get_state is None else node.create_client(GetState, get_state),
        watch=None if hardware_node is None else HardwareStateWatch(node, hardware_node),
        timeout=timeout, attempt_timeout=attempt_timeout,
        diagnostics_wait=diagnostics_wait, log=log)
