"""Service calls that survive a lost answer (skel_ros.nodes.service_calls).

First the rules on a stand-in client and clock (when a request is sent again, which answer
counts, what the timeout says), then over DDS against a server that never sends its first
answers, as rmw_fastrtps drops the answer to a client whose response reader it has not
matched yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from service_call import (
    DroppingServer,
    ManualClock,
    ScriptedClient,
    spin_call,
)

from skel_ros.nodes.service_calls import ServiceCall, ServiceTimeoutError, call_service

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def _call(client: ScriptedClient, clock: ManualClock, *, idempotent: bool,
          **log: Any) -> ServiceCall:
    return ServiceCall(client, "request", idempotent=idempotent, timeout=10.0,
                       attempt_timeout=1.0, clock=clock, **log)


def test_an_idempotent_request_is_sent_again_when_its_answer_does_not_come() -> None:
    client, clock, told = ScriptedClient(), ManualClock(), []
    call = _call(client, clock, idempotent=True, log=told.append)
    assert call.poll() is None
    assert len(client.sent) == 1
    clock.now = 0.99
    assert call.poll() is None
    assert len(client.sent) == 1
    clock.now = 1.0
    assert call.poll() is None
    assert len(client.sent) == call.attempts == 2
    assert told == [("/robot/sim_node/pause: no answer within 1 s; asking again"
                     " (request 2; the call is idempotent)")]
    client.sent[1]._result = "paused"
    assert call.poll() == call.response == "paused"
    assert client.removed == [client.sent[0]]  # its answer, if it comes, is dropped
    clock.now = 5.0
    assert call.poll() == "paused"
    assert len(client.sent) == 2


def test_a_late_answer_to_an_earlier_request_counts() -> None:
    client, clock = ScriptedClient(), ManualClock()
    call = _call(client, clock, idempotent=True)
    call.poll()
    clock.now = 1.5
    call.poll()
    client.sent[0]._result = "slow but there"
    assert call.poll() == "slow but there"
    assert client.removed == [client.sent[1]]


def test_a_request_that_is_not_idempotent_is_sent_once() -> None:
    client, clock = ScriptedClient(), ManualClock()
    call = _call(client, clock, idempotent=False)
    for clock.now in (0.0, 1.0, 5.0, 10.0):
        assert call.poll() is None
    assert len(client.sent) == 1
    clock.now = 10.01
    with pytest.raises(ServiceTimeoutError) as caught:
        call.poll()
    assert str(caught.value) == (
        "no answer from /robot/sim_node/pause within 10 s to its one request (not"
        " re-sent: the call is not idempotent; the answer may have been lost and the call"
        " served)")
    assert (caught.value.service, caught.value.timeout, caught.value.attempts) == (
        "/robot/sim_node/pause", 10.0, 1)
    assert client.removed == client.sent


def test_the_timeout_names_the_service_the_waits_and_the_requests() -> None:
    client, clock = ScriptedClient(), ManualClock()
    call = _call(client, clock, idempotent=True)
    while clock.now <= 10.0:
        assert call.poll() is None
        clock.now += 0.25
    with pytest.raises(ServiceTimeoutError, match=r"^no answer from /robot/sim_node/pause"
                       r" within 10 s: sent 11 time\(s\), again after each 1 s without an"
                       r" answer$"):
        call.poll()


def test_nothing_is_sent_before_the_service_is_ready_and_the_wait_includes_it() -> None:
    client, clock = ScriptedClient(ready=False), ManualClock()
    call = _call(client, clock, idempotent=True)
    clock.now = 9.0
    assert call.poll() is None
    assert client.sent == []
    client.ready = True
    assert call.poll() is None
    assert len(client.sent) == 1
    client.ready = False  # the server went away: nothing to send to
    clock.now = 10.0
    assert call.poll() is None
    assert len(client.sent) == 1

    never = _call(ScriptedClient(ready=False), clock, idempotent=True)
    clock.now = 20.01
    with pytest.raises(ServiceTimeoutError, match=r"^service /robot/sim_node/pause did not"
                       r" appear within 10 s$") as caught:
        never.poll()
    assert caught.value.attempts == 0


def test_call_service_waits_between_polls_and_an_abandoned_call_drops_its_requests() -> None:
    client, clock = ScriptedClient(), ManualClock()
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds
        if len(client.sent) == 2:
            client.sent[1]._result = "answer"

    assert call_service(client, "request", idempotent=True, timeout=10.0, wait=wait,
                        attempt_timeout=1.0, clock=clock) == "answer"
    assert 19 <= len(waits) <= 21  # 0.05 s at a time, the re-send after 1 s
    assert client.removed == [client.sent[0]]

    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    client = ScriptedClient()
    with pytest.raises(KeyboardInterrupt):
        call_service(client, "request", idempotent=True, timeout=10.0, wait=interrupted)
    assert client.removed == client.sent != []


def test_the_waits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        ServiceCall(ScriptedClient(), "request", idempotent=True, timeout=0.0)
    with pytest.raises(ValueError, match="must be > 0"):
        ServiceCall(ScriptedClient(), "request", idempotent=True, timeout=1.0,
                    attempt_timeout=float("nan"))


# ----------------------------------------------------------------------------- over DDS


@pytest.fixture
def client_node(ros_env: dict[str, str]) -> Iterator[tuple[Any, Any]]:
    """A node and its executor in a context of their own (the server has another)."""
    del ros_env
    rclpy = pytest.importorskip("rclpy")
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("service_calls_client", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        yield node, executor
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def _spin_until(executor: Any, condition: Callable[[], bool], limit: float = 30.0,
                ) -> None:
    """Spin until ``condition`` holds, ``limit`` seconds at the most."""
    for _ in range(int(limit / 0.05)):
        if condition():
            return
        executor.spin_once(timeout_sec=0.05)


def _paused(request: Any, response: Any, count: int) -> Any:
    response.success = bool(request.data)
    response.message = f"request {count}: paused"
    return response


@pytest.mark.ros
def test_a_lost_answer_is_asked_for_again_when_the_call_is_idempotent(
        client_node: tuple[Any, Any]) -> None:
    from std_srvs.srv import SetBool

    node, executor = client_node
    with DroppingServer(SetBool, "/lossy/pause", _paused, drop=2) as server:
        client = node.create_client(SetBool, "/lossy/pause")
        # The old way, one call_async: the request is served, its answer never comes.
        _spin_until(executor, client.service_is_ready)
        plain = client.call_async(SetBool.Request(data=True))
        _spin_until(executor, lambda: len(server.requests) == 1)
        _spin_until(executor, plain.done, 0.5)
        assert not plain.done()
        client.remove_pending_request(plain)

        reply = spin_call(executor, client, SetBool.Request(data=True), idempotent=True,
                          timeout=30.0, attempt_timeout=0.5)
        assert reply.success
        assert reply.message == "request 3: paused"
        assert len(server.requests) == 3


@pytest.mark.ros
def test_a_lost_answer_is_not_asked_for_again_when_the_call_is_not_idempotent(
        client_node: tuple[Any, Any]) -> None:
    from std_srvs.srv import Trigger

    node, executor = client_node

    def reset(_request: Any, response: Any, count: int) -> Any:
        response.success = True
        response.message = f"reset {count} time(s)"
        return response

    with DroppingServer(Trigger, "/lossy/reset", reset) as server:
        client = node.create_client(Trigger, "/lossy/reset")
        _spin_until(executor, client.service_is_ready)  # the 2 s below are for the answer
        with pytest.raises(ServiceTimeoutError, match=r"^no answer from /lossy/reset within 2 s to"
                           r" its one request \(not re-sent"):
            spin_call(executor, client, Trigger.Request(), idempotent=False, timeout=2.0,
                      attempt_timeout=0.2)
        assert len(server.requests) == 1
