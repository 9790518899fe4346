"""The velocity an MIT motor in impedance mode is sent while position commands stream in.

In impedance mode the backend sends each cycle's limited target position as ``p_des`` and
its velocity as ``v_des``; the motor's firmware closes ``kp (p_des - q) + kd (v_des -
q')`` at its own rate. A joint streamed along a ramp at a steady speed must be sent that
speed as ``v_des``, cycle after cycle: a ``v_des`` that jumps between cycles makes the
motor's torque jump by ``kd`` times the jump.

It jumped when the commands came slower than the loop (``sim-to-real`` streams at 100 Hz
into the quadruped's 200 Hz loop): the rate limiter's feed-forward was the target's step
over one cycle, so a new command every other cycle gave twice the speed, then none. The
quadruped's MIT motors (kd 0.6-0.8) buzzed at 100 Hz by about ``kd`` times the joint's
speed, and joint_states at 50 Hz, every fourth cycle, read that torque at one phase of the
buzz: identification took it for damping (0.35-0.63 N m s/rad for a truth of 0.15, issue
29). Now a stream of goals at most ``STREAM_PERIODS`` control periods apart is spread
over the cycles between two of them; goals further apart stay steps, taken at once.

One elbow of the bundled arm on an AK80-9 (the protocol-level emulator, the backend's and
the emulator's clocks one manual clock); what the motor got is what the firmware decoded
(:meth:`~skel_ros.emulation.mit.MitEmulator.command`).
"""

from __future__ import annotations

import itertools
import time

import pytest

from skel_ros.emulation.mit import start_emulator
from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, parse_hardware_config
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind
from skel_ros.resources import example

CONFIG = """\
control_rate: 200.0
command_timeout: 0.0
safe_state: hold
buses:
  b: {protocol: mit, transport: {interface: virtual, channel: x}}
joints:
  elbow: {bus: b, id: 1, model: AK80-9, mode: impedance, options: {kp: 30.0, kd: 0.8}}
"""
SPEED = 0.3  # rad/s along the ramp, well inside the elbow's limits
V_LSB = 100.0 / 4095  # rad/s of v_des on the wire (12 bits over +-50 rad/s)


def _v_des_along_a_ramp(every: int) -> list[float]:
    """``v_des`` the motor decoded at each of 40 cycles of a ramp commanded every ``every``."""
    return [v for _, v in _along_a_ramp(every)]


class _Elbow:
    """The elbow on one emulated AK80-9 in ``mode``, enabled; one manual clock for both.

    ``options``: more of the backend's (``record_writes``).
    """

    def __init__(self, mode: str, **options: bool) -> None:
        self.t = 0.0
        skeleton = load_skel(example("arm.skel")).skeletons[0]
        config = parse_hardware_config(CONFIG.replace("mode: impedance", f"mode: {mode}"),
                                       "rig.yaml")
        self.emulator = start_emulator({}, [m.actuator for m in config.joints],
                                       {"clock": lambda: self.t, "initial_positions": {1: 0.0}})
        self.backend = HardwareBackend(
            config.with_transport("b", self.emulator.transport).bind(skeleton),
            clock=lambda: self.t, reenable_velocity=1.0, **options)
        self.runner = hardware_runner(self.backend)

    def __enter__(self) -> _Elbow:
        self.cycle()
        assert self.backend.status().state is MotionState.DISABLED
        request = self.backend.enable()
        for _ in range(100):
            self.cycle()
            if request.done:
                break
        assert request.ok, request.message
        return self

    def __exit__(self, *_exc: object) -> None:
        self.runner.cleanup()
        self.emulator.stop()

    def cycle(self) -> None:
        self.t += self.backend.period
        self.runner.cycle()

    def command(self, value: float) -> None:
        result = self.runner.core.command(CommandKind.POSITION, ["elbow"], [value])
        assert result.ok, result.message

    def sent(self) -> tuple[float, float]:
        """``(p_des, v_des)`` the motor decoded last."""
        command = self.emulator.command(1)
        assert command is not None
        return command[0], command[1]


def _along_a_ramp(every: int, mode: str = "impedance") -> list[tuple[float, float]]:
    """``(p_des, v_des)`` the motor decoded at each of 40 cycles of a ramp commanded every
    ``every`` cycles, the joint in ``mode``."""
    with _Elbow(mode) as rig:
        start, got = rig.t, []
        for k in range(60):
            if k % every == 0:
                rig.command(SPEED * (rig.t - start))
            rig.cycle()
            got.append(rig.sent())
        return got[-40:]  # past the start of the ramp


@pytest.mark.parametrize("every", [1, 2, 4])
def test_a_steady_stream_gets_a_steady_velocity_feed_forward(every: int) -> None:
    v_des = _v_des_along_a_ramp(every)
    assert max(v_des) - min(v_des) <= 2 * V_LSB, v_des
    assert sum(v_des) / len(v_des) == pytest.approx(SPEED, abs=2 * V_LSB)


def test_goals_further_apart_than_a_stream_are_steps() -> None:
    """A goal 5 periods after the last (slower than any stream the loop spreads) is
    taken at once: its whole step in the next cycle, then nothing (no added latency)."""
    v_des = _v_des_along_a_ramp(5)
    assert sum(v > 0.5 * SPEED for v in v_des) == 8  # one cycle in five, 40 cycles
    assert min(v_des) <= 2 * V_LSB


P_LSB = 25.0 / 65535  # rad of p_des on the wire (16 bits over +-12.5 rad)


@pytest.mark.parametrize(("mode", "first_share"), [("impedance", 0.5), ("position", 1.0)])
def test_only_a_joint_sent_its_velocity_has_its_stream_spread(mode: str,
                                                              first_share: float) -> None:
    """Commands every other cycle: an impedance joint's p_des goes half way in the cycle
    after each command, a position-mode joint (sent no velocity: nothing to buzz) is sent
    each command whole at once, without the stream period's lag."""
    sent = _along_a_ramp(2, mode)
    steps = [b[0] - a[0] for a, b in itertools.pairwise(sent)]
    step = SPEED * 2 * 0.005  # one command's step along the ramp, two 5 ms cycles
    if first_share == 1.0:
        whole = [round(x / step) for x in steps]  # every other cycle the whole step
        assert set(whole) == {0, 1}, steps
        assert abs(whole.count(1) - whole.count(0)) <= 1, steps
    else:
        assert all(abs(x - step / 2) <= 2 * P_LSB for x in steps), steps



def _frames_of_a_stream_between_cycles(mode: str) -> tuple[int, int, list[float], int, int]:
    """Commands every other cycle, each handed in half a period after a cycle and served
    there (as the loop does when woken, ``write_on_command``): frames the motor got over 20
    cycles, the commands, and the ``p_des`` it had after each cycle; then, after a pause of
    20 cycles, the frames of one more command served the same way and the cycle after it;
    and how often the backend woke the loop for those 11 commands."""
    with _Elbow(mode) as rig:
        wakes: list[float] = []
        rig.backend.bind_wake(lambda: wakes.append(rig.t))

        def frames() -> int:  # the emulator's thread counts what reached it: wait for it
            deadline = time.monotonic() + 5.0
            count = rig.emulator.frames_received(1)
            while time.monotonic() < deadline:
                time.sleep(0.02)
                if (now := rig.emulator.frames_received(1)) == count:
                    return count
                count = now
            return count

        for _ in range(4):  # the stream's first goals: a step, then a stream
            rig.command(0.0)
            rig.cycle()
            rig.cycle()
        start, before, commands, p_des = rig.t, frames(), 0, []
        wakes.clear()
        half = rig.backend.period / 2
        for k in range(20):
            if k % 2 == 0:
                rig.t += half  # half a period after the cycle
                rig.command(SPEED * (rig.t - start))
                commands += 1
                rig.backend.serve(rig.t)
                rig.t -= half
            rig.cycle()
            p_des.append(rig.sent()[0])
        streamed = frames() - before
        for _ in range(20):  # a pause: no command for 20 cycles
            rig.cycle()
        before = frames()
        rig.t += half
        rig.command(0.0)  # a goal after the pause
        rig.backend.serve(rig.t)
        rig.t -= half
        rig.cycle()
        return streamed, commands, p_des, frames() - before, len(wakes)


@pytest.mark.parametrize("mode", ["impedance", "position"])
def test_a_stream_is_written_by_the_cycles_only(mode: str) -> None:
    """A stream's goals are not also written when they arrive between two cycles
    (``write_on_command``): the bus carries a frame a cycle, where writing them on arrival
    doubled its writes at a stream at the control rate (issue 33: the node's CPU per
    command), for a goal at most a period sooner. For a spread stream (impedance mode) the
    motor also holds each cycle's command for a whole period, as ``skel-ros identify``'s
    correction of its torque replies assumes; written on arrival, the ramp went in uneven
    steps (the write cut the cycle's step short). A goal after a pause still goes on the
    wire at once: one frame more than the cycles', and the loop is woken for it alone."""
    frames, commands, p_des, after_pause, wakes = _frames_of_a_stream_between_cycles(mode)
    assert (frames, commands) == (20, 10)
    assert after_pause == 2  # written at once, then the cycle's
    assert wakes == 1  # the goal after the pause; none for the stream's
    if mode == "impedance":
        steps = [b - a for a, b in itertools.pairwise(p_des[3:])]  # past the stream's start
        assert all(abs(x - SPEED * 0.005) <= 2 * P_LSB for x in steps), steps  # an even ramp
