"""The DevTools endpoint on 127.0.0.1 is asked directly, whatever proxy the shell sets.

``urllib`` sends every request through ``http_proxy`` unless ``no_proxy`` names the host;
on a machine behind a corporate proxy, a headless Chromium's own DevTools list would go
to the proxy, which cannot reach this machine's 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import TYPE_CHECKING

from skel_ros.view.chromium import devtools_targets

if TYPE_CHECKING:
    import pytest

TARGETS = [{"type": "page", "webSocketDebuggerUrl": "ws://127.0.0.1:1/devtools/page/A"}]


class _DevTools(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(TARGETS).encode() if self.path == "/json/list" else b"[]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_the_devtools_list_never_goes_through_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    server = HTTPServer(("127.0.0.1", 0), _DevTools)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for name in ("http_proxy", "HTTP_PROXY"):  # a proxy that answers nothing
            monkeypatch.setenv(name, "http://127.0.0.1:9")
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        assert devtools_targets(server.server_address[1]) == TARGETS
    finally:
        server.shutdown()
        server.server_close()
