"""A Chromium that does not start is said, never waited for forever.

Stand-ins for the browser (shell scripts given as ``chromium``): one that lives but never
says its DevTools port (it used to block ``headless_chromium`` on its stderr with no
deadline), one that exits at once. Each is a :class:`ChromiumError` naming what happened,
and the process is gone after.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from skel_ros.view import chromium
from skel_ros.view.chromium import ChromiumError, headless_chromium

if TYPE_CHECKING:
    from pathlib import Path


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "chromium"
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_silent_chromium_is_given_up_at_the_start_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chromium, "START_TIMEOUT", 1.0)
    silent = _script(tmp_path, "echo starting >&2\nexec sleep 60")
    start = time.monotonic()
    with pytest.raises(ChromiumError, match=r"did not open its DevTools port in 1 s"), \
            headless_chromium(chromium=silent):
        pass
    assert time.monotonic() - start < 30.0


def test_a_chromium_that_exits_is_said_with_its_status(tmp_path: Path) -> None:
    with pytest.raises(ChromiumError, match=r"exited with status 3 at start"), \
            headless_chromium(chromium=_script(tmp_path, "exit 3")):
        pass
