"""The local judge's memo of English stems (native/src/clause/memo.rs): the same claims, bounded in words and bytes,
its evictions counted."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from ragpulse._native import ChunkContext, StemMemo
from ragpulse.collector.telemetry.fast_metrics import CounterFamily
from ragpulse.judging.chunk_analysis import analyse
from ragpulse.judging.local_judge import _AS_WELL, _RULES

_CONTEXT = ChunkContext([analyse("Parcels travel quickly across the country. Returns are free within 30 days.")])
_ENTRY = 176  # memo.rs ENTRY_BYTES


def _memo(max_entries: int, max_bytes: int) -> tuple[StemMemo, CounterFamily]:
    evicted = CounterFamily("test_stems_evicted_total", "evictions", [], CollectorRegistry())
    return StemMemo(max_entries, max_bytes, evicted.labels()), evicted


@pytest.mark.unit
@pytest.mark.parametrize("text", ["Parcels travel quickly", "Returns are not free after 30 days", "Shipping costs €5."])
def test_a_claim_is_the_same_with_the_memo(text: str) -> None:
    memo, _ = _memo(100, 1 << 20)
    alone = _RULES.claims(_CONTEXT, [text], _AS_WELL, True)
    assert _RULES.claims(_CONTEXT, [text], _AS_WELL, True, memo) == alone
    assert _RULES.claims(_CONTEXT, [text], _AS_WELL, True, memo) == alone  # its stems remembered now


@pytest.mark.unit
def test_the_memo_is_bounded_in_words_and_bytes_and_counts_evictions() -> None:
    # parcels -> parcel, travel -> travel, quickly -> quick: each its word's and stem's bytes and _ENTRY
    costs = [7 + 6 + _ENTRY, 6 + 6 + _ENTRY, 7 + 5 + _ENTRY]
    memo, evicted = _memo(100, 1 << 20)
    _RULES.claims(_CONTEXT, ["Parcels travel quickly"], _AS_WELL, False, memo)
    _RULES.claims(_CONTEXT, ["Parcels travel quickly"], _AS_WELL, False, memo)
    assert (len(memo), memo.bytes, evicted.labels().value) == (3, sum(costs), 0.0)
    by_words, evicted = _memo(2, 1 << 20)
    _RULES.claims(_CONTEXT, ["Parcels travel quickly"], _AS_WELL, False, by_words)
    assert (len(by_words), by_words.bytes, evicted.labels().value) == (2, costs[1] + costs[2], 1.0)  # the oldest went
    by_bytes, evicted = _memo(100, costs[0] + costs[1])
    _RULES.claims(_CONTEXT, ["Parcels travel quickly"], _AS_WELL, False, by_bytes)
    assert (len(by_bytes), by_bytes.bytes, evicted.labels().value) == (2, costs[1] + costs[2], 1.0)
    none, evicted = _memo(100, _ENTRY)  # no stem fits: each made, none held
    _RULES.claims(_CONTEXT, ["Parcels travel quickly"], _AS_WELL, False, none)
    assert (len(none), none.bytes, evicted.labels().value) == (0, 0, 0.0)
