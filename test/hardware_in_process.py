"""A hardware node on emulated actuators in the test's process, with a client node that
reads its ``joint_states`` and calls its ``~/enable`` (both spun by one executor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path


@dataclass
class InProcessHardware:
    """The node, the client, their executor, the states received, the enable client."""

    node: Any
    client: Any
    executor: Any
    enable: Any
    states: list[Any] = field(default_factory=list)

    def close(self) -> None:
        self.node.destroy_node()
        self.client.destroy_node()


def emulated_hardware(context: Any, name: str, model: Path, config: Path) -> InProcessHardware:
    """``hardware_node`` named ``name`` (``emulate:=true``) on ``model`` and ``config``."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool

    from skel_ros.nodes.hardware_node import HardwareNode

    node = HardwareNode(context=context, node_name=name, parameter_overrides=[
        Parameter("skel_file", value=str(model)),
        Parameter("hardware_config", value=str(config)),
        Parameter("emulate", value=True),
    ])
    client = rclpy.create_node(f"{name}_client", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(client)
    hardware = InProcessHardware(node, client, executor,
                                 client.create_client(SetBool, f"/{name}/enable"))
    client.create_subscription(JointState, "joint_states", hardware.states.append, 100)
    return hardware
