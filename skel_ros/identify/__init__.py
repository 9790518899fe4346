"""Identification: fit a model's joint parameters to a robot's recorded runs.

:mod:`~skel_ros.identify.excite` designs an excitation trajectory (a finite Fourier series
per joint within the limits, conditioned for the fit); :mod:`~skel_ros.identify.fit`
estimates each joint's command delay and servo gains, armature, viscous damping and
Coulomb friction from a recording, with identifiability checks and confidence intervals
(and with :mod:`~skel_ros.identify.payload`, a payload's mass and centre of mass);
:mod:`~skel_ros.identify.output` writes the results, and reads identified.yaml back for the
simulation (``sim-to-real --sim-params``, the simulation node's ``sim_params``). The
regressor both share is in :mod:`~skel_ros.identify.regressor`. No ROS; MuJoCo only for
the model's rigid-body torques (:mod:`~skel_ros.sim.inverse_dynamics`). docs/identify.md is
the user documentation.
"""

from skel_ros.identify.excite import (
    Excitation,
    ExcitationError,
    JointExcitation,
    design_excitation,
    trajectory_yaml,
)
from skel_ros.identify.regressor import PARAMETERS, condition_number, joint_regressor

__all__ = [
    "PARAMETERS",
    "Excitation",
    "ExcitationError",
    "JointExcitation",
    "condition_number",
    "design_excitation",
    "joint_regressor",
    "trajectory_yaml",
]
