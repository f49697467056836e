"""What the compiled core makes on its way through a call is released when the call's results are: counted by
tracemalloc as the blocks still held, after the results are gone, that were allocated while the call ran. A
reference the crate keeps by mistake is memory no cap counts (the soak's RSS grew 7 MB a minute with two ints an
NDJSON line kept: docs/benchmarks-log.md)."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from ragpulse.collector import decode
from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import LimitsConfig
from ragpulse.scorers import lexical
from ragpulse.scorers.lexical import MAX_CHARS, LexicalScorer

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def blocks_kept(call: Callable[[], object], made_in: str, times: int) -> int:
    """Blocks allocated while `call` ran (in a frame of the module file `made_in`, where the crate is called) that are
    still held once its result is dropped, over `times` calls after a first one (which may fill caches)."""
    call()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(times):
            call()
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    only = [tracemalloc.Filter(True, made_in)]
    return sum(stat.count_diff for stat in after.filter_traces(only).compare_to(before.filter_traces(only), "filename"))


def test_an_ndjson_body_s_lines_leave_nothing_behind() -> None:
    """Each line is a view of the body cut by a slice whose bounds (ints from 257 on are objects of their own) were
    kept for good: 99 ints a body of 50 lines before."""
    line = json.dumps({"type": "trace", "trace_id": "t", "query": "q", "answer": "a" * 300}).encode()
    body = b"\n".join([line] * 50)
    decoder = EventDecoder(LimitsConfig(), "http")
    assert len(decoder.decode_body(body, ndjson=True).envelopes) == 50
    assert blocks_kept(lambda: decoder.decode_body(body, ndjson=True), str(Path(decode.__file__)), 20) == 0


def test_a_text_cut_to_max_chars_leaves_nothing_behind() -> None:
    """The lexical stage cuts a longer text to its first MAX_CHARS characters with a slice, whose end was kept: an int
    a cut text before."""
    registry = CollectorRegistry()
    scorer = LexicalScorer(registry, LabelGuard(["app"], 50, 100, registry))
    long = "The warranty covers manufacturing defects for two years. " * 80
    assert len(long) > MAX_CHARS
    event = TraceEvent(trace_id="t", query="How long is the warranty?", answer=long, chunks=[Chunk(text=long)])
    assert scorer.score(event) is not None
    assert blocks_kept(lambda: scorer.score(event), str(Path(lexical.__file__)), 20) == 0
