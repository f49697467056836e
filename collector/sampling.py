"""Deterministic sampling by trace id: the same choice on every replica and every run.

The judge sampler (judging/sampler.py) and the embedding scorer draw from it, each on a stream of its own. A draw is a
uniform number in [0, 1) from the trace id, one independent stream per name: BLAKE2b with the name as personalisation
(its first 16 bytes), an 8-byte digest read big-endian over 2^64, in the compiled core (native/src/draw.rs); not crc32
of a salted id: crc32 is linear, so two salted crc32s of one id are correlated and their samples would nest.
"""

from __future__ import annotations

from ragpulse._native import draw

__all__ = ["draw", "in_sample"]


def in_sample(trace_id: str, rate: float, name: str = "routine") -> bool:
    """Whether the trace falls in a sample of `rate` of stream `name` (routine: the base rate)."""
    return draw(trace_id, name) < rate
