"""Benchmark: ``joint_states`` at 100 Hz -> the pose update in the browser, live view.

Three processes, as a user runs them: this script's node publishes ``/sim/joint_states``
at 100 Hz (and ``/sim/robot_description``, latched), ``skel-ros view --live sim`` serves
the view, and headless Chromium (SwiftShader, no GPU) shows it. Each message's
``shoulder_yaw`` is its sequence number times 1 mrad, so the turret's orientation in a
scene update names the message it came from. Chromium's DevTools protocol reports every
WebSocket frame the page receives with its arrival time (``Network.webSocketFrameReceived``,
on the machine's monotonic clock, the one ``time.monotonic()`` reads here); the frames
are decoded (viser's wire format: zstd-compressed msgpack) and the turret's updates
matched to their messages.

What is measured: publish -> the update has arrived in the browser page (its WebSocket).
Not measured: the draw, which happens at the page's next animation frame; the script
measures the page's frame interval (``requestAnimationFrame``) too, so the draw's share
is known: at most one frame interval more.

Goal (issue 31): p95 < 50 ms. Prints the date and load average first.

Usage: .venv/bin/python bench/view_latency.py [--seconds S] [--domain N]
"""

from __future__ import annotations

import argparse
import base64
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOAL_P95 = 0.050  # s
RATE = 100.0  # Hz
STEP = 1e-3  # rad per message on shoulder_yaw
TURRET = "/sim/sim:turret"  # the scene node of the body shoulder_yaw turns
JOINTS = ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
FRAME_INTERVAL_JS = """new Promise(done => { const t = []; const f = now => { t.push(now);
  if (t.length < 61) requestAnimationFrame(f); else done((t[60] - t[0]) / 60); };
  requestAnimationFrame(f); })"""


def ros_environment(domain: int) -> dict[str, str]:
    """This machine only: loopback discovery, the test suite's Fast DDS profile."""
    env = dict(os.environ)
    env.update({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_DOMAIN_ID": str(domain),
                "FASTDDS_DEFAULT_PROFILES_FILE": str(REPO / "config" / "fastdds_localhost.xml"),
                "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp", "PYTHONUNBUFFERED": "1"})
    return env


def decode_frame(payload: bytes) -> list[dict[str, Any]]:
    """The messages of one viser WebSocket frame (its wire format, viser/infra/_infra.py)."""
    import msgspec
    import zstandard

    size = int.from_bytes(payload[:8], "little")
    compressed = int.from_bytes(payload[8:16], "little")
    inner = zstandard.ZstdDecompressor().decompress(payload[16:16 + compressed],
                                                   max_output_size=size)
    decoded: dict[str, Any] = msgspec.msgpack.decode(inner)
    return list(decoded.get("messages", ()))


def turret_arrivals(events: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """(message number, arrival time) of every turret orientation the page received."""
    out = []
    for event in events:
        if event.get("method") != "Network.webSocketFrameReceived":
            continue
        response = event["params"]["response"]
        if response.get("opcode") != 2:  # noqa: PLR2004 - a binary frame
            continue
        for msg in decode_frame(base64.b64decode(response["payloadData"])):
            if msg.get("type") == "SetOrientationMessage" and msg.get("name") == TURRET:
                w, _, _, z = msg["wxyz"]
                yaw = 2.0 * math.atan2(z, w)
                out.append((round(yaw / STEP), float(event["params"]["timestamp"])))
    return out


def wait_for_worker(browser: Any, timeout: float = 60.0) -> str:  # noqa: ANN401 - Browser
    """The session id of the page's first Web Worker, once it has started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in browser.events:
            if event.get("method") == "Target.attachedToTarget" and \
                    event["params"]["targetInfo"]["type"] == "worker":
                return str(event["params"]["sessionId"])
        browser.drain(0.2)
    raise RuntimeError("the page started no Web Worker")


class Publisher:
    """The robot: its description once (latched), then joint states at :data:`RATE`."""

    def __init__(self, env: dict[str, str]) -> None:
        os.environ.update(env)
        import rclpy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String

        from skel_ros.mesh_uris import embedded_mesh_uris
        from skel_ros.model import load_model
        from skel_ros.model.urdf import world_to_urdf
        from skel_ros.nodes.qos import LATCHED_QOS, STATE_QOS

        rclpy.init()
        self.node = rclpy.create_node("view_latency_robot")
        urdf = world_to_urdf(load_model(REPO / "examples" / "arm.skel"), frame_prefix="sim/",
                             world_link="sim/world")
        self._description = self.node.create_publisher(String, "/sim/robot_description",
                                                       LATCHED_QOS)
        self._description.publish(String(data=embedded_mesh_uris(urdf)))
        self._states = self.node.create_publisher(JointState, "/sim/joint_states", STATE_QOS)
        self._msg = JointState(name=list(JOINTS))
        self.sent: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        """Publish from now on (a thread with its own absolute schedule)."""
        self._thread.start()

    def _run(self) -> None:
        k, start = 0, time.monotonic()
        while not self._stop.is_set():
            due = start + k / RATE
            time.sleep(max(0.0, due - time.monotonic()))
            self._msg.position = [k * STEP, 0.2, 0.5, 0.0]
            self.sent[k] = time.monotonic()
            self._states.publish(self._msg)
            k += 1

    def stop(self) -> None:
        """Stop publishing and leave ROS."""
        import rclpy

        self._stop.set()
        self._thread.join()
        self.node.destroy_node()
        rclpy.try_shutdown()


def run(seconds: float, domain: int, screenshot: Path | None = None) -> dict[str, float]:
    """Measure for ``seconds``; returns the latencies' statistics (seconds).

    ``screenshot``: write the page as PNG there at the end (docs/img/view_live.png).
    """
    import numpy as np

    from skel_ros.view.chromium import headless_chromium

    env = ros_environment(domain)
    view = subprocess.Popen([sys.executable, "-m", "skel_ros.cli.main", "view", "--live", "sim"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    publisher = None
    try:
        line = view.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"http://127\.0\.0\.1:\d+", line)
        if url is None:
            raise RuntimeError(f"the view did not start: {line}")
        publisher = Publisher(env)
        with headless_chromium() as browser:
            # The viewer's WebSocket lives in a Web Worker: attach to it when it starts
            # (paused), watch its network, then let it run.
            browser.call("Target.setAutoAttach", autoAttach=True, waitForDebuggerOnStart=True,
                         flatten=True)
            browser.open(url.group(0))
            worker = wait_for_worker(browser)
            browser.call("Network.enable", session=worker)
            browser.call("Runtime.runIfWaitingForDebugger", session=worker)
            browser.drain(5.0)  # the page connects and gets the robot
            frame = float(browser.call("Runtime.evaluate", expression=FRAME_INTERVAL_JS,
                                       awaitPromise=True, returnByValue=True)
                          ["result"]["value"]) / 1e3
            browser.events.clear()
            publisher.start()
            browser.drain(seconds)
            arrivals = turret_arrivals(browser.events)
            if screenshot is not None:
                browser.close_notifications()
                browser.drain(1.0)
                screenshot.write_bytes(browser.screenshot())
        sent = dict(publisher.sent)
    finally:
        if publisher is not None:
            publisher.stop()
        view.send_signal(signal.SIGINT)  # Ctrl-C, as a user stops it
        try:
            view.wait(timeout=30)
        except subprocess.TimeoutExpired:
            view.kill()
            view.wait()
    latency = np.array([t - sent[k] for k, t in arrivals if k in sent and k > 0])
    if latency.size == 0:
        raise RuntimeError("no pose update reached the page")
    return {"updates": float(latency.size), "sent": float(len(sent)),
            "p50": float(np.percentile(latency, 50)), "p95": float(np.percentile(latency, 95)),
            "max": float(latency.max()), "frame": frame}


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--domain", type=int, default=1 + os.getpid() % 101)
    parser.add_argument("--screenshot", type=Path, help="write the page as PNG at the end")
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}; load average"
          f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    r = run(args.seconds, args.domain, args.screenshot)
    print(f"{int(r['updates'])} turret updates received of {int(r['sent'])} messages sent"
          f" at {RATE:g} Hz (updates are coalesced when the page is busy)")
    print(f"publish -> in the page: p50 {1e3 * r['p50']:.1f} ms, p95 {1e3 * r['p95']:.1f} ms,"
          f" max {1e3 * r['max']:.1f} ms; goal p95 < {1e3 * GOAL_P95:.0f} ms:"
          f" {'met' if r['p95'] < GOAL_P95 else 'NOT met'}")
    print(f"page frame interval {1e3 * r['frame']:.1f} ms (the draw follows at the next frame)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
