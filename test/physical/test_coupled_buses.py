"""Physics worlds apart move the robot as it moves only where their buses do not meet.

A world is the whole robot, where the joints of the buses that move other worlds have no
device and hang limp. That is exact for the legs of a robot on a stand (they meet at a
body fixed to the world), wrong for an arm whose shoulder and wrist are on buses of two
worlds, or for a floating base above both (:func:`skel_ros.physical.option.
coupled_buses`). The buses of this package's emulators share one world
(:mod:`skel_ros.physical.host`), so an arm split over two Dynamixel buses is one robot, and
so is one split over a Dynamixel bus and a CAN bus (the Dynamixel bus then served by a
thread of the hardware node's process): a run has physics, a hardware node asked for it
starts both buses in one world. ``skel-ros emulate dynamixel`` emulates the Dynamixel
buses alone, so there the CAN bus's joints have no device: it refuses.
"""

from __future__ import annotations

from pathlib import Path

from skel_ros.hardware.config import load_hardware_config
from skel_ros.model import load_model
from skel_ros.physical.option import coupled_buses
from skel_ros.resources import example, resolve

REPO = Path(__file__).resolve().parents[2]
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"


def _split_arm(tmp_path: Path) -> Path:
    """The arm's YAML with the elbow and the wrist on a second bus."""
    text = ARM_YAML.read_text(encoding="utf-8")
    text = text.replace("    transport: {port: /dev/ttyUSB0, baudrate: 1000000}\n",
                        "    transport: {port: /dev/ttyUSB0, baudrate: 1000000}\n"
                        "  hand_bus:\n    protocol: dynamixel\n"
                        "    transport: {port: /dev/ttyUSB1, baudrate: 1000000}\n", 1)
    head, _, tail = text.partition("  elbow:\n")
    path = tmp_path / "split.yaml"
    path.write_text(head + "  elbow:\n" + tail.replace("bus: arm_bus", "bus: hand_bus"),
                    encoding="utf-8")
    return path


def _mixed_arm(tmp_path: Path) -> Path:
    """The split arm with its elbow and wrist on MIT motors of a CAN bus."""
    text = _split_arm(tmp_path).read_text(encoding="utf-8")
    text = text.replace("  hand_bus:\n    protocol: dynamixel\n"
                        "    transport: {port: /dev/ttyUSB1, baudrate: 1000000}\n",
                        "  hand_bus:\n    protocol: mit\n"
                        "    transport: {interface: virtual, channel: hand}\n", 1)
    head, _, tail = text.partition("  elbow:\n")
    mit = "model: AK80-9\n    mode: impedance\n    options: {kp: 40.0, kd: 1.0}"
    tail = tail.replace("model: XM430-W350\n    mode: position", mit).replace(
        "model: XL430-W250\n    mode: position", mit)
    path = tmp_path / "mixed.yaml"
    path.write_text(head + "  elbow:\n" + tail, encoding="utf-8")
    return path


def _buses(yaml: Path) -> dict[str, list[str]]:
    config = load_hardware_config(yaml)
    return {b.name: [m.name for m in config.joints_on(b.name)] for b in config.buses}


def test_legs_on_a_stand_and_a_single_bus_may_each_have_a_world() -> None:
    quadruped = load_model(example("quadruped.skel"))
    yaml = Path(str(resolve("package://skel_ros/config/hardware/quadruped_mit.yaml")))
    config = load_hardware_config(yaml)
    assert coupled_buses(config.select_skeleton(quadruped), _buses(yaml)) is None
    arm = load_model(example("arm.skel")).skeletons[-1]
    assert coupled_buses(arm, _buses(ARM_YAML)) is None


def test_an_arm_split_over_two_buses_is_one_robot(tmp_path: Path) -> None:
    arm = load_model(example("arm.skel"))
    yaml = _split_arm(tmp_path)
    skeleton = load_hardware_config(yaml).select_skeleton(arm)
    why = coupled_buses(skeleton, _buses(yaml))
    assert why is not None
    assert "joint 'elbow' (bus 'hand_bus') moves with joint 'shoulder_pitch' (bus 'arm_bus')" \
        in why


def test_a_floating_base_moves_every_leg(tmp_path: Path) -> None:
    """The quadruped without its stand: its base's free joint has no device."""
    text = example("quadruped.skel").read_text(encoding="utf-8")
    assert '<joint type="weld"' in text
    floating = tmp_path / "quadruped.skel"
    root = text.index('<joint type="weld"')
    end = text.index("</joint>", root) + len("</joint>")
    floating.write_text(text[:root] + text[root:end].replace('type="weld"', 'type="free"', 1)
                        + text[end:], encoding="utf-8")
    yaml = Path(str(resolve("package://skel_ros/config/hardware/quadruped_mit.yaml")))
    skeleton = load_hardware_config(yaml).select_skeleton(load_model(floating))
    why = coupled_buses(skeleton, _buses(yaml))
    assert why is not None
    assert "(no device)" in why


def test_a_run_has_physics_and_emulate_of_one_protocol_refuses(tmp_path: Path) -> None:
    """``emulate`` in a process of its own: without the check it would serve until killed.

    Split over two Dynamixel buses, or over a Dynamixel and a CAN bus, the arm is one
    world: a run has physics.
    """
    import subprocess
    import sys

    from skel_ros.nodes.sim_to_real import RunConfig, emulation

    def run(yaml: Path) -> tuple[bool, str]:
        return emulation(RunConfig(skel_file=example("arm.skel"), hardware_config=yaml,
                                   trajectory=example("arm_trajectory.yaml"),
                                   out_dir=tmp_path / "run"))

    assert run(_split_arm(tmp_path)) == (True, "emulated, physics")
    yaml = _mixed_arm(tmp_path)
    assert run(yaml) == (True, "emulated, physics")
    done = subprocess.run([sys.executable, "-m", "skel_ros.cli.main", "emulate", "dynamixel",
                           "--physics", "--skel", str(example("arm.skel")), "--config",
                           str(yaml)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 1
    assert ("error: physics emulation: joint 'elbow' (bus 'hand_bus', not emulated by this"
            " command (a mit bus)) moves with joint 'shoulder_pitch'") in done.stderr
    assert not done.stdout


def test_a_hardware_node_asked_for_physics_starts_one_world(tmp_path: Path,
                                                            ros_env: dict[str, str]) -> None:
    """The Dynamixel shoulder and the CAN hand: both emulators move one world of its process."""
    import os

    import rclpy
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    yaml = _mixed_arm(tmp_path)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = HardwareNode(context=context, node_name="hardware_node", parameter_overrides=[
            Parameter("skel_file", value=str(example("arm.skel"))),
            Parameter("hardware_config", value=str(yaml)),
            Parameter("emulate", value=True), Parameter("physics", value=True)])
        try:
            servos, motors = node._emulators  # what its setup started
            assert servos.pid == os.getpid()  # served by a thread of the node's process
            assert servos.config.world is motors.world
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
