"""Subcommands of the hardware layer (filled in by the hardware work; no commands yet)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:  # noqa: ARG001 - commands are added as they are built
    """Add this layer's subcommands to the ``skel-ros`` parser."""
