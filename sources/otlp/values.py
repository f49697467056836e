"""Attribute values as the mapping reads them: text that is not a structure, numbers that may be garbage."""

from __future__ import annotations

from typing import Any

from ragpulse.collector.events import MAX_COUNT


def text_value(value: Any) -> str | None:
    if type(value) is str:  # most values, and the cheapest test: the mapping asks ~30 a trace
        return value
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def float_value(value: Any) -> float | None:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None  # a garbage score is dropped, not the chunk


def add_count(total: int | None, value: Any) -> int | None:
    """total + a token count; absent counts add 0, and None (not reported) once any count is garbage."""
    if total is None or value is None:
        return total
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        count = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(+Inf)
        return None
    return total + count if 0 <= count and total + count <= MAX_COUNT else None
