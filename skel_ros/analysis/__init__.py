"""Sim-to-real analysis: recorded streams, tracking metrics and the comparison report.

ROS-free (recordings are read with mcap-ros2-support); matplotlib is imported only
when plots are drawn.
"""

from skel_ros.analysis.errors import AnalysisError, RecordingError
from skel_ros.analysis.metrics import (
    PAIRS,
    Comparison,
    JointComparison,
    PairError,
    compare,
    estimate_lag,
)
from skel_ros.analysis.recording import StreamTopics, read_recording
from skel_ros.analysis.report import Report, write_report
from skel_ros.analysis.series import JointSeries

__all__ = [
    "PAIRS",
    "AnalysisError",
    "Comparison",
    "JointComparison",
    "JointSeries",
    "PairError",
    "RecordingError",
    "Report",
    "StreamTopics",
    "compare",
    "estimate_lag",
    "read_recording",
    "write_report",
]
