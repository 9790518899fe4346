"""A ``<ros2_control>`` tag that makes a robot node ros2_control hardware.

topic_based_ros2_control's ``TopicBasedSystem`` plugin (Humble: package
``topic_based_ros2_control``; Jazzy and later: ``joint_state_topic_hardware_interface``,
which still loads it under this name) is a ros2_control hardware component that
publishes the commands of its joints as ``sensor_msgs/JointState`` and reads their state
from another JointState topic. Pointed at a robot node's ``joint_commands`` and
``joint_states``, it puts the simulation or the hardware under ros2_control's
controllers (joint_trajectory_controller, hence MoveIt). docs/ros2_control.md has its
conventions and the recipe.

:func:`ros2_control_urdf` adds the tag to the model's URDF: one ``<joint>`` per DOF that
takes commands (the names of ``joint_states``; DOFs of passive and locked joints, which
refuse every command, are left out: the plugin sends every joint of its tag in each
message, and the nodes take a message whole or not at all), one command interface of the
chosen kind, the ``position``, ``velocity`` and ``effort`` state interfaces, and the DOF's
initial position as the ``initial_value`` of its position (the plugin's command starts
there).

A follower (a mimic joint's DOF, docs/model.md "Mimic joints") is in the tag with its
state interfaces and no command interface: the nodes refuse a command naming it (and
the plugin sends every commanded joint of its tag in each message), joint_states carries
it, so joint_state_broadcaster publishes it as it publishes a mimic joint of ros2_control's
own mock hardware. Its coupling is written as ``<param name="mimic">`` (the leader),
``multiplier`` and ``offset``, as Humble's hardware components read it; from Iron on
ros2_control reads ``<mimic>`` from the URDF itself, which the description holds too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lxml import etree

from skel_ros.model.mimic import coupled_start
from skel_ros.model.types import ActuatorType
from skel_ros.model.urdf import skeleton_namespace

if TYPE_CHECKING:
    from skel_ros.model.types import World

__all__ = ["COMMAND_INTERFACES", "PLUGIN", "ros2_control_urdf"]

PLUGIN = "topic_based_ros2_control/TopicBasedSystem"
"""The plugin name every distro's topic-based package loads (Jazzy+ warns it is an alias)."""

COMMAND_INTERFACES = ("position", "velocity", "effort")
"""One kind per tag: the plugin fills only that field, which the nodes require."""


def ros2_control_urdf(urdf: str, world: World, *, commands_topic: str, states_topic: str,
                      command_interface: str = "position", name: str | None = None) -> str:
    """``urdf`` with a ``<ros2_control>`` system tag for the commandable DOFs of ``world``.

    Args:
        urdf: The model's URDF (e.g. :func:`skel_ros.nodes.robot_publisher.robot_description`).
        world: The model; its DOFs, in model order, are the tag's joints (but those of
            passive and locked joints).
        commands_topic: The robot node's ``joint_commands``, fully qualified.
        states_topic: The robot node's ``joint_states``, fully qualified.
        command_interface: ``position``, ``velocity`` or ``effort``.
        name: The tag's name (default: the URDF's robot name).

    Raises:
        ValueError: An unknown command interface, or a topic that is not absolute (the
            plugin's node lives in the controller manager's namespace, not the robot's).
    """
    if command_interface not in COMMAND_INTERFACES:
        raise ValueError(f"command interface {command_interface!r}: one of"
                         f" {', '.join(COMMAND_INTERFACES)}")
    for topic in (commands_topic, states_topic):
        if not topic.startswith("/"):
            raise ValueError(f"topic {topic!r} must be absolute (start with '/')")
    root = etree.fromstring(urdf.encode(), etree.XMLParser(resolve_entities=False,
                                                            no_network=True))
    tag = etree.SubElement(root, "ros2_control", name=name or root.get("name", "robot"),
                           type="system")
    hardware = etree.SubElement(tag, "hardware")
    etree.SubElement(hardware, "plugin").text = PLUGIN
    for key, value in (("joint_commands_topic", commands_topic),
                       ("joint_states_topic", states_topic)):
        etree.SubElement(hardware, "param", name=key).text = value
    for dof, start, mimic in _commandable_dofs(world):
        joint = etree.SubElement(tag, "joint", name=dof)
        if mimic is None:
            etree.SubElement(joint, "command_interface", name=command_interface)
        else:
            for key, value in (("mimic", mimic[0]), ("multiplier", repr(mimic[1])),
                               ("offset", repr(mimic[2]))):
                etree.SubElement(joint, "param", name=key).text = value
        position = etree.SubElement(joint, "state_interface", name="position")
        etree.SubElement(position, "param", name="initial_value").text = repr(float(start))
        etree.SubElement(joint, "state_interface", name="velocity")
        etree.SubElement(joint, "state_interface", name="effort")
    etree.indent(root, space="  ")
    body: str = etree.tostring(root, encoding="unicode")
    return '<?xml version="1.0"?>\n' + body + "\n"


def _commandable_dofs(world: World) -> list[tuple[str, float, tuple[str, float, float] | None]]:
    """Every DOF whose joint takes commands, model order, and the followers.

    Each as (public name, initial position, None or a follower's (leader's public name,
    multiplier, offset)). Public names as ``joint_states`` has them
    (:mod:`skel_ros.nodes.names`).
    """
    out = []
    world = coupled_start(world)  # a follower's initial value is the rule's
    for skeleton in world.skeletons:
        prefix = skeleton_namespace(world, skeleton)
        for joint in skeleton.joints:
            if joint.actuator in (ActuatorType.PASSIVE, ActuatorType.LOCKED):
                continue
            for k in range(joint.num_dofs):
                dof = skeleton.dofs[joint.first_dof + k]
                mimic = None if dof.mimic is None else (
                    prefix + dof.mimic.leader, float(dof.mimic.multiplier),
                    float(dof.mimic.offset))
                out.append((prefix + dof.name, float(dof.initial_position), mimic))
    return out
