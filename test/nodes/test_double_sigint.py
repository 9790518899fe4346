"""Ctrl-C in a terminal: SIGINT twice, close together, never a traceback or a half-done stop.

A terminal's Ctrl-C goes to the whole process group; under ``ros2 launch`` each node gets
it once from the terminal and once from launch. Before ``skel_ros.nodes.shutdown`` the
second one interrupted the cleanup (sim_node: joining the stepping thread; hardware_node:
switching torque off, stopping its emulator) with a KeyboardInterrupt traceback, or hit
the interpreter's exit, and the node ended with status -2.

Each test starts real node processes, waits until they run, sends the two SIGINTs 50 ms
apart and expects status 0 and no traceback. The hardware test owns the emulated servos
(the node reaches them through ``port:=``), so it can ask them afterwards whether torque
ended off. The race is timing-dependent: a test may pass by luck before the fix, but on
this machine the old code failed it most of the time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from polling import wait_for_line
from service_call import spin_call

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = [pytest.mark.ros, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
GAP = 0.05  # s between the two SIGINTs: the terminal's and launch's
STARTUP = 90.0  # s: generous, the machine is shared


def _node(module: str, *params: str) -> list[str]:
    args = [sys.executable, "-c", f"from skel_ros.nodes.{module} import main; main()",
            "--ros-args", "-p", f"skel_file:={ARM}"]
    for p in params:
        args += ["-p", p]
    return args


def _finish(proc: subprocess.Popen[str], lines: list[str]) -> str:
    try:
        rest, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, _ = proc.communicate()
    return "".join(lines) + rest


def _start(command: list[str], env: dict[str, str], *,
           group: int | None = None) -> subprocess.Popen[str]:
    # Its own process group (or the given one), as a terminal's foreground job has.
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        process_group=0 if group is None else group)


@pytest.fixture
def servos() -> Iterator[object]:
    """The arm's four emulated Dynamixel servos, owned by the test."""
    from skel_ros.emulation import emulator_for
    from skel_ros.hardware import load_hardware_config

    config = load_hardware_config(ARM_YAML)
    (bus,) = config.buses
    emulator = emulator_for(bus.protocol)(bus.transport,
                                          [m.actuator for m in config.joints_on(bus.name)], {})
    try:
        yield emulator
    finally:
        emulator.stop()


def _enable() -> None:
    """Switch the hardware node's torque on (the ``~/enable`` service)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import SetBool

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("sigint_test_client", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        client = node.create_client(SetBool, "/hardware_node/enable")
        reply = spin_call(executor, client, SetBool.Request(data=True), idempotent=True,
                          timeout=STARTUP)
        assert reply.success, reply.message
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def test_hardware_node_twice_interrupted_ends_cleanly_with_torque_off(
        ros_env: dict[str, str], servos: object) -> None:
    emulator = servos
    ids = [1, 2, 3, 4]
    proc = _start(_node("hardware_node", f"hardware_config:={ARM_YAML}",
                        f"port:={emulator.transport['port']}"), ros_env)  # type: ignore[attr-defined]
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        wait_for_line(proc.stdout, "every bus connected", lines)
        _enable()
        assert all(emulator.state(i).torque_enabled for i in ids)  # type: ignore[attr-defined]
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(GAP)
        os.killpg(proc.pid, signal.SIGINT)
    finally:
        output = _finish(proc, lines)
    assert "Traceback" not in output, output
    assert proc.returncode == 0, output
    for i in ids:
        assert not emulator.state(i).torque_enabled, (i, output)  # type: ignore[attr-defined]
        writes = [v for _, v in emulator.torque_writes(i)]  # type: ignore[attr-defined]
        assert writes[-1] == 0, (i, writes)


def test_launch_like_group_twice_interrupted_ends_cleanly(ros_env: dict[str, str]) -> None:
    """sim_node and hardware_node (emulated servos) in one group: the terminal's SIGINT to
    the group, then launch's to each process."""
    sim = _start(_node("sim_node"), ros_env)
    hardware = _start(_node("hardware_node", f"hardware_config:={ARM_YAML}", "emulate:=true"),
                      ros_env, group=sim.pid)
    procs: dict[str, tuple[subprocess.Popen[str], str, list[str]]] = {
        "sim_node": (sim, "simulating", []), "hardware_node": (hardware, "every bus connected", [])}
    outputs = {}
    try:
        for proc, ready, lines in procs.values():
            assert proc.stdout is not None
            wait_for_line(proc.stdout, ready, lines)
        os.killpg(sim.pid, signal.SIGINT)
        time.sleep(GAP)
        for proc, _, _ in procs.values():
            os.kill(proc.pid, signal.SIGINT)
    finally:
        for name, (proc, _, lines) in procs.items():
            outputs[name] = _finish(proc, lines)
    for name, (proc, _, _) in procs.items():
        assert "Traceback" not in outputs[name], (name, outputs[name])
        assert proc.returncode == 0, (name, outputs[name])
