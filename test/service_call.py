"""Service calls from the tests, and a server that loses answers to test them with.

Every test that calls a service goes through :func:`spin_call`: the product's
:func:`skel_ros.nodes.service_calls.call_service` (a bounded wait; an idempotent request is
sent again when its answer is lost, as rmw_fastrtps loses the answer to a client whose
response reader the server has not matched yet), spinning the test's executor meanwhile.
Which calls are idempotent: the table in :mod:`skel_ros.nodes.service_calls`.

:class:`DroppingServer` loses the first answers of any service; :class:`HardwareLikeServer`
is a hardware node as far as enabling goes (``~/enable``, lifecycle ``get_state``,
``~/estop``, its ``/diagnostics`` summary), for :mod:`skel_ros.nodes.enable_call`.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from skel_ros.nodes.service_calls import ATTEMPT_TIMEOUT, call_service

if TYPE_CHECKING:
    from collections.abc import Callable

CALL_TIMEOUT = 30.0  # s for a service to appear and answer (a bound, not a measurement)


def spin_call(executor: Any, client: Any, request: Any, *, idempotent: bool,
              timeout: float = CALL_TIMEOUT, check: Callable[[], None] | None = None,
              attempt_timeout: float = ATTEMPT_TIMEOUT) -> Any:
    """Call ``client``'s service with ``request``, spinning ``executor``; the answer.

    Args:
        executor: The executor the client's node is in (spun here, 0.05 s at a time).
        client: An rclpy client.
        request: The request.
        idempotent: Whether it may be sent again when its answer does not come.
        timeout: Seconds for the service to appear and answer in all.
        check: Called between spins; raises to give up (e.g. the node's process ended).
        attempt_timeout: Seconds without an answer before an idempotent re-send.

    Raises:
        skel_ros.nodes.service_calls.ServiceTimeoutError: No answer within ``timeout``; the
            message names the service and the waits.
    """
    def wait(seconds: float) -> None:
        if check is not None:
            check()
        executor.spin_once(timeout_sec=seconds)

    return call_service(client, request, idempotent=idempotent, timeout=timeout, wait=wait,
                        attempt_timeout=attempt_timeout)


class _Dropped(Exception):  # noqa: N818 - not an error: the server's way to drop an answer
    """Raised by the service callback so that rclpy sends no answer."""


class _ServerThread:
    """A node in a context of its own, spun by a thread of its own (a test's peer)."""

    def _open(self, name: str, namespace: str = "/") -> Any:
        """Make the context and the node (the caller adds its services, then :meth:`_run`)."""
        import rclpy

        self._context = rclpy.Context()
        rclpy.init(context=self._context)
        self._node = rclpy.create_node(name, namespace=namespace, context=self._context)
        return self._node

    def _run(self) -> None:
        """Spin the node in the thread until :meth:`close`."""
        from rclpy.executors import SingleThreadedExecutor

        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._running = True
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self._running:
            with contextlib.suppress(_Dropped):
                self._executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        """Stop the server's thread and shut its context down."""
        import rclpy

        self._running = False
        self._thread.join(timeout=10.0)
        self._executor.shutdown()
        self._node.destroy_node()
        rclpy.try_shutdown(context=self._context)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DroppingServer(_ServerThread):
    """A service whose first ``drop`` answers are never sent; the later ones are.

    To its clients this is the answer rmw_fastrtps drops when the client's response
    reader is not matched yet: the request was served (``requests`` holds it), no answer
    comes. It runs in its own context, node and thread (use it as a context manager).

    Args:
        srv_type: The service type.
        name: The service's name.
        answer: Fills the response: ``answer(request, response, count)``, ``count`` the
            number of requests so far (this one included); returns the response.
        drop: How many of the first requests go unanswered.
    """

    def __init__(self, srv_type: Any, name: str,
                 answer: Callable[[Any, Any, int], Any], *, drop: int = 1) -> None:
        self.requests: list[Any] = []
        self._answer = answer
        self._drop = drop
        self._open("dropping_server").create_service(srv_type, name, self._serve)
        self._run()

    def _serve(self, request: Any, response: Any) -> Any:
        self.requests.append(request)
        if len(self.requests) <= self._drop:
            raise _Dropped
        return self._answer(request, response, len(self.requests))

class HardwareLikeServer(_ServerThread):
    """A hardware node as far as enabling goes, losing the answers to its first enables.

    It keeps the hardware node's rules (docs/hardware.md, Safety and Lifecycle): the
    lifecycle state is ``inactive`` until ``<node>/enable`` true runs the activate
    transition (``active``, motion ``enabled``); an e-stop (service ``<node>/estop`` or topic
    ``<node>/estop``) cuts motion (``estop``) and leaves the node ``active``; an enable
    while ``active`` clears the e-stop, or answers "already enabled". ``<node>/get_state``
    (lifecycle_msgs/GetState) says the lifecycle state, and ``/diagnostics`` carries the
    node's summary (``"<node name>: hardware"``, key ``state``) every ``diagnostics_period``
    seconds (the node's is 1 s).

    The first ``drop`` enable requests get no answer: with ``served``, they are served and
    their answer lost (rmw_fastrtps's lost answer), else they are lost before being served
    (the node's state unchanged). It runs in its own context, node and thread (use it as a
    context manager).

    Args:
        node: The node's full name, e.g. ``/robot/hardware_node``.
        drop: How many of the first enable requests go unanswered.
        served: Whether those were served (else they change nothing).
        get_state: Whether it serves ``<node>/get_state`` (False: not a lifecycle node).
        diagnostics_period: Seconds between two ``/diagnostics`` summaries.
    """

    def __init__(self, node: str, *, drop: int = 1, served: bool = True,
                 get_state: bool = True, diagnostics_period: float = 0.2) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from lifecycle_msgs.srv import GetState
        from std_msgs.msg import Bool
        from std_srvs.srv import SetBool, Trigger

        self.enable_requests: list[bool] = []  # every enable request received, in order
        self.events: list[str] = []  # enables, get_state answers, e-stops, in order
        self.estops = 0
        self.lifecycle = "inactive"
        self.motion = "disabled"
        self._name = node.rpartition("/")[2]
        self._drop = drop
        self._served = served
        namespace, _, name = node.rpartition("/")
        self._open(name, namespace or "/")
        self._node.create_service(SetBool, f"{node}/enable", self._on_enable)
        self._node.create_service(Trigger, f"{node}/estop", self._on_estop)
        self._node.create_subscription(Bool, f"{node}/estop", self._on_estop_topic, 10)
        if get_state:
            self._node.create_service(GetState, f"{node}/get_state", self._on_get_state)
        self._diagnostics = self._node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._node.create_timer(diagnostics_period, self._publish_diagnostics)
        self._run()

    def _on_enable(self, request: Any, response: Any) -> Any:
        self.enable_requests.append(bool(request.data))
        lost = len(self.enable_requests) <= self._drop
        if lost and not self._served:
            self.events.append("enable (not served)")
            raise _Dropped
        self.events.append("enable (answer lost)" if lost else "enable")
        if not request.data:
            self.lifecycle, self.motion = "inactive", "disabled"
            response.success, response.message = True, "torque off"
        elif self.lifecycle == "active" and self.motion == "enabled":
            response.success, response.message = True, "already enabled"
        else:
            cleared = " (e-stop cleared)" if self.motion == "estop" else ""
            self.lifecycle, self.motion = "active", "enabled"
            response.success = True
            response.message = (f"enabled: holding (request {len(self.enable_requests)})"
                                f"{cleared}")
        if lost:
            raise _Dropped
        return response

    def _on_get_state(self, _request: Any, response: Any) -> Any:
        from lifecycle_msgs.msg import State

        ids = {"inactive": State.PRIMARY_STATE_INACTIVE, "active": State.PRIMARY_STATE_ACTIVE}
        self.events.append(f"get_state {self.lifecycle}")
        response.current_state = State(id=ids[self.lifecycle], label=self.lifecycle)
        return response

    def _on_estop(self, _request: Any, response: Any) -> Any:
        self._estop()
        response.success, response.message = True, "estop: torque off"
        return response

    def _on_estop_topic(self, msg: Any) -> None:
        if msg.data:
            self._estop()

    def _estop(self) -> None:
        self.events.append("estop")
        self.estops += 1
        self.motion = "estop"

    def _publish_diagnostics(self) -> None:
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

        msg = DiagnosticArray()
        msg.header.stamp = self._node.get_clock().now().to_msg()
        level = DiagnosticStatus.ERROR if self.motion == "estop" else DiagnosticStatus.OK
        msg.status = [DiagnosticStatus(
            level=level, name=f"{self._name}: hardware", message=f"{self.motion}: test",
            values=[KeyValue(key="state", value=self.motion)])]
        self._diagnostics.publish(msg)

# ---------------------------------------------------------------- doubles without ROS


class ScriptedFuture:
    """A request's future that the test answers by hand (``_result``)."""

    def __init__(self) -> None:
        self._result: Any = None

    def done(self) -> bool:
        return self._result is not None

    def result(self) -> Any:
        return self._result


class ScriptedClient:
    """A service client that records the requests; the test answers them by hand."""

    def __init__(self, srv_name: str = "/robot/sim_node/pause", *, ready: bool = True) -> None:
        self.srv_name = srv_name
        self.ready = ready
        self.sent: list[ScriptedFuture] = []
        self.removed: list[ScriptedFuture] = []

    def service_is_ready(self) -> bool:
        return self.ready

    def call_async(self, _request: Any) -> ScriptedFuture:
        self.sent.append(ScriptedFuture())
        return self.sent[-1]

    def remove_pending_request(self, future: ScriptedFuture) -> None:
        self.removed.append(future)


class ManualClock:
    """A clock the test moves (``now``)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

