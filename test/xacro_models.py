"""Small xacro documents the command-line tests read (one place, not a copy per file)."""

from __future__ import annotations

# One revolute joint whose name is the xacro argument ``joint`` (default ``hinge``), between
# two 1 kg links: with ``joint:=elbow`` the joint is ``elbow``; without ``--fixed-base``
# the base floats (a URDF root that is not 'world').
ONE_JOINT_XACRO = (
    '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
    '<xacro:arg name="joint" default="hinge"/>'
    '<link name="base"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0"'
    ' iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
    '<joint name="$(arg joint)" type="revolute"><parent link="base"/><child link="arm"/>'
    '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    '<link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0"'
    ' iyy="0.1" iyz="0" izz="0.1"/></inertial></link></robot>')
