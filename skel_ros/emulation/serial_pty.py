"""What the emulated serial buses (Dynamixel, Feetech emulators) share: their pty, their servos.

:class:`PtyPort`: a pty reached at a path of its own (a symlink to it), so that a port
that is unplugged and comes back (a new pty) is found again at the same path;
:func:`pause_until`: the wait before a reply that must leave at a given time;
:func:`servo_starts`: the emulator's options and actuators checked, each servo's model
and initial position; :func:`servo_parser` and :func:`servo_ids`: its process's command
line.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import tempfile
import time
import tty
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.ids import parse_ids

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.hardware.base import ActuatorSpec

__all__ = ["SPIN", "PtyPort", "pause_until", "servo_ids", "servo_parser", "servo_starts"]

M = TypeVar("M")

SPIN = 0.002  # s: pauses shorter than this are waited awake


class PtyPort:
    """A pty at the path :attr:`path` (in a directory of its own), opened and closed at will.

    Args:
        prefix: the name of its temporary directory begins so.
    """

    def __init__(self, prefix: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=prefix))
        self.path = str(self.dir / "tty")
        self.master = self.slave = -1

    def open(self) -> None:
        """A new pty, raw, at :attr:`path`."""
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # no echo, no newline translation: a clean byte pipe
        link = Path(self.path + ".new")
        link.unlink(missing_ok=True)
        link.symlink_to(os.ttyname(self.slave))
        link.replace(self.path)

    def close(self) -> None:
        """The pty closed (its user's port hangs up), :attr:`path` gone (never raises)."""
        Path(self.path).unlink(missing_ok=True)
        for fd in (self.master, self.slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self.slave = -1

    def remove(self) -> None:
        """Closed for good: its directory removed too (never raises)."""
        self.close()
        with contextlib.suppress(OSError):
            self.dir.rmdir()


def pause_until(t: float, monotonic: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], None] = time.sleep) -> None:
    """Wait until monotonic time ``t`` (``monotonic`` and ``sleep``: the clock used).

    A sleep hands the CPU away and, on a loaded host, gets it back only after the other
    runnable processes had their share: tens of ms for a 0.5 ms return delay, long
    enough for a client to give up. So the last stretch (:data:`SPIN`) is waited awake.
    """
    while (remaining := t - monotonic()) > SPIN:
        sleep(remaining - SPIN)
    while monotonic() < t:
        pass


def servo_starts(who: str, actuators: Sequence[ActuatorSpec], options: Mapping[str, Any],
                 known: frozenset[str], *, default_model: str, max_id: int,
                 model_by_name: Callable[[str], M | None],
                 ) -> list[tuple[ActuatorSpec, str, M, float]]:
    """Each actuator's servo: ``(actuator, model name, model, initial position)``.

    ``options`` (only ``known`` ones): ``model`` (for actuators without one; else
    ``default_model``) and ``initial_positions`` ({id: rad}, default 0).

    Raises:
        ConfigError: unknown options, models, ids outside ``0..max_id``, an initial
            position not finite; ``who`` begins the message.
    """
    unknown = set(options) - known
    if unknown:
        raise ConfigError(f"{who}: unknown option(s) {sorted(unknown)}; known: {sorted(known)}")
    default = str(options.get("model", default_model))
    initial = {int(k): float(v) for k, v in dict(options.get("initial_positions", {})).items()}
    starts = []
    for act in actuators:
        name = act.model or default
        model = model_by_name(name)
        if model is None:
            raise ConfigError(f"{who}: id {act.id}: unknown model {name!r}")
        if not 0 <= act.id <= max_id:
            raise ConfigError(f"{who}: id {act.id} outside 0..{max_id}")
        position = initial.get(act.id, 0.0)
        if not math.isfinite(position):
            raise ConfigError(f"{who}: id {act.id}: initial position {position}")
        starts.append((act, name, model, position))
    return starts


def servo_parser(module: str, bus: str, default_model: str,
                 ids_example: str) -> argparse.ArgumentParser:
    """The command line of ``python -m module``: ``--ids``, ``--model``, ``--baud``.

    ``bus`` (e.g. ``"Feetech"``) names the servos; ``ids_example`` is a range, e.g. ``1-6``.
    """
    parser = argparse.ArgumentParser(prog=module,
                                     description=f"Emulated {bus} servos on a pty.")
    parser.add_argument("--ids", default="1", help=f"ids, e.g. {ids_example} or 1,3,5")
    parser.add_argument("--model", default=default_model)
    parser.add_argument("--baud", type=int, default=1_000_000)
    return parser


def servo_ids(parser: argparse.ArgumentParser, text: str, max_id: int, bus: str) -> list[int]:
    """The ids ``--ids`` names, ``0..max_id`` (else the parser's error: exits)."""
    try:
        return parse_ids(text, 0, max_id, f"{bus} ids")
    except ValueError as exc:
        parser.error(f"argument --ids: {exc}")
