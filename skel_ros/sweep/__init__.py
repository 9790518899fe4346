"""Sweeps: many judged sim-to-real runs from one spec, here or on a Ray cluster.

A spec (:mod:`skel_ros.sweep.spec`) names axes (models, trajectories, hardware
configs, truth files and truth parameters, engines, seeds) and criteria; each
combination is a trial (:mod:`skel_ros.sweep.trial`): one ``skel-ros sim-to-real`` run in
a process of its own, on a ROS domain of its own, with its recording, report, JSON and
JUnit. :func:`run_sweep` (:mod:`skel_ros.sweep.driver`) runs the trials without a result
on a backend (``local`` or ``ray``); :func:`write_reports` (:mod:`skel_ros.sweep.report`)
aggregates them. Used by ``skel-ros sweep`` (docs/sweep.md).

No ROS here: the trials' processes run it.
"""

from skel_ros.sweep.driver import BACKENDS, MissingExtraError, default_workers, run_sweep
from skel_ros.sweep.errors import SpecError, SweepError
from skel_ros.sweep.report import SweepResult, write_reports
from skel_ros.sweep.spec import Spec, Trial, load_spec, parse_spec
from skel_ros.sweep.trial import TrialJob, run_trial

__all__ = ["BACKENDS", "MissingExtraError", "Spec", "SpecError", "SweepError", "SweepResult",
           "Trial", "TrialJob", "default_workers", "load_spec", "parse_spec", "run_sweep",
           "run_trial", "write_reports"]
