"""The sampling draw in the compiled core (native/src/draw.rs) is hashlib's BLAKE2b as collector/sampling.py defines
it: an 8-byte digest personalised with the stream's name (its first 16 bytes), read big-endian over 2^64."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse.collector.sampling import draw

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=300)  # no lone surrogates: ids are UTF-8


def hashlib_draw(trace_id: str, name: str) -> float:
    digest = hashlib.blake2b(trace_id.encode(), digest_size=8, person=name.encode()[:16]).digest()
    return int.from_bytes(digest, "big") / float(2**64)


@settings(max_examples=3000, deadline=None)
@given(_TEXT, st.one_of(st.sampled_from(("routine", "scorer_flag", "negative_feedback", "audit", "x" * 20)),
                        st.text(st.characters(exclude_categories=["Cs"]), max_size=24)))
def test_the_draw_is_blake2b_personalised_by_the_stream(trace_id: str, name: str) -> None:
    assert draw(trace_id, name) == hashlib_draw(trace_id, name)


def test_ids_across_block_boundaries_draw_as_hashlib_does() -> None:
    for size in (0, 1, 127, 128, 129, 255, 256, 257, 1000):
        assert draw("é" * size, "routine") == hashlib_draw("é" * size, "routine")
