"""Property: no target outside the limits ever reaches the wire.

25,000+ random commands (finite, huge, NaN, inf, unknown names, wrong lengths) go
through the whole path: ``RobotCore.command`` (the gate) -> rate limiter ->
``DynamixelBus`` -> pty -> the Dynamixel emulator (a separate process). A tap on the pty
decodes every Sync Write the driver sends, with its own Protocol 2.0 parser (independent
of the driver's codec), and every Goal Position that arrived, decoded and mapped back to
its DOF, is checked against the position limits (model limits tightened by the YAML)
with no tolerance, and, between consecutive writes, against the velocity limits.

12 servos (the quadruped example), 12 single-DOF commands per cycle plus one multi-DOF
command every cycle: about 1,900 cycles, 23,000 goals on the wire. (It was 100,000
commands, ~7,700 cycles, nearly all of it the stepped loop and pty round trips; at 25,000
every DOF still gets ~2,000 random targets and its goals touch a limit ~80
times on average, well beyond what a clamping or mapping defect needs to show.)
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sync_write_tap import SyncWriteTap

from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, parse_hardware_config
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind

dynamixel = pytest.importorskip("skel_ros.emulation.dynamixel")

REPO = Path(__file__).resolve().parents[2]
QUADRUPED = REPO / "examples" / "quadruped.skel"
BAUD = 4_000_000
TICKS_PER_REV = 4096
CENTER = 2048
TICK = 2 * math.pi / TICKS_PER_REV
COMMANDS = 25_000
LEGS = ("fl", "fr", "hl", "hr")
DOFS = ("hip_abd", "hip_pitch", "knee")


def _config(port: Path) -> str:
    # This test's loop is stepped, not timed, and a tap thread relays every byte: on a
    # loaded machine it may pause longer than the default Bus Watchdog (0.1 s) and the
    # reply margin (0.05 s), which would end the run in a (correct) fault or hold.
    lines = ["control_rate: 500.0", "command_timeout: 0.0", "device_watchdog: 2.0",
             "timeout_margin: 0.5", "buses:", "  legs:",
             "    protocol: dynamixel", f'    transport: {{port: "{port}", baudrate: {BAUD}}}',
             "joints:"]
    for i, name in enumerate(f"{leg}_{dof}" for leg in LEGS for dof in DOFS):
        # Mixed directions, gears and offsets: the check is in DOF space after decoding.
        extra = ("direction: -1, zero_offset: 0.2" if i % 3 == 1 else
                 "gear_ratio: 1.5, zero_offset: -0.4" if i % 3 == 2 else "")
        lim = ", limits: {position: {lower: -0.5, upper: 0.6}, velocity: 3.0}" if i == 0 else ""
        lines.append(f"  {name}: {{bus: legs, id: {i + 1}, model: XM430-W350"
                     f"{', ' + extra if extra else ''}{lim}}}")
    return "\n".join(lines) + "\n"


def _random_values(rng: np.random.Generator, n: int) -> np.ndarray:
    kind = rng.integers(0, 10, size=n)
    values = rng.uniform(-4.0, 4.0, size=n)
    values[kind == 0] = np.nan
    values[kind == 1] = rng.choice([np.inf, -np.inf], size=(kind == 1).sum())
    values[kind == 2] = rng.choice([1e300, -1e300, 1e9, -1e9], size=(kind == 2).sum())
    return values


@pytest.mark.slow
def test_no_target_outside_the_limits_reaches_the_wire(tmp_path: Path) -> None:  # noqa: PLR0915
    skeleton = load_skel(QUADRUPED).skeletons[0]
    port = tmp_path / "ttyDXL"
    config = parse_hardware_config(_config(port), "quadruped_dxl.yaml")
    bound = config.bind(skeleton)
    maps = {m.actuator.id: m for m in config.joints}
    initial = {m.actuator.id: m.to_actuator(skeleton.dof(m.name).initial_position)
               for m in config.joints}
    emulator = dynamixel.start_emulator({"baudrate": BAUD}, [m.actuator for m in config.joints],
                                        {"initial_positions": initial})
    tap = SyncWriteTap(emulator.transport["port"], port)
    t = [0.0]
    backend = HardwareBackend(bound, clock=lambda: t[0])
    runner = hardware_runner(backend)
    rng = np.random.default_rng(2024)
    names = list(bound.names)
    sent = accepted = 0
    try:
        for _ in range(20):
            t[0] += backend.period
            runner.cycle()
            if backend.state is MotionState.DISABLED:
                break
        assert backend.state is MotionState.DISABLED, backend.status().message
        req = backend.enable()
        t[0] += backend.period
        runner.cycle()
        assert req.ok, req.message
        while sent < COMMANDS:
            for name, value in zip(names, _random_values(rng, len(names)), strict=True):
                accepted += runner.core.command(CommandKind.POSITION, [name], [value]).ok
            subset = list(rng.choice(names, size=int(rng.integers(1, 13)), replace=False))
            if rng.random() < 0.05:
                subset.append("no_such_dof")
            count = len(subset) + (1 if rng.random() < 0.05 else 0)
            accepted += runner.core.command(CommandKind.POSITION, subset,
                                        _random_values(rng, count)).ok
            sent += len(names) + 1
            t[0] += backend.period
            runner.cycle()
        status = backend.status()
        assert status.state is MotionState.ENABLED, status.message
    finally:
        runner.cleanup()
        tap.close()
        emulator.stop()

    assert sent >= COMMANDS
    assert 0.3 * sent < accepted < 0.9 * sent  # both kinds were exercised
    assert not tap.other_writes
    cycles = len(tap.goals)
    assert cycles > 0.9 * (COMMANDS / 13)
    lo = {i: bound.limits[m.name].position_lower for i, m in maps.items()}
    hi = {i: bound.limits[m.name].position_upper for i, m in maps.items()}
    vmax = {i: bound.limits[m.name].max_velocity for i, m in maps.items()}
    previous: dict[int, float] = {}
    at_limit = 0
    for goals in tap.goals:
        for dxl_id, ticks in goals.items():
            m = maps[dxl_id]
            q = m.from_actuator((ticks - CENTER) * TICK)
            # Exactly inside: a goal at a limit is encoded on the tick inside it.
            assert lo[dxl_id] <= q <= hi[dxl_id], (m.name, q, lo[dxl_id], hi[dxl_id])
            at_limit += q - lo[dxl_id] < TICK or hi[dxl_id] - q < TICK
            if dxl_id in previous:
                # Between two goals, each within a tick of its target: two ticks of slack.
                step = abs(q - previous[dxl_id])
                tol = TICK / m.gear_ratio
                assert step <= vmax[dxl_id] * backend.period + 2 * tol, (m.name, step)
            previous[dxl_id] = q
    # Targets went to the limits and back: the test covered the edges (943 goals
    # within a tick of a limit at this seed: the threshold is about half of that).
    assert at_limit > 500
    assert status.guard_corrections == 0
