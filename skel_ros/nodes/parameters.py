"""Node parameters, one idiom for every robot node: a frozen spec each, one declare, one check.

A node describes its parameters as a table, name -> :class:`Param` (default, description,
read-only or not, and how a value is checked), and hands it to :func:`declare` (every
parameter declared with a ``ParameterDescriptor``) and :func:`read` (every value checked,
converted, every problem named). :func:`check` checks one value: a node that takes
changes at run time (the simulation node's ``real_time_factor``, rates, ...) calls it
from its ``add_on_set_parameters_callback``.

Types: a parameter is declared with its default's type, so rclpy refuses another type
when the node starts (:func:`declare` names each such parameter). A *number* (a double
that may be given as an integer: ``-p control_rate:=200``) and a *dynamic* parameter (any
type; the hardware node's ``auto_resume`` takes a bool or a string) are declared with
dynamic typing and checked by :func:`check`. A check (``choices``, a range from
:func:`within` / :func:`at_least`, a function of one's own) runs on the typed value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rcl_interfaces.msg import ParameterDescriptor  # type: ignore[import-untyped]
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException

from skel_ros.nodes.errors import NodeSetupError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from rclpy.node import Node

__all__ = ["Param", "at_least", "check", "declare", "read", "required", "within"]

_TYPE_NAMES = {bool: "bool (true or false)", str: "string", float: "number", int: "whole number",
               list: "list"}


@dataclass(frozen=True)
class Param:
    """One parameter of a node.

    Attributes:
        default: The value when none is given; its type is the parameter's.
        description: What ``ros2 param describe`` says.
        read_only: Fixed once the node started (no run-time change).
        number: A double that may be given as an integer (declared with dynamic typing,
            checked here: any other type is refused naming the parameter).
        dynamic: Any type is declared; :attr:`convert` (or :attr:`choices`) decides.
        choices: The values it may take (strings).
        convert: Checks the (typed) value and returns it as the node uses it; raises
            ValueError with the problem, worded to follow the parameter's name
            (``"must be in (0, 1000] Hz, got 0.0"``).
    """

    default: Any
    description: str
    read_only: bool = False
    number: bool = False
    dynamic: bool = False
    choices: tuple[str, ...] = ()
    convert: Callable[[Any], Any] | None = None


def within(low: float, high: float, *, open_low: bool = False, unit: str = "",
           note: str = "") -> Callable[[float], float]:
    """A check: a finite number in ``[low, high]`` (``(low, high]`` with ``open_low``)."""
    bounds = f"{'(' if open_low else '['}{low:g}, {high:g}]{' ' + unit if unit else ''}"
    said = f" ({note})" if note else ""

    def convert(value: float) -> float:
        ok = math.isfinite(value) and (value > low if open_low else value >= low)
        if not (ok and value <= high):
            raise ValueError(f"must be in {bounds}{said}, got {value}")
        return value
    return convert


def at_least(low: float, *, note: str = "") -> Callable[[float], float]:
    """A check: a finite number ``>= low``."""
    said = f" ({note})" if note else ""

    def convert(value: float) -> float:
        if not (math.isfinite(value) and value >= low):
            raise ValueError(f"must be finite and >= {low:g}{said}, got {value}")
        return value
    return convert


def required(value: str) -> str:
    """A check: a string that is not empty."""
    if not value:
        raise ValueError("is required")
    return value


def _type_name(value: Any) -> str:  # noqa: ANN401 - a parameter's default
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def check(specs: Mapping[str, Param], name: str, value: Any) -> tuple[Any, str]:  # noqa: ANN401
    """Check one value of parameter ``name`` against its spec.

    Returns:
        (the value as the node uses it, "") or (None, the problem, naming the parameter).
    """
    spec = specs[name]
    if spec.number:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"{name} must be a number, got {value!r}"
        value = float(value)
    elif not spec.dynamic and not isinstance(value, type(spec.default)):
        return None, f"{name} must be a {_type_name(spec.default)}, got {value!r}"
    if spec.choices and value not in spec.choices:
        return None, f"{name} must be one of {', '.join(spec.choices)}, got {value!r}"
    if spec.convert is not None:
        try:
            value = spec.convert(value)
        except ValueError as exc:
            return None, f"{name} {exc}"
    return value, ""


def declare(node: Node, specs: Mapping[str, Param], prefix: str = "") -> None:
    """Declare every parameter of ``specs`` on ``node`` (``prefix`` before each name).

    A parameter the node has already (a lifecycle node configured again) is left as it
    is. A value given of another type than the default's (numbers and dynamic
    parameters aside) is refused here.

    Raises:
        NodeSetupError: Parameters of the wrong type, each named.
    """
    problems = []
    for name, spec in specs.items():
        if node.has_parameter(prefix + name):
            continue
        try:
            node.declare_parameter(prefix + name, spec.default, ParameterDescriptor(
                description=spec.description, read_only=spec.read_only,
                dynamic_typing=spec.number or spec.dynamic))
        except (InvalidParameterTypeException,
                InvalidParameterValueException) as exc:
            problems.append(f"{prefix}{name} must be a {_type_name(spec.default)}:"
                            f" {exc.args[0]}")
    if problems:
        raise NodeSetupError("invalid parameters: " + "; ".join(problems))


def read(node: Node, specs: Mapping[str, Param], prefix: str = "", *,
         relations: Callable[[dict[str, Any]], list[str]] | None = None) -> dict[str, Any]:
    """Every parameter's value as the node uses it, checked (:func:`check`).

    Args:
        node: The node (the parameters declared: :func:`declare`).
        specs: Its table.
        prefix: Before each name on the node.
        relations: Problems between values (None where a value has a problem of its own).

    Raises:
        NodeSetupError: Every problem found, each naming its parameter.
    """
    values: dict[str, Any] = {}
    problems = []
    for name in specs:
        value, problem = check(specs, name, node.get_parameter(prefix + name).value)
        if problem:
            problems.append(prefix + problem)
        values[name] = value
    if relations is not None:
        problems += relations(values)
    if problems:
        raise NodeSetupError("invalid parameters: " + "; ".join(problems))
    return values
