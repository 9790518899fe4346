"""Sim-to-real analysis: recorded streams, tracking metrics, criteria, verdict and reports.

Without ROS (recordings are read with mcap-ros2-support); matplotlib is imported only
when plots are drawn. JointTrajectory commands in a recording are built by the parser the
nodes use (:mod:`skel_ros.trajectory.messages`, which reads a message's fields alone).
This part imports only :mod:`skel_ros.model` and :mod:`skel_ros.trajectory`.
"""

from skel_ros.analysis.ci_reports import write_json, write_junit
from skel_ros.analysis.criteria import Criteria, load_criteria, parse_criteria
from skel_ros.analysis.errors import AnalysisError, CriteriaError, RecordingError
from skel_ros.analysis.metrics import (
    PAIRS,
    Comparison,
    JointComparison,
    PairError,
    compare,
    estimate_lag,
)
from skel_ros.analysis.recording import StreamTopics, model_followers, read_recording
from skel_ros.analysis.report import Report, RunSection, write_report, write_runs_report
from skel_ros.analysis.series import JointSeries
from skel_ros.analysis.verdict import Check, Outcome, Verdict, judge

__all__ = [
    "PAIRS",
    "AnalysisError",
    "Check",
    "Comparison",
    "Criteria",
    "CriteriaError",
    "JointComparison",
    "JointSeries",
    "Outcome",
    "PairError",
    "RecordingError",
    "Report",
    "RunSection",
    "StreamTopics",
    "Verdict",
    "compare",
    "estimate_lag",
    "judge",
    "load_criteria",
    "model_followers",
    "parse_criteria",
    "read_recording",
    "write_json",
    "write_junit",
    "write_report",
    "write_runs_report",
]
