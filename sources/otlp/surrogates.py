"""Lone surrogates in OTLP/JSON: a `"\\ud800"` escape with no pair is text JSON can write and UTF-8 cannot carry, JSON's
form of the invalid UTF-8 that costs a protobuf request only the spans holding it (native/src/otlp.rs). So here: the
span holding one, or every span under a resource or scope holding one, is taken out of the request and rejected,
and the request's other spans are read."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

# A \uD800-\uDFFF escape, paired or not: the bodies worth a second reading when msgspec refused them.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
REASON = "invalid_utf8"  # the reason the protobuf reader gives a span with invalid UTF-8: the same fault


def load(body: bytes) -> tuple[Any, bool]:
    """(the body's JSON, whether it may hold a lone surrogate). msgspec refuses a lone surrogate with the whole body;
    a body it refused that has a surrogate escape is read by the standard library, which keeps one in its str. Raises
    msgspec.DecodeError (msgspec's, for a body neither reads) or RecursionError."""
    try:
        return msgspec.json.decode(body), False
    except msgspec.DecodeError as exc:
        if _SURROGATE_ESCAPE.search(body) is None:
            raise
        refused = exc
    try:
        return json.loads(body.decode(), parse_constant=_no_constant), True
    except ValueError:  # not JSON for this reader either (UnicodeDecodeError is one)
        raise refused from None


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # the standard library reads NaN and Infinity; msgspec and OTLP do not


# The repeated members an OTLP/JSON request nests, outermost first, each named either way OTLP/JSON allows.
_LEVELS = (("resourceSpans", "resource_spans"), ("scopeSpans", "scope_spans"), ("spans", "spans"))


def take_out(request: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Takes each span holding a lone surrogate out of the OTLP/JSON `request`, and each resource or scope holding one
    with its spans; (the span's name, "invalid_utf8", what is wrong) for each span taken. What is not shaped as OTLP
    is left to the JSON mapping to refuse."""
    rejected: list[tuple[str, str, str]] = []
    _keep_readable(request, 0, None, rejected)
    return rejected


def _keep_readable(message: dict[str, Any], level: int, above: str | None, rejected: list[tuple[str, str, str]]) -> None:
    """Leaves in `message` the items of its list at `level` (resources, scopes, spans) that hold no lone surrogate,
    naming each span taken out in `rejected`. `above`: what holds one in the resource or scope around them: every span
    under it goes, and the resource or scope with them (its text could not be read either)."""
    name, items = _member(message, *_LEVELS[level])
    inner = _LEVELS[level + 1] if level + 1 < len(_LEVELS) else None
    kept = []
    for item in items:
        what = above or (_where(item, "", skip=set(inner or ())) if isinstance(item, dict) else None)
        if inner is not None and isinstance(item, dict):
            _keep_readable(item, level + 1, what, rejected)
        elif inner is None and what is not None:
            span_name = item.get("name") if isinstance(item, dict) else None
            rejected.append((span_name if isinstance(span_name, str) else "", REASON,
                             f"{what} holds a lone surrogate escape, which is not valid Unicode"))
        if what is None:
            kept.append(item)
    _put(message, name, kept)


def _where(message: dict[str, Any], owner: str, skip: set[str]) -> str | None:
    """The member of an OTLP/JSON message that holds a lone surrogate, named; None when none does."""
    for member, value in message.items():
        if member in skip or not _holds_surrogate(value):
            continue
        if member in ("resource", "scope") and isinstance(value, dict):
            return _where(value, f"{member} ", skip=set())
        if member in ("attributes", "events") and isinstance(value, list):
            item = next(item for item in value if _holds_surrogate(item))
            name = item.get("key" if member == "attributes" else "name") if isinstance(item, dict) else None
            return f"{owner}{member[:-1]} {name!r}"  # attribute 'input.value', event 'retrieve'
        return f"{owner}{member}"
    return None


def _holds_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode()
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_holds_surrogate(item) for item in value.values())  # member names: unknown ones are ignored
    if isinstance(value, list):
        return any(_holds_surrogate(item) for item in value)
    return False


def _member(message: dict[str, Any], json_name: str, proto_name: str) -> tuple[str | None, list[Any]]:
    """(the member's name, its list) for a repeated field, which OTLP/JSON may name either way; (None, []) without one."""
    for name in (json_name, proto_name):
        if isinstance(message.get(name), list):
            return name, message[name]
    return None, []


def _put(message: dict[str, Any], name: str | None, items: list[Any]) -> None:
    if name is not None:
        message[name] = items
