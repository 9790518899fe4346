"""The physics-backed emulators of several buses, moving one physics world of the robot.

A robot's devices may sit on several buses (an arm whose wrist is on a second bus, a
quadruped with a CAN bus per side). Their emulators move one simulation of the whole
robot, so that what a device of one bus does moves the joints of the others as on the
robot (the wrist's motor feels the shoulder's acceleration; a floating base carries every
leg). Where the emulators run decides what can share one world:

* the emulators of this process (MIT and CiA 402 motors on python-can ``virtual``
  channels, Feetech servos on ptys: threads) share one world built here
  (:func:`~skel_ros.physical.option.share_world`), each stepping it from its own threads
  under the world's lock (:attr:`~skel_ros.physical.world.PhysicalWorld.lock`);
* the Dynamixel buses of a robot without such buses share one emulator process
  (``python -m skel_ros.physical.host --control --config JSON``: :func:`main`), one
  select loop serving every bus's pty (:func:`skel_ros.emulation.dynamixel.run_servers`),
  their servos moving one world of that process; each bus keeps its handle
  (:func:`skel_ros.emulation.dynamixel.start_group`: its transport, its control requests
  routed to its bus);
* a robot with buses of both kinds (a mobile base's CAN wheel drives under a Dynamixel
  arm, an arm on MIT motors with a Dynamixel gripper) has its Dynamixel buses served by
  that same loop in a thread of this process (:func:`skel_ros.emulation.dynamixel.
  start_in_thread`: the same ptys, the same bytes, the control requests direct calls),
  their servos joining the one world of this process's emulators under its lock. The
  CAN emulators must live in the driver's process; so, then, do the servos.

Only an emulator of another distribution (an entry point) moves a world of its own, per
bus, as before: :func:`~skel_ros.physical.option.coupled_buses` on :func:`world_names`
refuses the robots for which that is wrong (a joint of its bus moving with a joint of
another's). :func:`start_emulators` starts them (the hardware node's emulation,
``skel-ros emulate --physics --config``): one bus of a kind alone starts as it always
did; :func:`emulator_places` says where each runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from skel_ros.hardware.errors import ConfigError, HardwareError
from skel_ros.physical import physical_emulator_for
from skel_ros.physical.option import share_world

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from skel_ros.emulation import Emulator
    from skel_ros.hardware.base import ActuatorSpec

__all__ = ["IN_PROCESS", "SERIAL_PROCESS", "BusEmulation", "EmulatorStartError",
           "emulator_places", "main", "start_emulators", "world_names"]

IN_PROCESS = frozenset({"mit", "canopen", "feetech"})
"""Protocols whose physics-backed emulators are threads of the caller's process."""
SERIAL_PROCESS = frozenset({"dynamixel"})
"""Protocols whose physics-backed emulators are processes (several buses: one process),
or a thread of the caller's process when it runs :data:`IN_PROCESS` buses too."""


@dataclass(frozen=True)
class BusEmulation:
    """One bus to emulate: its emulator's ``start(transport, actuators, options)`` arguments.

    ``options`` hold ``physics`` (:func:`~skel_ros.physical.option.emulator_options`).
    """

    name: str
    protocol: str
    transport: Mapping[str, Any]
    actuators: Sequence[ActuatorSpec]
    options: Mapping[str, Any]


class EmulatorStartError(HardwareError):
    """A bus's emulator cannot start (:attr:`bus`: its name); none of the others runs."""

    def __init__(self, bus: str, message: str) -> None:
        super().__init__(message)
        self.bus = bus


def world_names(protocols: Mapping[str, str]) -> dict[str, str]:
    """Bus name -> the physics world its emulator moves, as :func:`start_emulators` starts it.

    ``protocols``: bus name -> its protocol. The names are what a refusal says
    (:func:`~skel_ros.physical.option.coupled_buses`'s ``worlds``).
    """
    here = _served_here(protocols.values())

    def world(bus: str, protocol: str) -> str:
        if protocol in here:
            return "the world of this process's emulators"
        if protocol in SERIAL_PROCESS:
            return "the world of the Dynamixel emulator process"
        return f"a world of bus {bus!r}'s own"
    return {bus: world(bus, p) for bus, p in protocols.items()}


def emulator_places(protocols: Mapping[str, str]) -> dict[str, str]:
    """Bus name -> where :func:`start_emulators` runs its emulator (what a log says).

    ``protocols``: bus name -> its protocol, every bus started together.
    """
    here = _served_here(protocols.values())
    serial = [p for p in protocols.values() if p in SERIAL_PROCESS]

    def place(protocol: str) -> str:
        if protocol in IN_PROCESS:
            return "threads of this process"
        if protocol in here:
            return "a thread of this process (one loop for the Dynamixel buses)"
        if protocol in SERIAL_PROCESS:
            return ("one emulator process for the Dynamixel buses" if len(serial) > 1
                    else "an emulator process of its own")
        return "its own emulator (another distribution's)"
    return {bus: place(p) for bus, p in protocols.items()}


def _served_here(protocols: Iterable[str]) -> frozenset[str]:
    """The protocols of these buses whose emulators run in this process and share its world."""
    kinds = set(protocols)
    if kinds & IN_PROCESS:
        return frozenset(kinds & (IN_PROCESS | SERIAL_PROCESS))
    return frozenset()


def start_emulators(buses: Sequence[BusEmulation],
                    clock: Callable[[], float] = time.monotonic) -> list[Emulator]:
    """Start the physics-backed emulator of each bus, in order (module docstring).

    The buses of this process's emulators move one world started at ``clock()`` (their
    clock: ``time.monotonic`` unless their options give another), with the Dynamixel
    buses if there are any (served by a thread, on ``time.monotonic``); without such
    buses, the Dynamixel buses move one world of their emulator process. A kind with one
    bus, alone, starts as :func:`~skel_ros.physical.physical_emulator_for` starts it.

    Raises:
        EmulatorStartError: a bus's emulator does not exist or cannot start, or Dynamixel
            buses would share a world with buses on another clock (the ones started are
            stopped).
    """
    starts = {b.name: _guarded(b, physical_emulator_for, b.protocol) for b in buses}
    here = _served_here(b.protocol for b in buses)
    local = [b for b in buses if b.protocol in here]
    serial = [b for b in buses if b.protocol in SERIAL_PROCESS]
    threaded = [b for b in serial if b.protocol in here]
    options = {b.name: b.options for b in buses}
    if threaded:
        _check_clocks(local, clock)
    if len(local) > 1:
        options.update(_guarded(local, share_world, {b.name: b.options for b in local},
                                clock()))
    started: dict[str, Emulator] = {}
    try:
        if threaded:
            world = options[threaded[0].name]["physics"]["world"]
            started.update(zip([b.name for b in threaded], _dynamixel_thread(threaded, world),
                               strict=True))
        elif len(serial) > 1:
            started.update(zip([b.name for b in serial], _dynamixel_group(serial),
                               strict=True))
        for bus in buses:
            if bus.name not in started:
                started[bus.name] = _guarded(bus, starts[bus.name], bus.transport,
                                             bus.actuators, options[bus.name])
    except BaseException:
        for emulator in started.values():
            emulator.stop()
        raise
    return [started[b.name] for b in buses]


def _guarded(buses: BusEmulation | Sequence[BusEmulation], call: Callable[..., Any],
             *args: Any) -> Any:  # noqa: ANN401
    """``call(*args)``; its :class:`HardwareError` an :class:`EmulatorStartError` of ``buses``."""
    try:
        return call(*args)
    except HardwareError as exc:
        if isinstance(buses, BusEmulation):
            raise EmulatorStartError(buses.name, str(exc)) from None
        names = ", ".join(repr(b.name) for b in buses)
        raise EmulatorStartError(buses[0].name, f"buses {names}: {exc}") from None


def _check_clocks(buses: Sequence[BusEmulation], clock: Callable[[], float]) -> None:
    """Dynamixel servos served here keep ``time.monotonic``: so must their world's others.

    Raises:
        EmulatorStartError: ``clock``, or a bus's ``clock`` option, is another clock.
    """
    for bus in buses:
        if clock is not time.monotonic or bus.options.get("clock",
                                                          time.monotonic) is not time.monotonic:
            raise EmulatorStartError(bus.name, "physics emulation: Dynamixel servos served in"
                                     " this process keep time.monotonic; the buses sharing"
                                     " their world cannot run on another clock")


def _dynamixel_thread(buses: Sequence[BusEmulation], world: Any) -> list[Emulator]:  # noqa: ANN401
    """The Dynamixel buses' servos in a thread of this process, moving its ``world``.

    Raises:
        EmulatorStartError: a bus's options or servos cannot be used.
    """
    from skel_ros.emulation.dynamixel import start_in_thread
    from skel_ros.physical.dynamixel import physical_config

    configs = [replace(_guarded(b, physical_config, b.transport, b.actuators, b.options),
                       world=world) for b in buses]
    return list(_guarded(buses, start_in_thread, configs, world.lock))


def _dynamixel_group(buses: Sequence[BusEmulation]) -> list[Emulator]:
    """The Dynamixel buses' servos in one emulator process, moving one world (:func:`main`).

    Raises:
        EmulatorStartError: a bus's options; the process did not start.
    """
    from skel_ros.emulation.dynamixel import start_group
    from skel_ros.physical.dynamixel import physical_config

    configs = [_guarded(b, physical_config, b.transport, b.actuators, b.options)
               for b in buses]
    config_json = json.dumps({"buses": [json.loads(c.to_json()) for c in configs]})
    return list(_guarded(buses, start_group, configs, "skel_ros.physical.host", config_json))


def main(argv: Sequence[str] | None = None) -> int:
    """Serve several Dynamixel buses moving one world (``--control --config JSON``).

    The JSON: ``{"buses": [...]}``, each bus as :class:`~skel_ros.physical.dynamixel.
    PhysicalEmulatorConfig` writes it. With ``--control``, the first line out is the
    ports (``{"ports": [...]}``, in order) or ``{"error": ...}`` (the model, the truth or
    a servo that cannot be used), then the control requests' answers.
    """
    from skel_ros.emulation.dynamixel import run_servers
    from skel_ros.physical.dynamixel import PhysicalEmulatorConfig

    parser = argparse.ArgumentParser(prog="skel_ros.physical.host",
                                     description="Physics-backed Dynamixel buses, one world.")
    parser.add_argument("--config", required=True, help="the buses as JSON")
    parser.add_argument("--control", action="store_true", help="JSON control on stdin/stdout")
    args = parser.parse_args(argv)
    try:
        configs = [PhysicalEmulatorConfig.from_json(json.dumps(c))
                   for c in json.loads(args.config)["buses"]]
        shared = share_world({str(k): {"physics": json.loads(c.physics),
                                       "initial_positions": {i: p for i, _, p, _ in c.servos}}
                              for k, c in enumerate(configs)}, time.monotonic())
        configs = [replace(c, world=shared[str(k)]["physics"]["world"])
                   for k, c in enumerate(configs)]
    except (ConfigError, KeyError, TypeError, ValueError) as exc:
        message = f"cannot serve these buses: {exc}"
        if args.control:
            sys.stdout.write(json.dumps({"error": message}) + "\n")
            sys.stdout.flush()
        else:
            print(f"error: {message}", file=sys.stderr)  # noqa: T201
        return 1
    return run_servers(configs, control=args.control)


if __name__ == "__main__":
    sys.exit(main())
