"""The robots in a browser: ``skel-ros view`` (viser, the optional extra ``view``).

A model with a slider per DOF (:mod:`~skel_ros.view.model_view`), a recorded run replayed
or exported as one self-contained HTML file (:mod:`~skel_ros.view.replay`), and the live
robots (:mod:`~skel_ros.view.live`; its ROS subscriber is
:mod:`skel_ros.nodes.view_live`). Robots are drawn with the model's own kinematics and
shapes (:mod:`~skel_ros.view.robot`, :mod:`~skel_ros.view.shapes`); a recording's or a
topic's ``robot_description`` becomes a model through :mod:`~skel_ros.view.description`.
:mod:`~skel_ros.view.chromium` drives headless Chromium for the tests, the latency bench
and the documentation's pictures.

Importing this package imports neither viser nor ROS: viser is imported where a server is
started, so the rest works (and says what is missing) without the extra.
"""

from skel_ros.view.description import world_from_description
from skel_ros.view.errors import ViewError
from skel_ros.view.live import DEFAULT_NAMESPACES, LiveView
from skel_ros.view.model_view import ModelView, SliderSpec, slider_specs
from skel_ros.view.pair import DEFAULT_ERROR_SCALE, RobotPair, joint_errors
from skel_ros.view.replay import DEFAULT_FPS, Replay, ReplayView, export_html, load_replay
from skel_ros.view.robot import GHOST_OPACITY, RobotDrawing, error_rgb
from skel_ros.view.server import DEFAULT_HOST, frame_scene, start_server, stop_server, url

__all__ = [
    "DEFAULT_ERROR_SCALE",
    "DEFAULT_FPS",
    "DEFAULT_HOST",
    "DEFAULT_NAMESPACES",
    "GHOST_OPACITY",
    "LiveView",
    "ModelView",
    "Replay",
    "ReplayView",
    "RobotDrawing",
    "RobotPair",
    "SliderSpec",
    "ViewError",
    "error_rgb",
    "export_html",
    "frame_scene",
    "joint_errors",
    "load_replay",
    "slider_specs",
    "start_server",
    "stop_server",
    "url",
    "world_from_description",
]
