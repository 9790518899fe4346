"""``skel-ros view --live``: the subscriber draws each robot from its latched description.

The descriptions are published (transient local) before the view's node exists, as the
robots' nodes do; then joint states of both robots. In one rclpy context, one executor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from polling import spin_until
from view_recording import ARM, JOINTS

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytest.importorskip("viser", reason="the view extra: pip install skel_ros[view]")
rclpy = pytest.importorskip("rclpy")

pytestmark = pytest.mark.ros


def test_the_live_view_draws_the_robots_and_colours_the_ghost_by_the_error(
        context: Any, tmp_path: Path) -> None:
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from skel_ros.mesh_uris import embedded_mesh_uris
    from skel_ros.model import load_model
    from skel_ros.model.urdf import world_to_urdf
    from skel_ros.nodes.qos import LATCHED_QOS, STATE_QOS
    from skel_ros.nodes.view_live import ViewLiveNode
    from skel_ros.view.live import LiveView
    from skel_ros.view.robot import error_rgb
    from skel_ros.view.server import start_server, stop_server

    world = load_model(ARM)
    robots = rclpy.create_node("robots", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(robots)
    states = {}
    for ns in ("sim", "real"):
        urdf = world_to_urdf(world, frame_prefix=f"{ns}/", world_link=f"{ns}/world",
                             mesh_dir=tmp_path / "generated")
        robots.create_publisher(String, f"/{ns}/robot_description", LATCHED_QOS).publish(
            String(data=embedded_mesh_uris(urdf)))
        states[ns] = robots.create_publisher(JointState, f"/{ns}/joint_states", STATE_QOS)

    def spin(done: Callable[[], bool], what: str) -> None:
        spin_until(executor, done, what, 60.0, step=0.05)

    server = start_server()
    try:
        view = LiveView(server, ["sim", "real"], mesh_dir=tmp_path / "meshes")
        node = ViewLiveNode(view, context=context)
        executor.add_node(node)
        spin(lambda: len(view.pair.drawings) == 2, "both descriptions")
        q = {"sim": [0.2, 0.3, 0.4, 0.5], "real": [0.2, 0.3, 0.43, 0.5]}  # elbow off 0.03

        def heard() -> bool:
            _publish(states, q)
            return view.messages["sim"] > 0 and view.messages["real"] > 0

        spin(heard, "joint states")
        sim, real = view.pair.drawings["sim"], view.pair.drawings["real"]
        assert sim.positions.tolist() == q["sim"]
        assert real.positions.tolist() == q["real"]
        assert view.pair.errors() == pytest.approx(dict(zip(JOINTS, [0, 0, 0.03, 0],
                                                            strict=True)))
        colours = dict(zip([b.name for b in real.world.skeletons[0].bodies],
                           real.body_colors(), strict=True))
        assert colours["real/forearm"] == error_rgb(0.03, 0.05) != colours["real/upper_arm"]
        node.destroy_node()
    finally:
        stop_server(server)
        robots.destroy_node()


def _publish(publishers: dict[str, Any], q: dict[str, list[float]]) -> None:
    from sensor_msgs.msg import JointState

    for ns, pub in publishers.items():
        pub.publish(JointState(name=list(JOINTS), position=q[ns]))
