"""Deterministic sampling by trace id: the same choice on every replica and every run.

The judge sampler (judging/sampler.py) and the embedding scorer draw from it, each on a stream of its own.
"""

from __future__ import annotations

import hashlib
from typing import Any

_HASH_SPACE = float(2**64)

_STREAMS: dict[str, Any] = {}  # name -> a blake2b state personalised with it (copying one is cheaper than making one)


def draw(trace_id: str, name: str) -> float:
    """A uniform number in [0, 1) from the trace id, one independent stream per `name`: the same on
    every replica and every run. blake2b with the name as personalisation, not crc32 of a salted id:
    crc32 is linear, so two salted crc32s of one id are correlated and their samples would nest."""
    stream = _STREAMS.get(name)
    if stream is None:
        stream = _STREAMS[name] = hashlib.blake2b(digest_size=8, person=name.encode()[:16])
    hasher = stream.copy()
    hasher.update(trace_id.encode())
    return int.from_bytes(hasher.digest(), "big") / _HASH_SPACE


def in_sample(trace_id: str, rate: float, name: str = "routine") -> bool:
    """Whether the trace falls in a sample of `rate` of stream `name` (routine: the base rate)."""
    return draw(trace_id, name) < rate
