"""The hardware node in this process on the arm's emulated Dynamixel servos, behind a tap.

The node reaches the servos the test owns through ``port:=``; a tap between them
(test/sync_write_tap.py) decodes every Sync Write, so the Goal Positions a test checks
are what the servos received. A second node streams ``joint_commands`` (one elbow
target, every 10 ms, never stopping); both spin on one executor, and waits spin with
timeouts, never sleep. Used by the re-enable test (test/nodes/test_hardware_reenable.py)
and the written-goals test (test/nodes/test_hardware_written_goals.py); its model and
hardware files and its timeout by the other in-process hardware node tests too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from polling import spin_until
from sync_write_tap import CENTER, TICK, SyncWriteTap

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ARM", "ARM_YAML", "ELBOW", "TIMEOUT", "TappedArm"]

REPO = Path(__file__).resolve().parents[1]
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
ELBOW = 3  # its id; direction 1, zero 0, gear 1 in the YAML: ticks -> rad directly
TIMEOUT = 30.0  # s: generous, the machine is shared


class TappedArm:
    """The node over the tapped servos, a streaming node, one executor.

    Args:
        context: an initialised rclpy context.
        tmp: a folder for the YAML and the tap's port.
        target: the elbow position the stream commands (rad).
        node_name: the hardware node's name.
        parameters: more of the hardware node's parameters (name -> value).
    """

    def __init__(self, context: Any, tmp: Path, *, target: float, node_name: str,
                 parameters: dict[str, Any] | None = None) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState

        from skel_ros.emulation import emulator_for
        from skel_ros.hardware import load_hardware_config
        from skel_ros.nodes.hardware_node import HardwareNode

        # The bundled YAML with a longer device watchdog: this process runs the node, its
        # loop and the tap between it and the servos, and a loaded machine can starve
        # them past the default 0.25 s (the servos then fault: seen once in a full run).
        yaml_file = tmp / "arm_dynamixel.yaml"
        yaml_file.write_text(ARM_YAML.read_text(encoding="utf-8")
                             + "\ndevice_watchdog: 2.0\n", encoding="utf-8")
        config = load_hardware_config(yaml_file)
        (bus,) = config.buses
        self.servos = emulator_for(bus.protocol)(
            bus.transport, [m.actuator for m in config.joints_on(bus.name)], {})
        self.tap = SyncWriteTap(self.servos.transport["port"], tmp / "ttyDXL")
        self.node = HardwareNode(context=context, node_name=node_name, parameter_overrides=[
            Parameter("skel_file", value=str(ARM)),
            Parameter("hardware_config", value=str(yaml_file)),
            Parameter("port", value=str(tmp / "ttyDXL")),
            *(Parameter(k, value=v) for k, v in (parameters or {}).items()),
        ])
        self.stream = rclpy.create_node("stream", context=context)
        publisher = self.stream.create_publisher(JointState, "joint_commands", 10)
        message = JointState(name=["elbow"], position=[target])
        self.stream.create_timer(0.01, lambda: publisher.publish(message))  # never stops
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.stream)

    def spin_until(self, done: Callable[[], bool], what: str) -> None:
        spin_until(self.executor, done, what, TIMEOUT, step=0.01)

    def elbow_ticks(self, since: int = 0) -> list[int]:
        """The elbow's Goal Position (ticks) of every Sync Write from index ``since`` on."""
        return [goals[ELBOW] for goals in self.tap.goals[since:] if ELBOW in goals]

    def elbow_goals(self, since: int) -> list[tuple[float, float]]:
        """(time, elbow goal in rad) of every Sync Write from index ``since`` on."""
        return [(t, (goals[ELBOW] - CENTER) * TICK)
                for t, goals in zip(self.tap.times[since:], self.tap.goals[since:],
                                    strict=True) if ELBOW in goals]

    def close(self) -> None:
        self.node.destroy_node()
        self.stream.destroy_node()
        self.tap.close()
        self.servos.stop()
