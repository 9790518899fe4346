"""YAML with line numbers, for every YAML file skel_ros reads with ``file:line`` errors.

:func:`load_yaml_lines` parses one document with PyYAML's safe loader (libyaml's parser
where PyYAML has it), but each mapping becomes a :class:`LineDict` that knows its own
line and the line of each key, and a duplicate key (which PyYAML would silently let the
last one win) is an error. Every
problem is a :class:`YamlLineError` with a message and a line; callers turn it into their
own error type (``LimitError``, ``ConfigError``, ...).

:func:`dump_yaml` writes YAML the same way round: PyYAML's safe dumper, with libyaml's
emitter where PyYAML has it (the same text, written in C).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["LineDict", "YamlLineError", "compose_yaml", "construct_yaml", "dump_yaml",
           "key_line", "load_yaml_lines", "node_line"]

# libyaml's parser where PyYAML was built with it (the same YAML, read in C; it also caps
# the nesting depth at 1,000 with a ScannerError), else PyYAML's own.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SAFE_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(data: Any, **options: Any) -> str:  # noqa: ANN401 - any YAML value
    """``yaml.safe_dump(data, **options)`` as text (libyaml's emitter where available)."""
    return str(yaml.dump(data, Dumper=_SAFE_DUMPER, **options))


def compose_yaml(text: str | bytes) -> yaml.Node | None:
    """The node graph of one YAML document (``yaml.compose`` with the safe loader).

    Nodes carry their ``start_mark`` (line, column), for ``file:line`` errors.

    Raises:
        yaml.YAMLError: Invalid YAML, or more than one document.
    """
    loader = _SAFE_LOADER(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


def construct_yaml(node: yaml.Node | None) -> Any:  # noqa: ANN401 - any YAML value
    """The Python value of a node graph from :func:`compose_yaml` (as ``yaml.safe_load``)."""
    if node is None:
        return None
    loader = _SAFE_LOADER("")
    try:
        return loader.construct_document(node)
    finally:
        loader.dispose()


class YamlLineError(ValueError):
    """Invalid YAML, a duplicate key or a bad key; ``line`` is 1-based (0 = unknown)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class LineDict(dict[Any, Any]):
    """A YAML mapping that remembers its own line and the line of each key."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[Any, int] = {}


def node_line(mapping: object) -> int:
    """The line of a mapping read by :func:`load_yaml_lines` (0 for anything else)."""
    return mapping.line if isinstance(mapping, LineDict) else 0


def key_line(mapping: object, key: object, default: int = 0) -> int:
    """Line of ``key`` in ``mapping``: the mapping's line if absent, ``default`` if untracked."""
    if isinstance(mapping, LineDict):
        return mapping.key_lines.get(key, mapping.line)
    return default


class _Loader(_SAFE_LOADER):  # type: ignore[valid-type,misc]  # one of two loader classes
    scalar_keys = False


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict(node.start_mark.line + 1)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if loader.scalar_keys and not isinstance(key, (str, int, float, bool)) \
                and key is not None:
            raise YamlLineError(f"mapping key {key!r} is not a scalar", line)
        try:
            duplicate = key in result
        except TypeError:
            raise YamlLineError(f"mapping key {key!r} is not hashable", line) from None
        if duplicate:
            raise YamlLineError(f"duplicate key {key!r} (first on line {result.key_lines[key]})",
                              line)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = line
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_lines(text: str, *, scalar_keys: bool = False) -> Any:  # noqa: ANN401 - any YAML
    """Parse one YAML document; mappings are :class:`LineDict`.

    Args:
        text: The document.
        scalar_keys: Refuse keys that are not str, int, float, bool or null.

    Raises:
        YamlLineError: Invalid YAML ("invalid YAML: ..."), a duplicate or bad key.
    """
    loader = _Loader(text)
    loader.scalar_keys = scalar_keys
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise YamlLineError(f"invalid YAML: {exc.problem or exc.context}", line) from None
    except yaml.YAMLError as exc:
        raise YamlLineError(f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
