"""A new app's first traffic, as a real Prometheus records its ratios: a series born with its first counts in it
(increase() takes that first sample as its baseline) must count whole, or the first answers of every new app,
route or release drop out of its rates. The sidecar judges with the local judge, whose used chunks and citation
verdicts of these answers are known (tests/test_context_use.py); the first answers use most of their chunks and
cite them right, the later ones few and mostly wrong, so a window that misses the first is far off."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.alerting import PrometheusProcess, start_prometheus
from helpers.events import ndjson
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until

from ragpulse.mixin.rules import RULES_FILE

Factory = Callable[..., RagpulseProcess]
# Each chunk's text, and the sentence of an answer drawn from it.
SHOP = [
    ("Returns: unused items can be returned within 30 days of delivery.", "Unused items can be returned within 30 days of delivery"),
    ("Warranty: electronics carry a 2-year manufacturer warranty against defects.",
     "Electronics carry a 2-year manufacturer warranty against defects"),
    ("Shipping: standard delivery takes 3 to 5 business days.", "Standard delivery takes 3 to 5 business days"),
    ("Gift cards never expire and can be used on any order.", "Gift cards never expire"),
    ("Our stores are open Monday to Saturday from 9 am to 8 pm.", "Our stores are open Monday to Saturday from 9 am to 8 pm"),
]
INVENTED = "Every order ships free to any country worldwide."  # supported by no chunk: an answer that uses none
CHUNKS = 4
ANSWERS = 60  # in each of the two batches
# (share of chunks used, share of citations right) of the first batch and of the second.
FIRST, LATER = (0.8, 0.9), (0.2, 0.3)


class Batch:
    """Answers whose chunks are each used with probability `use` and each cited sentence cites its own chunk with
    probability `right` (else the next one: unsupported), with what the local judge will count of them."""

    def __init__(self, rng: random.Random, start: int, use: float, right: float) -> None:
        self.events: list[dict[str, Any]] = []
        self.used = self.supported = self.cited = 0
        for i in range(start, start + ANSWERS):
            order = rng.sample(range(len(SHOP)), CHUNKS)
            sentences = []
            for rank in (rank for rank in range(CHUNKS) if rng.random() < use):
                cited = rank if rng.random() < right else (rank + 1) % CHUNKS
                sentences.append(f"{SHOP[order[rank]][1]} [{cited + 1}].")
                self.used += 1
                self.supported += cited == rank
            self.cited += len(sentences)
            self.events.append({"type": "trace", "trace_id": f"fresh-{i}", "app": "fresh", "query": "What are your policies?",
                                "chunks": [{"id": f"kb-{k}", "text": SHOP[k][0]} for k in order],
                                "answer": " ".join(sentences) or INVENTED})


def fast_rules(tmp_path: Path, text: str) -> Path:
    """The rules file with every group evaluated each second (the shipped 1m would take minutes here)."""
    rules = yaml.safe_load(text)
    for group in rules["groups"]:
        group["interval"] = "1s"
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules))
    return path


def recorded_after_the_traffic(factory: Factory, tmp_path: Path, rules_text: str) -> tuple[dict[str, float | None], Batch, Batch]:
    """A sidecar scraped by a Prometheus evaluating `rules_text`; a new app's two batches, the second sent once
    Prometheus holds the first; the app's recorded utilisation, citation precision and judged citations over 5m,
    read once the rules have evaluated after the last scrape that carries the traffic."""
    rp = factory("--set", "judge.mode=local", "--set", "judge.sample_rate=1.0")
    prometheus = start_prometheus(tmp_path, [f"127.0.0.1:{rp.port}"], [fast_rules(tmp_path, rules_text)])
    rng = random.Random(43)
    first, later = Batch(rng, 0, *FIRST), Batch(rng, ANSWERS, *LATER)
    retrieved = 'sum(ragpulse_context_chunks_retrieved_total{app="fresh"})'
    try:
        wait_until(lambda: prometheus.value('up{job="ragpulse"}') == 1, what="Prometheus scraping the sidecar")
        for batch, total in ((first, ANSWERS * CHUNKS), (later, 2 * ANSWERS * CHUNKS)):
            assert rp.post("/v1/events", ndjson(batch.events)).status == 200
            wait_until(lambda: prometheus.value(retrieved) == total, what=f"{total} retrieved chunks judged and scraped")
        scraped = _latest(prometheus, 'max(timestamp(ragpulse_context_chunks_retrieved_total{app="fresh"}))')
        ratio = 'app:ragpulse_context_utilisation:ratio5m{app="fresh"}'
        # Two evaluations later: a rule evaluated just after a scrape's timestamp may run before its samples land.
        wait_until(lambda: _latest(prometheus, f"timestamp({ratio})") >= scraped + 2, what="the rules evaluated after it")
        return ({name: prometheus.value(f'app:ragpulse_{name}{{app="fresh"}}')
                 for name in ("context_utilisation:ratio5m", "citation_precision:ratio5m", "citation_judged:increase5m")},
                first, later)
    finally:
        prometheus.stop()


def _latest(prometheus: PrometheusProcess, expr: str) -> float:
    found = prometheus.value(expr)
    return found if found is not None else -math.inf


@pytest.mark.beside
def test_a_new_apps_first_answers_are_in_its_recorded_ratios(ragpulse_factory: Factory, tmp_path: Path) -> None:
    recorded, first, later = recorded_after_the_traffic(ragpulse_factory, tmp_path, RULES_FILE.read_text(encoding="utf-8"))
    retrieved = 2 * ANSWERS * CHUNKS
    # The truth: each chunk used with probability 0.8 for the first half of the answers, 0.2 for the second.
    utilisation = (FIRST[0] + LATER[0]) / 2
    # A cited sentence is a used chunk: the first batch's are four times as many, and right 90% of the time, not 30%.
    precision = (FIRST[0] * FIRST[1] + LATER[0] * LATER[1]) / (FIRST[0] + LATER[0])
    cited = first.cited + later.cited
    for name, truth, n in (("context_utilisation:ratio5m", utilisation, retrieved), ("citation_precision:ratio5m", precision, cited)):
        estimate = recorded[name]
        assert estimate is not None and abs(estimate - truth) <= 3 * math.sqrt(truth * (1 - truth) / n), (name, estimate, truth, n)
    # Every answer is in the window, counted exactly as the sidecar counted it.
    assert recorded["citation_judged:increase5m"] == cited
    assert recorded["context_utilisation:ratio5m"] == pytest.approx((first.used + later.used) / retrieved, abs=1e-12)
    assert recorded["citation_precision:ratio5m"] == pytest.approx((first.supported + later.supported) / cited, abs=1e-12)
