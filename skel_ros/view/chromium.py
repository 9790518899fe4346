"""Headless Chromium driven over the DevTools protocol: screenshots of a view, its frames.

For the tests, the latency bench and the documentation's pictures: Chromium (the OS
package) runs headless with software WebGL (SwiftShader: no GPU needed), on loopback
only (``--remote-debugging-port`` binds 127.0.0.1), with a profile of its own that is
removed afterwards. Pages are loaded in real time (no virtual time: Chromium's
``--virtual-time-budget`` sometimes never ends on a loaded machine) and a screenshot is
taken once the page shows what the caller waits for.

The DevTools client is ``websockets``' synchronous one (a viser dependency).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import queue
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["CHROMIUM", "CHROMIUM_FLAGS", "START_TIMEOUT", "Browser", "ChromiumError",
           "devtools_targets", "headless_chromium"]

CHROMIUM = Path("/usr/bin/chromium")
"""Where Debian's and Ubuntu's ``chromium`` package puts the browser."""

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
                  "--use-angle=swiftshader", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run")
"""Headless, software WebGL (SwiftShader through ANGLE), no background traffic."""

_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
_STDERR_KEPT = 1000  # lines of Chromium's stderr looked at for its DevTools port
START_TIMEOUT = 60.0
"""s for Chromium to say its DevTools port."""


class ChromiumError(RuntimeError):
    """Chromium did not start, or a page did not become what was waited for."""


class Browser:
    """One page of a headless Chromium, through its DevTools WebSocket.

    Args:
        page_ws: The page target's ``webSocketDebuggerUrl``.
    """

    def __init__(self, page_ws: str) -> None:
        from websockets.sync.client import connect

        self._ws = connect(page_ws, max_size=None, open_timeout=30)
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = 60.0, session: str | None = None,
             **params: Any) -> dict[str, Any]:  # noqa: ANN401 - JSON values
        """Send one DevTools command and return its result (events are kept in :attr:`events`).

        ``session``: a target attached to the page (a worker), by its session id.
        """
        ident = next(self._ids)
        command: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session is not None:
            command["sessionId"] = session
        self._ws.send(json.dumps(command))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError(f"no answer to {method} in {timeout:g} s")
            message = json.loads(self._ws.recv(timeout=left))
            if message.get("id") == ident:
                if "error" in message:
                    raise ChromiumError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def drain(self, seconds: float) -> None:
        """Collect events for ``seconds``."""
        deadline = time.monotonic() + seconds
        with contextlib.suppress(TimeoutError):
            while (left := deadline - time.monotonic()) > 0:
                self.events.append(json.loads(self._ws.recv(timeout=left)))

    def open(self, url: str, viewport: tuple[int, int] = (640, 400)) -> None:
        """Load ``url`` in the page, its viewport ``viewport`` (width, height) CSS pixels."""
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=viewport[0], height=viewport[1],
                  deviceScaleFactor=1, mobile=False)
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:  # noqa: ANN401 - a JSON value
        """The value of the JavaScript ``expression`` in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def press_space(self) -> None:
        """Press and release the space bar (the exported player's play / pause key)."""
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=" ", code="Space",
                      windowsVirtualKeyCode=32, text=" " if kind == "keyDown" else "")

    def close_notifications(self) -> int:
        """Close the viewer's notifications (its "software WebGL" notice covers the scene).

        Returns:
            How many were closed.
        """
        return int(self.evaluate(
            "(() => { const b = document.querySelectorAll("
            "'.mantine-Notification-root button'); b.forEach(x => x.click());"
            " return b.length; })()") or 0)

    def screenshot(self) -> bytes:
        """The page as PNG bytes."""
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def screenshot_when(self, ready: Callable[[bytes], bool], *, timeout: float = 90.0,
                        settle: float = 0.5) -> bytes:
        """A screenshot once ``ready(png)`` holds (tried every ``settle`` seconds).

        Raises:
            ChromiumError: not ready within ``timeout``.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(settle)
            png = self.screenshot()
            if ready(png):
                return png
        raise ChromiumError(f"the page did not become ready in {timeout:g} s")

    def close(self) -> None:
        """Close the DevTools connection."""
        self._ws.close()


@contextlib.contextmanager
def headless_chromium(window: tuple[int, int] = (640, 400), *,
                      chromium: Path = CHROMIUM) -> Iterator[Browser]:
    """A headless Chromium with one blank page, closed (and its profile removed) after.

    Raises:
        ChromiumError: Chromium is missing or did not start within 60 s.
    """
    if not chromium.is_file():
        raise ChromiumError(f"no {chromium}: install the OS package (apt install chromium)")
    profile = Path(tempfile.mkdtemp(prefix="skel_ros_chromium_"))
    proc = subprocess.Popen(  # noqa: S603 - the browser binary and fixed flags
        [str(chromium), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
         f"--window-size={window[0]},{window[1]}", "--remote-debugging-address=127.0.0.1",
         "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    browser = None
    try:
        browser = Browser(_page_ws(proc))
        yield browser
    finally:
        if browser is not None:
            with contextlib.suppress(Exception):
                browser.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def _page_ws(proc: subprocess.Popen[str]) -> str:
    """The blank page's DevTools WebSocket, from the port Chromium says it listens on.

    Its stderr is read by a thread from the start (Chromium keeps writing to it, and
    blocks once the pipe is full), so a Chromium that lives but never says its port
    is given up at :data:`START_TIMEOUT` too.
    """
    lines = _stderr_lines(proc)
    deadline = time.monotonic() + START_TIMEOUT
    browser_ws = None
    while browser_ws is None:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise ChromiumError("Chromium did not open its DevTools port in"
                                f" {START_TIMEOUT:g} s") from None
        if line is None:
            proc.wait()
            raise ChromiumError(f"Chromium exited with status {proc.returncode} at start")
        if (found := _LISTENING.search(line)) is not None:
            browser_ws = found.group(1)
    port = int(browser_ws.split(":")[2].split("/")[0])
    pages = [t["webSocketDebuggerUrl"] for t in devtools_targets(port) if t.get("type") == "page"]
    if not pages:
        raise ChromiumError("Chromium has no page open")
    return str(pages[0])


def devtools_targets(port: int) -> list[dict[str, Any]]:
    """The targets (pages) of the DevTools endpoint on this machine's ``port``.

    Asked directly, never through a proxy: a shell's ``http_proxy`` (a corporate one)
    would otherwise take a request for 127.0.0.1 to the proxy, which cannot reach it.
    """
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}/json/list", timeout=30) as answer:
        return list(json.load(answer))


def _stderr_lines(proc: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """``proc``'s stderr read to its end by a daemon thread: its lines (None at the end).

    Only the first lines are queued (Chromium says its port among them); the rest is
    read and dropped, so the queue does not grow for the browser's lifetime.
    """
    import threading

    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        assert proc.stderr is not None  # noqa: S101 - Popen(stderr=PIPE)
        for count, line in enumerate(proc.stderr):
            if count < _STDERR_KEPT:
                lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, name="chromium stderr", daemon=True).start()
    return lines
