"""Mimic joints in DART: each follower driven by a servo motor that tracks its leader.

dartpy 6.20 does not bind ``Joint::setMimicJoint``, so DART's own mimic motor cannot be
asked for. This module does what that motor does, through what dartpy does bind: the
follower's joint gets DART's SERVO actuator (a velocity motor solved with the
constraints, within the joint's force limits), and before every step its velocity
command is

    ``v_cmd = multiplier * v_lead_next + (multiplier * q_lead + offset - q) / dt``

``v_lead_next`` is the leader's velocity at the end of the step, predicted from its last
two velocities (``2 v_lead - v_lead_prev``: the leader's acceleration of the last step
carried over; its own velocity on the first step after a build). Semi-implicit Euler
moves the follower by ``v_cmd dt``, so the correction term removes the whole error of
the step before (DART's mimic motor corrects by ``error / dt`` too) and the feed-forward
term keeps the step's own error to ``multiplier * dt^2`` times the change of the
leader's acceleration over a step: a smooth motion stays within 1e-9, a jump of
acceleration (a new command) leaves one step's error of ``multiplier * jump * dt^2``
that the next step removes. Each step ends where the rule puts the follower, so the
error never accumulates. The rule is :mod:`skel_ros.model.mimic`'s.

The coupling is dynamic, not kinematic: the motor's force goes through DART's
constraint solver with contacts and joint limits, bounded by the follower's force
limits, and its reaction acts on the follower's parent body. It is one-way as DART's
mimic motor is: the leader's drive does not feel the follower's inertia or load through
the coupling (only through the bodies they share), as it would through a gear.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from skel_ros.model.mimic import couplings

if TYPE_CHECKING:
    from skel_ros.model.types import Skeleton
    from skel_ros.sim._typing import Dart

__all__ = ["FollowerServos"]

Vector = npt.NDArray[np.float64]


class FollowerServos:
    """The servo motors that keep a skeleton's followers on their leaders (module docstring).

    Args:
        skeleton: The model skeleton.
        dart_skeleton: Its dartpy skeleton; the followers' joints are made SERVO joints.
        time_step: The simulation step.
    """

    def __init__(self, skeleton: Skeleton, dart_skeleton: Dart, time_step: float) -> None:
        pairs = couplings(skeleton)
        self.indices = np.array([d.index for d, _ in pairs], dtype=np.intp)
        """The follower DOFs, in this skeleton's order."""
        self._leaders = np.array([skeleton.dof_index(m.leader) for _, m in pairs], dtype=np.intp)
        self._multiplier = np.array([m.multiplier for _, m in pairs], dtype=float)
        self._offset = np.array([m.offset for _, m in pairs], dtype=float)
        self._dart = dart_skeleton
        self._dt = float(time_step)
        # The velocities before the last step and its impulse response ``w``.
        self._last: tuple[Vector, Vector] | None = None
        if pairs:
            from dartpy import dynamics

            for dof, _ in pairs:
                joint = dart_skeleton.getJoint(skeleton.joint(dof.joint).index)
                joint.setActuatorType(dynamics.ActuatorType.SERVO)
                # No limit of its own: DART would clip the motor's velocity to the
                # follower's velocity limits and let a limit constraint replace the
                # motor on the DOF; its position limits bound the leader instead.
                joint.setVelocityLowerLimit(0, -np.inf)
                joint.setVelocityUpperLimit(0, np.inf)

    def __bool__(self) -> bool:
        return bool(self.indices.size)

    def apply(self, cmd: Vector) -> None:
        """Set the followers' velocity commands of this step in ``cmd`` (every DOF's)."""
        f, lead, m = self.indices, self._leaders, self._multiplier
        q = np.asarray(self._dart.getPositions(), dtype=float)
        v = np.asarray(self._dart.getVelocities(), dtype=float)
        # The velocity change a generalized impulse on the followers gives every DOF, with
        # the joint springs and dampers DART integrates implicitly (its augmented matrix).
        w = np.linalg.inv(np.asarray(self._dart.getAugMassMatrix(), dtype=float))[:, f]
        free = v.copy()  # the velocities the step would end with if the motors did nothing
        if self._last is not None:
            # The last step's change, less what the motors' impulses (as DART applied them,
            # within the force and velocity limits) made of it.
            last_v, last_w = self._last
            applied = np.asarray(self._dart.getConstraintForces(), dtype=float)[f] * self._dt
            free += v - last_v - last_w @ applied
        error = m * q[lead] + self._offset - q[f]
        # The impulse p that ends the step with v_f = m v_lead + error / dt, through
        # v = free + w p for leaders and followers alike.
        a = w[f] - m[:, None] * w[lead]
        b = m * free[lead] + error / self._dt - free[f]
        try:
            impulse = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:  # a singular configuration: the least-squares one
            impulse = np.linalg.lstsq(a, b, rcond=None)[0]
        self._last = (v, w)
        cmd[f] = free[f] + w[f] @ impulse
