"""Lists of actuator ids as people write them: ``"1-4,7"``, ``"0x10-0x12"``.

The command line (``skel-ros scan --ids``, ``skel-ros emulate --ids``) and the emulators'
own command lines read ids with :func:`parse_ids`, each protocol's range from its plugin
(:attr:`~skel_ros.hardware.plugins.ProtocolPlugin.id_range`).
"""

from __future__ import annotations

__all__ = ["parse_ids"]


def _id(text: str) -> int:
    text = text.strip()
    return int(text, 16) if text.lower().startswith("0x") else int(text, 10)


def parse_ids(text: str, lo: int = 0, hi: int = 0x7FF, what: str = "ids") -> list[int]:
    """``"1-4,7"`` -> ``[1, 2, 3, 4, 7]`` (decimal or ``0x`` hex, each in ``lo..hi``).

    Raises:
        ValueError: not a list of ids, an empty range, or an id outside ``lo..hi`` (the
            message says which part and the valid range, ``what`` naming the ids).
    """
    ids: list[int] = []
    for part in text.split(","):
        first, sep, last = part.strip().partition("-")
        try:
            a = _id(first)
            b = _id(last) if sep else a
        except ValueError:
            raise ValueError(f"not a list of ids: {text!r} (e.g. 1-12,15)") from None
        if a > b:
            raise ValueError(f"{part.strip()!r} is an empty range (write the lower id first)")
        if not lo <= a <= b <= hi:
            raise ValueError(f"{what} are {lo}..{hi}; {part.strip()!r} is outside")
        ids.extend(range(a, b + 1))
    return sorted(set(ids))
