"""Enabling without ever undoing an e-stop (skel_ros.nodes.enable_call).

First the rules on stand-in clients and clock (what is asked when the answer to
``~/enable`` does not come, when the enable is sent again and when never), then over DDS
against a hardware-node-like server (test/service_call.py ``HardwareLikeServer``) that
loses the answer to its first enable, served or not, with an e-stop pressed through its
``~/estop`` service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from service_call import ManualClock, ScriptedClient

from skel_ros.nodes.enable_call import (
    EnableCall,
    HardwareStateWatch,
    get_state_service,
    node_of_enable_service,
)
from skel_ros.nodes.service_calls import ServiceTimeoutError

if TYPE_CHECKING:
    from collections.abc import Iterator

pytest.importorskip("lifecycle_msgs")

ENABLE = "/robot/hardware_node/enable"
GET_STATE = "/robot/hardware_node/get_state"
ASKING = (f"{ENABLE}: no answer within 1 s; asking {GET_STATE} whether it was served (not"
          " sent again: a second enable would clear an e-stop pressed since)")


@pytest.mark.parametrize(("enable", "node", "get_state"), [
    ("/real/hardware_node/enable", "/real/hardware_node", "/real/hardware_node/get_state"),
    ("/hardware_node/enable", "/hardware_node", "/hardware_node/get_state"),
    ("hardware_node/enable", "hardware_node", "hardware_node/get_state"),  # relative
    ("/robot/power_on", None, None),  # not a node's ~/enable
    ("/robot/enable_motors", None, None),
    ("/enable", None, None),  # no node part
    ("enable", None, None),
    ("~/enable", None, None),  # the caller's own
])
def test_the_get_state_service_is_the_enable_services_node_s(
        enable: str, node: str | None, get_state: str | None) -> None:
    assert node_of_enable_service(enable) == node
    assert get_state_service(enable) == get_state


class _Node:
    def create_subscription(self, *_args: Any) -> None:
        return None


def _enabled(message: str = "enabled: holding", *, success: bool = True) -> Any:
    from std_srvs.srv import SetBool

    return SetBool.Response(success=success, message=message)


def _state(label: str) -> Any:
    from lifecycle_msgs.msg import State
    from lifecycle_msgs.srv import GetState

    ids = {"unconfigured": 1, "inactive": 2, "active": 3, "finalized": 4, "activating": 13}
    return GetState.Response(current_state=State(id=ids[label], label=label))


def _summary(state: str, name: str = "hardware_node: hardware") -> Any:
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

    return DiagnosticArray(status=[
        DiagnosticStatus(name="hardware_node: bus 0", message="ok",
                         values=[KeyValue(key="state", value="not this one")]),
        DiagnosticStatus(name=name, message=f"{state}: by the test",
                         values=[KeyValue(key="state", value=state)])])


class _Rig:
    """An EnableCall on stand-ins: enable and get_state clients, a watch, a clock."""

    def __init__(self, *, get_state: bool = True, watch: bool = True) -> None:
        self.clock = ManualClock()
        self.told: list[str] = []
        self.enable = ScriptedClient(ENABLE)
        self.get_state = ScriptedClient(GET_STATE) if get_state else None
        self.watch = HardwareStateWatch(_Node(), "/robot/hardware_node") if watch else None
        self.call = EnableCall(self.enable, self.get_state, watch=self.watch, timeout=10.0,
                               attempt_timeout=1.0, diagnostics_wait=2.0, clock=self.clock,
                               log=self.told.append)

    def at(self, now: float) -> Any:
        self.clock.now = now
        return self.call.poll()


def test_an_answer_is_the_outcome() -> None:
    rig = _Rig()
    assert rig.at(0.0) is None
    rig.enable.sent[0]._result = _enabled()
    result = rig.at(0.5)
    assert (result.success, result.message, result.answered) == (True, "enabled: holding", True)
    assert rig.get_state is not None
    assert rig.get_state.sent == []
    assert rig.told == []


def test_a_lost_answer_is_asked_of_get_state_and_active_is_not_sent_again() -> None:
    rig = _Rig()
    rig.at(0.0)
    assert rig.at(0.99) is None
    assert rig.get_state is not None
    assert rig.get_state.sent == []
    assert rig.at(1.0) is None  # no answer within 1 s: get_state, not a second enable
    assert len(rig.get_state.sent) == 1
    assert len(rig.enable.sent) == 1
    assert rig.told == [ASKING]
    assert rig.watch is not None
    rig.watch.on_diagnostics(_summary("disabled"))  # before the get_state answer: not read
    rig.get_state.sent[0]._result = _state("active")
    assert rig.at(1.1) is None  # waits for the node's next summary
    rig.watch.on_diagnostics(_summary("enabled"))
    result = rig.at(1.2)
    assert (result.success, result.answered) == (True, False)
    assert result.message == (f"the answer to {ENABLE} was lost; {GET_STATE} says active: the"
                              " enable was served, and is not sent again; /diagnostics:"
                              " enabled: by the test")
    assert len(rig.enable.sent) == 1
    assert rig.enable.removed == rig.enable.sent  # its answer, if it comes, is dropped


def test_an_estop_after_the_served_enable_is_reported_and_left_in_force() -> None:
    rig = _Rig()
    rig.at(0.0)
    rig.at(1.0)
    assert rig.get_state is not None
    assert rig.watch is not None
    rig.get_state.sent[0]._result = _state("active")
    rig.at(1.1)
    rig.watch.on_diagnostics(_summary("estop"))
    result = rig.at(1.2)
    assert (result.success, result.answered) == (False, False)
    assert result.message == (
        f"the answer to {ENABLE} was lost; {GET_STATE} says active: the enable was served,"
        " and is not sent again, but /diagnostics says estop (estop: by the test): motion is"
        " off, commands are refused, and the estop stays in force (a second enable would"
        " clear it)")
    for rig.clock.now in (2.0, 5.0, 20.0):  # done: nothing more is sent, no timeout
        assert rig.call.poll() is result
    assert len(rig.enable.sent) == 1


def test_inactive_means_not_served_and_the_enable_is_sent_again() -> None:
    rig = _Rig()
    rig.at(0.0)
    rig.at(1.0)
    assert rig.get_state is not None
    rig.get_state.sent[0]._result = _state("inactive")
    assert rig.at(1.1) is None
    assert len(rig.enable.sent) == 2
    assert rig.told[-1] == (f"{GET_STATE}: inactive: the enable was not served (or was"
                            " refused); sending it again (request 2)")
    rig.at(2.0)  # 0.9 s after the second request: not asked yet
    assert len(rig.get_state.sent) == 1
    rig.at(2.1)  # that one's answer lost too: asked again
    assert len(rig.get_state.sent) == 2
    rig.enable.sent[1]._result = _enabled("enabled: holding (request 2)")
    result = rig.at(2.2)
    assert (result.success, result.message, result.answered) == (
        True, "enabled: holding (request 2)", True)


def test_a_late_answer_to_the_first_enable_counts() -> None:
    rig = _Rig()
    rig.at(0.0)
    rig.at(1.0)
    rig.enable.sent[0]._result = _enabled("slow but there")
    result = rig.at(1.5)
    assert (result.message, result.answered) == ("slow but there", True)
    assert rig.get_state is not None
    assert rig.get_state.removed == rig.get_state.sent  # the question is dropped


def test_without_get_state_the_enable_is_never_sent_again() -> None:
    rig = _Rig(get_state=False, watch=False)
    while rig.clock.now <= 10.0:
        assert rig.call.poll() is None
        rig.clock.now += 0.25
    with pytest.raises(ServiceTimeoutError) as caught:
        rig.call.poll()
    assert str(caught.value) == (
        f"no answer from {ENABLE} within 10 s (1 request(s)); not sent again: its answer may"
        " have been lost after it was served, and a second enable would clear an e-stop"
        f" pressed since; {ENABLE} is not a lifecycle node's ~/enable (<node>/enable), so"
        " whether it was served cannot be asked")
    assert caught.value.attempts == len(rig.enable.sent) == 1


def test_a_get_state_that_never_answers_ends_in_a_timeout_that_says_so() -> None:
    rig = _Rig()
    assert rig.get_state is not None
    rig.get_state.ready = False  # not a lifecycle node: the derived get_state never appears
    while rig.clock.now <= 10.0:
        assert rig.call.poll() is None
        rig.clock.now += 0.25
    with pytest.raises(ServiceTimeoutError, match=(
            rf"^no answer from {ENABLE} within 10 s \(1 request\(s\)\); not sent again: .*;"
            rf" {GET_STATE}, which would say whether it was served, did not answer \(not a"
            r" lifecycle node\?\)$")):
        rig.call.poll()
    assert len(rig.enable.sent) == 1


def test_an_unconfigured_node_cannot_be_enabled() -> None:
    rig = _Rig()
    rig.at(0.0)
    rig.at(1.0)
    assert rig.get_state is not None
    rig.get_state.sent[0]._result = _state("unconfigured")
    result = rig.at(1.1)
    assert (result.success, result.answered) == (False, False)
    assert result.message.endswith(f"{GET_STATE} says unconfigured: the node cannot be enabled"
                                   " (configure it first)")
    assert len(rig.enable.sent) == 1


def test_a_transition_in_progress_is_asked_about_again_later() -> None:
    rig = _Rig()
    rig.at(0.0)
    rig.at(1.0)
    assert rig.get_state is not None
    rig.get_state.sent[0]._result = _state("activating")
    assert rig.at(1.1) is None
    assert rig.at(1.9) is None
    assert len(rig.get_state.sent) == 1
    assert rig.at(2.0) is None
    assert len(rig.get_state.sent) == 2
    assert len(rig.enable.sent) == 1


def test_active_with_no_diagnostics_is_a_success_that_says_the_state_is_unknown() -> None:
    rig = _Rig()
    rig.at(0.0)
    rig.at(1.0)
    assert rig.get_state is not None
    rig.get_state.sent[0]._result = _state("active")
    assert rig.at(1.1) is None
    assert rig.at(3.0) is None  # 2 s of diagnostics_wait from the answer at 1.1
    result = rig.at(3.1)
    assert (result.success, result.answered) == (True, False)
    assert result.message.endswith(
        "whether it is still enabled is unknown (no /diagnostics summary 'hardware_node:"
        " hardware' within 2 s): an e-stop since would leave it active with torque off and"
        " commands refused")


def test_the_watch_reads_its_node_s_summary_and_remembers_a_stop() -> None:
    watch = HardwareStateWatch(_Node(), "/real/hardware_node")
    watch.on_diagnostics(_summary("enabled", "other_node: hardware"))
    assert watch.count == 0
    watch.on_diagnostics(_summary("enabled"))
    mark = watch.count
    assert mark == 1
    assert watch.since(mark) is None
    watch.on_diagnostics(_summary("estop"))
    watch.on_diagnostics(_summary("enabled"))  # cleared since: the stop is still reported
    stop = watch.stopped_since(mark)
    assert stop is not None
    assert (stop.state, stop.message, stop.index) == ("estop", "estop: by the test", 2)
    assert watch.stopped_since(watch.count) is None


def test_the_waits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        EnableCall(ScriptedClient(ENABLE), None, timeout=0.0)
    with pytest.raises(ValueError, match="must be > 0"):
        EnableCall(ScriptedClient(ENABLE), None, timeout=1.0, diagnostics_wait=float("nan"))


# ----------------------------------------------------------------------------- over DDS


@pytest.fixture
def client_node(ros_env: dict[str, str]) -> Iterator[tuple[Any, Any]]:
    """A node and its executor in a context of their own (the server has another)."""
    del ros_env
    rclpy = pytest.importorskip("rclpy")
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("enable_call_client", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        yield node, executor
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.mark.ros
def test_an_estop_after_a_lost_enable_answer_stays_in_force(
        client_node: tuple[Any, Any]) -> None:
    """The first enable is served and its answer lost; the operator presses the e-stop
    (``~/estop`` service) before the answer would have been asked for again: the enable is
    not sent again, the e-stop stays, and the outcome says the node is active but in estop."""
    from service_call import HardwareLikeServer, spin_call
    from std_srvs.srv import Trigger

    from skel_ros.nodes.enable_call import start_enable

    node, executor = client_node
    told: list[str] = []
    with HardwareLikeServer("/robot/hardware_node") as server:
        estop = node.create_client(Trigger, "/robot/hardware_node/estop")
        call = start_enable(node, ENABLE, timeout=30.0, attempt_timeout=1.0, log=told.append)

        def wait(seconds: float) -> None:
            if server.enable_requests and not server.estops:  # served: press the e-stop
                assert spin_call(executor, estop, Trigger.Request(), idempotent=True).success
            executor.spin_once(timeout_sec=seconds)

        result = call.run(wait)
        assert server.enable_requests == [True]
        assert server.events[0] == "enable (answer lost)"
        assert server.events[1] == "estop"
        assert server.motion == "estop"
    assert (result.success, result.answered) == (False, False)
    assert result.message.startswith(f"the answer to {ENABLE} was lost; {GET_STATE} says"
                                     " active: the enable was served")
    assert "but /diagnostics says estop (estop: test)" in result.message
    assert told == [ASKING]


@pytest.mark.ros
def test_an_enable_lost_before_it_was_served_is_sent_again(
        client_node: tuple[Any, Any]) -> None:
    from service_call import HardwareLikeServer

    from skel_ros.nodes.enable_call import start_enable

    node, executor = client_node
    with HardwareLikeServer("/robot/hardware_node", served=False) as server:
        call = start_enable(node, ENABLE, timeout=30.0, attempt_timeout=1.0)
        result = call.run(lambda seconds: executor.spin_once(timeout_sec=seconds))
        assert server.events == ["enable (not served)", "get_state inactive", "enable"]
        assert server.motion == "enabled"
    assert (result.success, result.message, result.answered) == (
        True, "enabled: holding (request 2)", True)


@pytest.mark.ros
def test_a_lost_enable_answer_of_a_node_without_get_state_is_not_sent_again(
        client_node: tuple[Any, Any]) -> None:
    from service_call import HardwareLikeServer

    from skel_ros.nodes.enable_call import start_enable

    node, executor = client_node
    with HardwareLikeServer("/robot/hardware_node", get_state=False) as server:
        call = start_enable(node, ENABLE, timeout=4.0, attempt_timeout=0.5)
        with pytest.raises(ServiceTimeoutError, match=(
                rf"^no answer from {ENABLE} within 4 s \(1 request\(s\)\); not sent again: its"
                r" answer may have been lost after it was served, and a second enable would"
                rf" clear an e-stop pressed since; {GET_STATE}, which would say whether it was"
                r" served, did not answer \(not a lifecycle node\?\)$")):
            call.run(lambda seconds: executor.spin_once(timeout_sec=seconds))
        assert server.enable_requests == [True]


class _Never:
    def done(self) -> bool:
        return False


class _AnswerLost:
    """A real client whose answers never reach the caller: the request is served, as
    when rmw_fastrtps drops the answer."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.srv_name = client.srv_name

    def service_is_ready(self) -> bool:
        return bool(self.client.service_is_ready())

    def call_async(self, request: Any) -> _Never:
        self.client.call_async(request)
        return _Never()

    def remove_pending_request(self, _future: Any) -> None:
        pass


@pytest.mark.ros
def test_the_real_hardware_node_answers_as_the_rules_expect(
        ros_env: dict[str, str], client_node: tuple[Any, Any]) -> None:
    """The hardware node itself (emulated servos): its get_state is where
    get_state_service says, says ``active`` once an enable was served, and its
    /diagnostics summary is the one HardwareStateWatch reads; with an e-stop after the
    served enable (its answer lost), the outcome is "active, but estop" and the e-stop
    stays."""
    import signal
    import subprocess
    import sys

    from service_call import spin_call
    from std_srvs.srv import SetBool, Trigger

    from skel_ros.nodes.enable_call import start_enable
    from skel_ros.resources import example, resolve

    node, executor = client_node
    config = resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml")
    hardware = subprocess.Popen(
        [sys.executable, "-c", "from skel_ros.nodes.hardware_node import main; main()",
         "--ros-args", "-r", "__ns:=/real", "-p", f"skel_file:={example('arm.skel')}",
         "-p", f"hardware_config:={config}", "-p", "emulate:=true"],
        env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    enable_service = "/real/hardware_node/enable"
    try:
        # One enable client for both calls, matched with the node both ways before the
        # calls are timed: ~/enable false (torque off; the node starts with torque off)
        # answered. A new client's first request can take the node more than the calls'
        # 1 s to serve on a loaded host while discovery completes: get_state then says
        # inactive, and the call rightly sends it again (2 attempts, not 1).
        enable_client = node.create_client(SetBool, enable_service)
        assert spin_call(executor, enable_client, SetBool.Request(data=False),
                         idempotent=True).success
        plain = start_enable(node, enable_service, timeout=60.0, attempt_timeout=1.0)
        plain.enable_client = _AnswerLost(enable_client)
        result = plain.run(lambda seconds: executor.spin_once(timeout_sec=seconds))
        assert (result.success, result.answered, plain.attempts) == (True, False, 1)
        assert "get_state says active: the enable was served" in result.message
        assert "/diagnostics: enabled: " in result.message

        estop = node.create_client(Trigger, "/real/hardware_node/estop")
        call = start_enable(node, enable_service, timeout=60.0, attempt_timeout=1.0)
        call.enable_client = _AnswerLost(enable_client)
        pressed: list[Any] = []

        def wait(seconds: float) -> None:
            if call.attempts and not pressed:  # sent (and served at once): the e-stop
                pressed.append(spin_call(executor, estop, Trigger.Request(), idempotent=True))
            executor.spin_once(timeout_sec=seconds)

        result = call.run(wait)
        assert pressed[0].success, pressed[0].message
        assert (result.success, result.answered, call.attempts) == (False, False, 1)
        assert "but /diagnostics says estop (estop: torque off" in result.message
        assert call.watch is not None
        later = call.watch.count
        for _ in range(40):  # 2 s: the node still says estop (nothing enabled it again)
            executor.spin_once(timeout_sec=0.05)
        seen = call.watch.since(later)
        assert seen is not None
        assert seen.state == "estop"
    finally:
        hardware.send_signal(signal.SIGINT)  # torque off, then it ends
        try:
            output, _ = hardware.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            hardware.kill()
            output, _ = hardware.communicate()
    assert "Traceback" not in output, output


def test_a_node_holding_or_disabled_after_the_enable_is_a_stop() -> None:
    """A bus fault that reconnects within one diagnostics period shows no ``fault``: the
    summaries go from ``enabled`` to ``holding`` (commands refused until an enable). The
    first summary after the enable's answer may predate the enable, so only from the
    second on is a state other than ``enabled`` a stop; ``estop`` and ``fault`` always.
    """
    watch = HardwareStateWatch(_Node(), "/real/hardware_node")
    watch.on_diagnostics(_summary("disabled"))
    mark = watch.count  # the enable was answered here
    watch.on_diagnostics(_summary("disabled"))  # published before the enable was served
    assert watch.stopped_since(mark) is None
    watch.on_diagnostics(_summary("enabled"))
    assert watch.stopped_since(mark) is None
    watch.on_diagnostics(_summary("holding"))  # the bus failed and came back, torque kept
    stop = watch.stopped_since(mark)
    assert stop is not None
    assert (stop.state, stop.message, stop.index) == ("holding", "holding: by the test", 4)
    # Enabled again: a later mark does not see the old stop.
    mark = watch.count
    watch.on_diagnostics(_summary("enabled"))
    watch.on_diagnostics(_summary("enabled"))
    assert watch.stopped_since(mark) is None
    # A fault is a stop from the first summary on.
    mark = watch.count
    watch.on_diagnostics(_summary("fault"))
    assert watch.stopped_since(mark).state == "fault"
