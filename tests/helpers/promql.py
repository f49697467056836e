"""Reading the generated PromQL: ragpulse's born-in-window window count (mixin/promql.py) as the increase() it
stands for."""

from __future__ import annotations

import re

from ragpulse.mixin.promql import counted

# counted()'s own text with its selector and window as groups (the same selector and window throughout).
_FORM = re.compile(
    re.escape(counted("SELECTOR", "WINDOW"))
    .replace("SELECTOR", r"(?P<s>[^\[\]]+)", 1).replace("SELECTOR", "(?P=s)")
    .replace("WINDOW", r"(?P<w>[^\]\s)]+)", 1).replace("WINDOW", "(?P=w)")
)


def as_increase(expr: str) -> str:
    """`expr` with each window count of counted() written as increase(selector[window])."""
    return _FORM.sub(r"increase(\g<s>[\g<w>])", expr)


def bare_counts(expr: str) -> list[str]:
    """The rate() and increase() calls of `expr` outside counted()'s form: what loses a series' first counts."""
    return re.findall(r"\b(?:rate|increase)\([^\[]*\[[^\]]+\]\)", _FORM.sub("", expr))
