"""Calibration: human reviews meet the audited judgments, in either order, within bounds; the
counters, `ragpulse calibration`, GET /api/calibration and `ragpulse review` in a real terminal."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.events import envelope, feedback_join, ndjson, trace
from helpers.metrics import Samples
from helpers.sidecar import RagpulseProcess, ragpulse_command
from helpers.waiting import wait_until
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Envelope, FeedbackEvent, ReviewScores
from ragpulse.config import CalibrationConfig
from ragpulse.judging.agreement import AuditedJudgment
from ragpulse.judging.calibration import Calibrator
from ragpulse.judging.records import JudgmentRecord, ReviewRecord
from ragpulse.results import review_queue

Factory = Callable[..., RagpulseProcess]
CHUNKS = [{"id": "kb-1", "text": "Returns are accepted within 30 days of delivery for unused items in their original packaging."}]
GROUNDED = "Returns are accepted within 30 days of delivery."  # the local judge: groundedness 5
INVENTED = "HALLUCINATE Refunds arrive instantly by drone anywhere worldwide."  # the local judge: groundedness 1


class Reviews:
    def __init__(self) -> None:
        self.written: list[ReviewRecord] = []

    def write(self, record: ReviewRecord) -> None:
        self.written.append(record)


def record(trace_id: str, groundedness: int, *, audit: bool = True, answer: str = "short answer",
           model: str = "m1", judge_model: str = "judge-m") -> JudgmentRecord:
    return JudgmentRecord(
        trace_id=trace_id, judged_at=0.0, app="shop", route="returns", model=model, release="r1", session_id=None,
        priority="base_rate", sample="routine", stratum="none", reasons=["base_rate"], audit=audit, fallback=False,
        stage=None, bad=False, query="q", answer=answer, chunks=[], groundedness=groundedness,
        hallucination=groundedness <= 2, supported_share=None, claims=[], groundedness_reason="", answer_relevancy=5,
        answer_relevancy_reason="", context_relevance=3, context_relevance_reason="", error=None, raw_output=None,
        judge="llm", judge_model=judge_model, prompt_version="judgment.v1", prompt_tokens=0, completion_tokens=0, cost=0.0)


def review(trace_id: str | None, groundedness: int, relevancy: int | None = None, comment: str | None = None) -> Envelope:
    event = FeedbackEvent(kind="review", trace_id=trace_id, session_id=None if trace_id else "s", value=groundedness,
                          scores=ReviewScores(groundedness=groundedness, answer_relevancy=relevancy), comment=comment,
                          timestamp=1.0)
    return envelope(event, source="http")


class Harness:
    """The calibrator with the feedback join it waits in, called as the service calls them."""

    def __init__(self, now: list[float], registry: CollectorRegistry, sink: Reviews, *, max_audited: int = 100,
                 max_pending: int = 100, max_pending_bytes: int = 1_000_000) -> None:
        self.join = feedback_join(registry, clock=lambda: now[0], pending_window_seconds=10.0, max_pending=max_pending,
                                  max_pending_bytes=max_pending_bytes)
        self.calibrator = Calibrator(CalibrationConfig(review_window_seconds=1000.0, max_audited=max_audited), registry, sink,
                                     pending_reviews=lambda: self.join.pending_reviews, clock=lambda: now[0])
        self.join.listeners.append(self.calibrator)

    def __call__(self, envelope: Envelope) -> None:
        self.join(envelope)

    def judged(self, judgment: JudgmentRecord) -> None:
        """What the judge workers do with a record (the join's timer expires what is over first)."""
        self.join.expire()
        self.join.judged(judgment.trace_id, judgment.sample, "grounded", "none")
        self.calibrator.judged(judgment)
        self.join.release_reviews(judgment.trace_id)

    def restore(self, entries: list[tuple[str, float, AuditedJudgment]]) -> int:
        return self.calibrator.restore(entries)


def calibrator(now: list[float], **bounds: int) -> tuple[Harness, CollectorRegistry, Reviews]:
    registry, sink = CollectorRegistry(), Reviews()
    return Harness(now, registry, sink, **bounds), registry, sink


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return sum(s.value for metric in registry.collect() for s in metric.samples
               if s.name == name and labels.items() <= s.labels.items())


@pytest.mark.unit
def test_reviews_meet_judgments_in_either_order_and_the_rest_is_counted_by_reason() -> None:
    now = [0.0]
    join, registry, sink = calibrator(now)
    join.judged(record("judged-first", 1))  # judge: hallucination
    join(review("judged-first", 2, relevancy=4))  # human: hallucination
    join(review("reviewed-first", 4))  # waits for its judgment
    assert value(registry, "ragpulse_calibration_pending_reviews") == 1
    join.judged(record("reviewed-first", 2, answer="x" * 600, model="judge-m"))  # judge only; long; self-judging
    join(review("outside", 5))
    join.judged(record("outside", 5, audit=False))  # judged, but not in the audit
    join(review(None, 3))
    join(review("never", 3))
    now[0] = 11.0
    join.judged(record("other", 5, audit=False))  # the window of "never" is over
    reviews = "ragpulse_calibration_reviews_total"
    assert value(registry, reviews, judge_verdict="hallucination", human_verdict="hallucination", answer_length="short",
                 self_judging="false") == 1
    assert value(registry, reviews, judge_verdict="hallucination", human_verdict="grounded", answer_length="long",
                 self_judging="true", judge_model="judge-m", prompt_version="judgment.v1") == 1
    assert value(registry, reviews) == 2
    assert value(registry, "ragpulse_calibration_score_agreement_total", metric="groundedness", agreement="within_one") == 1
    assert value(registry, "ragpulse_calibration_score_agreement_total", metric="groundedness", agreement="off") == 1
    assert value(registry, "ragpulse_calibration_score_agreement_total", metric="answer_relevancy", agreement="within_one") == 1
    unmatched = {reason: value(registry, "ragpulse_calibration_reviews_unmatched_total", reason=reason)
                 for reason in ("not_audited", "orphan", "no_trace_id", "pending_full")}
    assert unmatched == {"not_audited": 1, "orphan": 1, "no_trace_id": 1, "pending_full": 0}
    assert value(registry, "ragpulse_calibration_pending_reviews") == 0
    assert [(r.trace_id, r.groundedness, r.answer_relevancy) for r in sink.written] == [
        ("judged-first", 2, 4), ("reviewed-first", 4, None)]
    join(review("judged-first", 1))  # a second reviewer of the same trace counts too
    assert value(registry, reviews) == 3


@pytest.mark.unit
def test_the_join_is_bounded_in_count_and_bytes() -> None:
    now = [0.0]
    join, registry, _ = calibrator(now, max_pending=100, max_audited=50, max_pending_bytes=200_000)
    for i in range(1_000):
        join(review(f"flood-{i}", 3))
    assert value(registry, "ragpulse_calibration_pending_reviews") == 100
    assert value(registry, "ragpulse_calibration_reviews_unmatched_total", reason="pending_full") == 900
    for i in range(100):  # 4,000-character comments: the byte budget binds before the count
        join(review(f"long-{i}", 3, comment="c" * 4_000))
    # Each costs 256 + 7 + 4 x 4,000 bytes: 12 fit in 200,000, and the short ones went first.
    assert value(registry, "ragpulse_calibration_pending_reviews") == 12
    for i in range(80):
        join.judged(record(f"audited-{i}", 5))
    assert value(registry, "ragpulse_calibration_audited_waiting") == 50
    assert value(registry, "ragpulse_calibration_audited_evicted_total") == 30
    join(review("audited-79", 5))  # the newest are kept
    join(review("audited-0", 5))  # the oldest were evicted: it waits instead
    assert value(registry, "ragpulse_calibration_reviews_total") == 1


@pytest.mark.unit
def test_restored_judgments_from_an_earlier_run_still_meet_their_reviews(tmp_path: Path) -> None:
    path = str(tmp_path / "store.sqlite3")
    store = review_queue.ReviewQueueStore(path, retention_seconds=86400, max_rows=10, registry=CollectorRegistry())
    fresh = record("restart", 1)
    fresh.judged_at = time.time() - 60
    store(fresh)
    stale = record("too-old", 1)
    stale.judged_at = time.time() - 5000
    store(stale)
    store.close()
    with review_queue.connect(path) as db:
        entries = review_queue.waiting(db, now=time.time(), window=3600)
    assert [trace_id for trace_id, _, _ in entries] == ["restart"]
    now = [0.0]
    join, metrics, _ = calibrator(now)
    assert join.restore(entries) == 1
    join(review("restart", 1))
    assert value(metrics, "ragpulse_calibration_reviews_total", judge_verdict="hallucination", human_verdict="hallucination") == 1


def judged_sidecar(factory: Factory, *extra: str) -> RagpulseProcess:
    """The local judge on every trace, every judged trace audited."""
    return factory("--set", "judge.sample_rate=1.0", "--set", "calibration.audit_rate=1.0",
                   "--set", "judge.priority_rates.scorer_flag=0", "--set", "satisfaction.pending_window_seconds=2", *extra)


def test_reviews_through_a_running_sidecar_give_the_confusion_counts_cli_and_api(ragpulse_factory: Factory,
                                                                                 tmp_path: Path) -> None:
    rp = judged_sidecar(ragpulse_factory)
    db = tmp_path / "ragpulse-badcases.sqlite3"

    def send_review(trace_id: str, groundedness: int, relevancy: int) -> None:
        body = {"kind": "review", "trace_id": trace_id, "scores": {"groundedness": groundedness, "answer_relevancy": relevancy}}
        assert rp.post("/v1/feedback", json.dumps(body).encode()).json()["accepted"] == 1

    send_review("early", 1, 5)  # before its trace: waits in the join
    rp.post("/v1/events", ndjson([
        *(trace(f"good-{i}", chunks=CHUNKS, answer=GROUNDED) for i in range(3)),
        *(trace(f"bad-{i}", chunks=CHUNKS, answer=INVENTED) for i in range(2)),
        trace("early", chunks=CHUNKS, answer=INVENTED),
    ]))
    wait_until(lambda: rp.metrics().total("ragpulse_calibration_audited_total") == 6, what="6 audited judgments")
    send_review("good-0", 5, 5)  # neither
    send_review("good-1", 2, 5)  # the human only
    send_review("bad-0", 1, 1)  # both
    send_review("bad-1", 4, 2)  # the judge only
    send_review("ghost", 3, 3)  # no such trace: an orphan once its window (2 s) is over
    wait_until(lambda: rp.metrics().get_value("ragpulse_calibration_reviews_unmatched_total", reason="orphan") == 1,
               what="the ghost review expired")
    send_review("good-2", 5, 4)  # neither
    wait_until(lambda: rp.metrics().total("ragpulse_calibration_reviews_total") == 6, what="6 matched reviews")
    s: Samples = rp.metrics()
    cells = {(j, h): s.total("ragpulse_calibration_reviews_total", judge="local", judge_model="local",
                             prompt_version="claims.v11", judge_verdict=j, human_verdict=h)
             for j in ("hallucination", "grounded") for h in ("hallucination", "grounded")}
    assert cells == {("hallucination", "hallucination"): 2, ("hallucination", "grounded"): 1,
                     ("grounded", "hallucination"): 1, ("grounded", "grounded"): 2}
    assert s.get_value("ragpulse_calibration_reviews_unmatched_total", reason="orphan") == 1
    assert s.get_value("ragpulse_calibration_agreement_threshold_ratio") == 0.8
    # Groundedness: good-0 5/5 exact, good-1 5/2 off, bad-0 1/1 exact, bad-1 1/4 off, early 1/1 exact, good-2 5/5
    # exact (claims.v5 on score the invented answer 1 from the model's probability; claims.v4 gave 2: [2, 2, 2]).
    assert [s.get_value("ragpulse_calibration_score_agreement_total", judge="local", judge_model="local",
                        prompt_version="claims.v11", metric="groundedness", agreement=a)
            for a in ("exact", "within_one", "off")] == [4, 0, 2]
    wait_until(lambda: review_queue.count_open(review_queue.connect(db)) == 0, what="the reviews in the store")
    api = rp.get("/api/calibration").json()
    [group] = api["judges"]
    assert (group["judge"], group["judge_model"], group["prompt_version"], group["reviews"]) == ("local", "local", "claims.v11", 6)
    assert group["confusion"] == {"both_hallucination": 2, "judge_only": 1, "human_only": 1, "neither": 2}
    # p_o = 4/6; p_e = (3*3 + 3*3)/36 = 0.5; kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert (group["agreement"], group["kappa"], group["sensitivity"], group["specificity"]) == (0.6667, 0.3333, 0.6667, 0.6667)
    assert group["below_threshold"] is None  # 6 reviews, under calibration.min_reviews
    assert group["routine"]["judged"] == 6 and group["routine"]["hallucinated"] == 3
    assert group["corrected"]["rate"] is None and group["corrected"]["reason"].startswith("too few reviews: 3 human-hallucinated")
    assert rp.get("/api/calibration?since=yesterday").status == 400
    shown = subprocess.run([*ragpulse_command(), "calibration", "--db", str(db)], capture_output=True, text=True, timeout=60,
                           cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "judge local · model local · prompt claims.v11 — 6 reviews" in out
    assert "agreement 66.7% (not enough reviews to say); Cohen's kappa 0.33; sensitivity 66.7%; specificity 66.7%" in out
    assert "hallucination rate observed: 50.0% [18.8%, 81.2%] of 6 routine judgments" in out
    assert "corrected (Rogan–Gladen): none — too few reviews" in out
    as_json = json.loads(subprocess.run([*ragpulse_command(), "calibration", "--db", str(db), "--json"], capture_output=True,
                                        text=True, timeout=60, cwd=tmp_path).stdout)
    assert as_json["judges"] == api["judges"]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by scripts/test (scripts/tools.sh)")
def test_ragpulse_review_in_a_real_terminal_scores_three_traces(ragpulse_factory: Factory, tmp_path: Path) -> None:
    rp = judged_sidecar(ragpulse_factory)
    db = tmp_path / "ragpulse-badcases.sqlite3"
    rp.post("/v1/events", ndjson([trace(f"tui-{i}", chunks=CHUNKS, answer=INVENTED if i == 1 else GROUNDED) for i in range(3)]))
    wait_until(lambda: rp.metrics().total("ragpulse_calibration_audited_total") == 3, what="3 audited judgments")
    wait_until(lambda: db.exists() and review_queue.count_open(review_queue.connect(db)) == 3, what="3 traces in the queue")
    session = f"ragpulse-review-{rp.port}"
    command = " ".join([*ragpulse_command(), "review", "--db", str(db), "--target", rp.url, "--reviewer", "ana"])
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "140", "-y", "45", command], check=True, cwd=tmp_path)

    def screen() -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout

    def keys(*names: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", session, *names], check=True)

    try:
        for index, (groundedness, relevancy) in enumerate(((5, 5), (1, 2), (4, 5))):
            shown = f"tui-{index}"
            wait_until(lambda: shown in screen() and "press 1-5" in screen(), what=f"trace {shown} shown")  # noqa: B023
            assert "The judge said" not in screen()  # hidden until the reviewer has scored
            keys(str(groundedness))
            wait_until(lambda: "Answer relevancy" in screen(), what="the relevancy question")
            assert "The judge said" not in screen()
            keys(str(relevancy))
            wait_until(lambda: "The judge said" in screen(), what="the judge's verdict revealed")
            keys("Enter")
        wait_until(lambda: "Nothing waits for review" in screen(), what="the end of the queue")
        wait_until(lambda: rp.metrics().total("ragpulse_calibration_reviews_total") == 3, what="3 reviews counted")
        s = rp.metrics()
        assert s.total("ragpulse_calibration_reviews_total", judge_verdict="hallucination", human_verdict="hallucination") == 1
        assert s.total("ragpulse_calibration_reviews_total", judge_verdict="grounded", human_verdict="grounded") == 2
        assert s.total("ragpulse_calibration_score_agreement_total", metric="answer_relevancy") == 3
        keys("q")
        wait_until(lambda: subprocess.run(["tmux", "has-session", "-t", session], capture_output=True).returncode != 0,
                   what="the review tool quits")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    rows = review_queue.reviewed_rows(review_queue.connect(db), since=0)
    # claims.v5 derives groundedness from the model's probability: the invented answer is a 1 (claims.v4 gave it 2)
    assert sorted((r.judge_groundedness, r.human_groundedness) for r in rows) == [(1, 1), (5, 4), (5, 5)]


@pytest.mark.unit
def test_the_review_queue_keeps_audited_traces_within_retention_and_max_rows(tmp_path: Path) -> None:
    registry, now = CollectorRegistry(), [1_000_000.0]
    store = review_queue.ReviewQueueStore(str(tmp_path / "q.sqlite3"), retention_seconds=5000, max_rows=3,
                                          registry=registry, clock=lambda: now[0])
    for index, age in enumerate((6000, 100, 90, 80, 70)):  # the first is past retention
        judged = record(f"t{index}", 1 if index % 2 else 5)
        judged.judged_at = now[0] - age
        store(judged)
    outside = record("not-audited", 1, audit=False)  # tallied, not queued
    outside.judged_at = now[0]
    store(outside)
    store.purge()
    store.flush()  # as the result writer does after each batch
    db = review_queue.connect(tmp_path / "q.sqlite3")
    assert [item["trace_id"] for item in review_queue.open_items(db, limit=10)] == ["t2", "t3", "t4"]
    assert value(registry, "ragpulse_results_dropped_total", reason="review_retention") == 1
    assert value(registry, "ragpulse_results_dropped_total", reason="review_max_rows") == 1
    assert review_queue.write_review(db, ReviewRecord("t3", 1.0, 2, 5, [], None, "ana"))
    assert not review_queue.write_review(db, ReviewRecord("t0", 1.0, 2, 5, [], None, "ana"))  # gone with retention
    [row] = review_queue.reviewed_rows(db, since=0)
    assert (row.judge_groundedness, row.human_groundedness, row.human_relevancy) == (1, 2, 5)
    # Routine tallies per day (retention by whole days): all six routine judgments, three of them hallucinated.
    assert review_queue.routine_counts(db, since=0) == {("llm", "judge-m", "judgment.v1"): (6, 3)}


@pytest.mark.unit
def test_the_review_screen_numbers_chunks_from_1_as_citations_do(tmp_path: Path) -> None:
    """The reviewer reads an answer that cites [1] beside the chunks: the chunks are numbered from 1, not 0."""
    from textual.widgets import Static

    from ragpulse.app.cli.review_app import ReviewApp

    path = str(tmp_path / "q.sqlite3")
    item = {"question": "How long do returns take?", "answer": "Returns take 30 days [1].",
            "chunks": [{"id": "kb-returns", "text": "Returns take 30 days."},
                       {"id": "kb-shipping", "text": "Shipping is free."}]}
    with review_queue.connect(path) as db:
        db.execute("INSERT INTO review_queue VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                   ("t-1", time.time(), "shop", "/ask", None, None, "local", "local", "claims.v5",
                    json.dumps(item), json.dumps({"judge": "local", "judge_model": "local"})))

    async def shown() -> str:
        app = ReviewApp(path, target="http://127.0.0.1:9", token=None, reviewer=None, offline=True)
        async with app.run_test():
            return str(app.query_one("#trace", Static).render())

    text = asyncio.run(shown())
    assert "[1] kb-returns: Returns take 30 days." in text
    assert "[2] kb-shipping: Shipping is free." in text
    assert "[0]" not in text
