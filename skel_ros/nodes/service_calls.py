"""Service calls that survive a lost response: a bounded wait, re-sent only when idempotent.

rmw_fastrtps drops a service response when the server has not yet matched the client's
response reader (the server's log: ``failed to send response (timeout): client will not
receive response``). ``Client.service_is_ready()`` proves only that the request reaches the
server, so a client created moments ago, on a loaded machine, can wait forever for the
answer to a call that was served. The cure is to ask again, which is safe only when a
second identical request leaves the server as the first one did.

Which of our services may be re-sent (the caller says so: ``idempotent=``):

* yes: ``hardware_node/enable`` with false (torque off; a second one finds it off, and
  switches it off again if something enabled the node in between: the safe direction),
  ``hardware_node/estop`` (the state is e-stop either way), ``hardware_node/clear_faults``
  (clears what is in fault, never switches torque on; a second one finds "no fault"),
  ``sim_node/pause`` with its value (sets ``paused`` to it), ``set_parameters`` with values
  (sets the same values again), and the read-only ones: lifecycle ``get_state``,
  ``get_parameters``, ``list_parameters``, ``<controller>/query_state``;
* no: ``hardware_node/enable`` with true: it is not idempotent with respect to an e-stop.
  Served a second time it clears an e-stop pressed after the first was served, so a
  re-send after a lost answer would silently undo that e-stop. The package's callers go
  through :mod:`skel_ros.nodes.enable_call` instead: it asks the node's lifecycle
  ``get_state`` whether the first was served, and sends it again only when the node reads
  ``inactive``. (The tests, which press no e-stop while an enable of theirs is pending,
  still send it here with ``idempotent=True``.)
* no: ``sim_node/step`` (would step twice), ``sim_node/reset`` (would reset twice, the
  second time after the robot moved on), lifecycle ``change_state`` (the second request
  asks for the transition again from the state the first one reached: a second
  ``configure`` is refused from ``inactive``, and the caller would read a failure for a
  transition that succeeded).

A re-sent call's answer describes the state the first request left (``~/clear_faults``: "no
fault"). A re-sent request is a new request, served in the state the node is in when it
arrives: that is why ``~/enable`` true is not in the first list. Answers to
every request sent are accepted, so a slow server that answers the first request after the
second was sent loses nothing. A call that is not idempotent is sent once; if its answer is
lost the wait ends in :class:`ServiceTimeoutError`, saying that the call may have been
served.

Only rclpy API common to Humble, Jazzy and Kilted is used: ``Client.call_async``,
``service_is_ready`` and ``remove_pending_request``, and the futures' ``done`` / ``result``.
The caller spins the node (in another thread, or through ``wait``), as for any
``call_async``: :class:`ServiceCall` is polled from a timer, :func:`call_service` blocks.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ATTEMPT_TIMEOUT",
    "POLL_INTERVAL",
    "ServiceCall",
    "ServiceTimeoutError",
    "call_service",
]

ATTEMPT_TIMEOUT = 2.0
"""Seconds without an answer before an idempotent request is sent again.

Discovery on this machine announces every 250 ms (``config/fastdds_localhost.xml``) and the
server waits for the reader only its response writer's max blocking time (Fast DDS: 100 ms by
default); a loaded machine takes longer, so a few tenths of a second would re-send needlessly,
and several seconds would make every lost answer a long stall.
"""
POLL_INTERVAL = 0.05
"""Seconds :func:`call_service` waits between two looks at the call."""


class ServiceTimeoutError(TimeoutError):
    """No answer within the total wait.

    Attributes:
        service: The service's name.
        timeout: The total wait, seconds.
        attempt_timeout: The wait before a re-send, seconds (idempotent calls).
        attempts: How many requests were sent (0: the service never appeared).
    """

    def __init__(self, message: str, *, service: str, timeout: float,
                 attempt_timeout: float, attempts: int) -> None:
        super().__init__(message)
        self.service = service
        self.timeout = timeout
        self.attempt_timeout = attempt_timeout
        self.attempts = attempts


class ServiceCall:
    """One call of a service, advanced by :meth:`poll` while the caller's node spins.

    The request goes out once the service is ready. An idempotent one is sent again
    whenever ``attempt_timeout`` seconds pass with no answer (and the service is ready);
    the first answer to any of the requests is the call's. After ``timeout`` seconds in all
    (the wait for the service included) :meth:`poll` raises :class:`ServiceTimeoutError`.

    Args:
        client: An rclpy ``Client`` (any object with ``call_async``, ``service_is_ready``,
            ``remove_pending_request`` and ``srv_name``).
        request: The request message.
        idempotent: Whether sending the request twice leaves the server as sending it
            once does (see the module docstring's table); only then is it re-sent.
        timeout: Total seconds to wait for an answer, from construction.
        attempt_timeout: Seconds to wait for an answer before re-sending.
        clock: Monotonic seconds (injected by tests).
        log: Told, in one line, when a request is re-sent (e.g. a node logger's ``warning``).

    Raises:
        ValueError: ``timeout`` or ``attempt_timeout`` is not positive.
    """

    def __init__(self, client: Any, request: Any, *, idempotent: bool,  # noqa: ANN401
                 timeout: float, attempt_timeout: float = ATTEMPT_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic,
                 log: Callable[[str], Any] | None = None) -> None:
        if not timeout > 0.0 or not attempt_timeout > 0.0:
            raise ValueError(f"service call waits must be > 0, got timeout {timeout!r} and"
                             f" attempt_timeout {attempt_timeout!r}")
        self.client = client
        self.request = request
        self.idempotent = idempotent
        self.timeout = timeout
        self.attempt_timeout = attempt_timeout
        self._clock = clock
        self._log = log
        self._start = clock()
        self._sent_at = self._start
        self._futures: list[Any] = []
        self._response: Any = None

    @property
    def service(self) -> str:
        """The service's name, as the client has it."""
        return str(self.client.srv_name)

    @property
    def attempts(self) -> int:
        """How many requests have been sent."""
        return len(self._futures)

    @property
    def response(self) -> Any:  # noqa: ANN401 - the service's Response type
        """The answer, once :meth:`poll` has returned it (else None)."""
        return self._response

    def poll(self) -> Any:  # noqa: ANN401 - the service's Response type
        """Send or re-send as due; the answer once one has come, else None.

        Raises:
            ServiceTimeoutError: No answer within ``timeout`` seconds; the message names the
                service, the waits and the requests sent.
        """
        if self._response is not None:
            return self._response
        for future in self._futures:
            if future.done():
                self._response = future.result()
                self._forget_pending()
                return self._response
        now = self._clock()
        if now - self._start > self.timeout:
            self._forget_pending()
            raise self._timeout_error()
        due = not self._futures or (
            self.idempotent and now - self._sent_at >= self.attempt_timeout)
        if due and self.client.service_is_ready():
            if self._futures and self._log is not None:
                self._log(f"{self.service}: no answer within {self.attempt_timeout:g} s;"
                          f" asking again (request {len(self._futures) + 1}; the call is"
                          " idempotent)")
            self._futures.append(self.client.call_async(self.request))
            self._sent_at = now
        return None

    def cancel(self) -> None:
        """Stop waiting: the pending requests' answers, if any come, are dropped."""
        self._forget_pending()

    def _forget_pending(self) -> None:
        for future in self._futures:
            if not future.done():
                self.client.remove_pending_request(future)

    def _timeout_error(self) -> ServiceTimeoutError:
        if not self._futures:
            what = f"service {self.service} did not appear within {self.timeout:g} s"
        elif self.idempotent:
            what = (f"no answer from {self.service} within {self.timeout:g} s: sent"
                    f" {len(self._futures)} time(s), again after each {self.attempt_timeout:g}"
                    " s without an answer")
        else:
            what = (f"no answer from {self.service} within {self.timeout:g} s to its one"
                    " request (not re-sent: the call is not idempotent; the answer may have"
                    " been lost and the call served)")
        return ServiceTimeoutError(what, service=self.service, timeout=self.timeout,
                              attempt_timeout=self.attempt_timeout,
                              attempts=len(self._futures))


def call_service(client: Any, request: Any, *, idempotent: bool, timeout: float,  # noqa: ANN401
                 wait: Callable[[float], Any], attempt_timeout: float = ATTEMPT_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic,
                 log: Callable[[str], Any] | None = None) -> Any:  # noqa: ANN401
    """Call a service and return its answer: a :class:`ServiceCall` polled until done.

    Args:
        client: An rclpy ``Client``.
        request: The request message.
        idempotent: Whether it may be sent again (see the module docstring's list).
        timeout: Total seconds to wait for an answer (the wait for the service included).
        wait: Called with :data:`POLL_INTERVAL` between two polls: spin the node's
            executor that long (``lambda s: executor.spin_once(timeout_sec=s)``), or, when
            another thread spins it, sleep (it may raise to abandon the call, e.g. on
            Ctrl-C or when the server's process died).
        attempt_timeout: Seconds to wait for an answer before re-sending.
        clock: Monotonic seconds (injected by tests).
        log: Told, in one line, when a request is re-sent.

    Raises:
        ServiceTimeoutError: No answer within ``timeout`` seconds.
    """
    call = ServiceCall(client, request, idempotent=idempotent, timeout=timeout,
                       attempt_timeout=attempt_timeout, clock=clock, log=log)
    try:
        while (response := call.poll()) is None:
            wait(POLL_INTERVAL)
    except BaseException:
        call.cancel()
        raise
    return response
