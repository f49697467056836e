"""The bad-case store, `ragpulse badcases` and GET /api/badcases (the local judge itself: test_local_judge.py)."""

from __future__ import annotations

import json
import subprocess
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.events import ndjson, trace
from helpers.sidecar import RagpulseProcess, ragpulse_command
from helpers.waiting import wait_until
from prometheus_client import CollectorRegistry

import msgspec

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.exit import build_record
from ragpulse.results import badcases, badcases_view
from ragpulse.results.badcases import BadCaseStore
from ragpulse.results.writer import ResultWriter
from ragpulse.judging.records import (CandidateRecord, JudgmentRecord, Record, ReviewRecord, SignalRecord,
                                      judged_record_bytes, record_bytes)
from ragpulse.judging.sampler import JudgeItem
from ragpulse.judging.verdicts import CitationVerdict, Claim, Judgment, judgment_bytes

Factory = Callable[..., RagpulseProcess]
RETURNS = "Returns are accepted within 30 days of delivery. Refunds are paid to the original card."
SHIPPING = "Standard shipping takes 3 to 5 working days."
CHUNKS = [{"id": "kb-returns", "text": RETURNS}, {"id": "kb-shipping", "text": SHIPPING}]


@pytest.mark.unit
def test_store_keeps_bad_cases_within_retention_and_max_rows(tmp_path: Path) -> None:
    registry, now = CollectorRegistry(), [1_000_000.0]
    dropped = "ragpulse_results_dropped_total"
    store = BadCaseStore(str(tmp_path / "b.sqlite3"), retention_seconds=5000, max_rows=3, registry=registry,
                         clock=lambda: now[0])

    def record(trace_id: str, stage: str | None, at: float) -> None:
        event = TraceEvent(trace_id=trace_id, query="q", answer="a", app="shop")
        built = build_record(JudgeItem(event, False), Judgment(trace_id, "m", "v", groundedness=1), stage, "llm", 0.0, False)
        built.judged_at = at
        store(built)
        store.flush()  # as the result writer does after each batch

    record("good", None, now[0])  # not a bad case: not stored
    for i in range(5):
        record(f"bad-{i}", "generation", now[0] - 7200 + i * 1500)  # bad-0, bad-1 are past retention
    record("bad-3", "retrieval", now[0])  # a later judgment of a trace replaces it
    db = badcases.connect(tmp_path / "b.sqlite3")
    assert {r["trace_id"] for r in badcases.query(db)} == {"bad-0", "bad-1", "bad-2", "bad-3", "bad-4"}
    store.purge()
    assert [r["trace_id"] for r in badcases.query(db)] == ["bad-3", "bad-4", "bad-2"]  # newest first
    assert badcases.get(db, "bad-3")["stage"] == "retrieval"
    assert registry.get_sample_value(dropped, {"reason": "retention"}) == 2
    record("bad-5", "generation", now[0] + 0.5)
    record("bad-6", "generation", now[0] + 1)
    store.purge()
    assert [r["trace_id"] for r in badcases.query(db)] == ["bad-6", "bad-5", "bad-3"]
    assert registry.get_sample_value(dropped, {"reason": "max_rows"}) == 2
    assert [r["trace_id"] for r in badcases.query(db, stage="retrieval")] == ["bad-3"]
    assert [r["trace_id"] for r in badcases.query(db, since=now[0] + 0.75)] == ["bad-6"]
    assert badcases.query(db, app="other") == []
    now[0] += 6000  # past ten minutes since the last purge, the next write purges: bad-3, bad-5, bad-6 have expired
    record("bad-7", "generation", now[0])
    assert [r["trace_id"] for r in badcases.query(db)] == ["bad-7"]
    assert registry.get_sample_value(dropped, {"reason": "retention"}) == 5


@pytest.mark.unit
def test_parse_time() -> None:
    assert badcases.parse_time("2h", 10_000.0) == 10_000.0 - 7200
    assert badcases.parse_time("30m", 10_000.0) == 10_000.0 - 1800
    assert badcases.parse_time("2026-11-29T10:00:00Z", 0) == 1795946400.0
    assert badcases.parse_time("1795946400", 0) == 1795946400.0
    with pytest.raises(ValueError, match="is not a time"):
        badcases.parse_time("yesterday", 0)


def test_without_a_key_the_local_judge_fills_the_store_the_api_and_the_cli(ragpulse_factory: Factory, tmp_path: Path) -> None:
    rp = ragpulse_factory("--set", "judge.sample_rate=1.0", "--set", "http.auth_token=secret",
                          "--set", "http.api_token=reader")
    ingest, auth = {"Authorization": "Bearer secret"}, {"Authorization": "Bearer reader"}
    events = [
        trace("grounded", query="How long do I have to return shoes?", chunks=CHUNKS,
              answer="You can return them within 30 days of delivery."),
        trace("wrong-number", query="How long do I have to return shoes?", chunks=CHUNKS,
              answer="You can return them within 90 days of delivery."),
        trace("refused", query="How long do I have to return shoes?", chunks=CHUNKS,
              answer="I'm sorry, I couldn't find any information about that."),
        trace("nothing", route="warranty", query="Is there a warranty?", chunks=[],
              answer="I'm sorry, I couldn't find any information about that."),
    ]
    assert rp.post("/v1/events", ndjson(events), ingest).json()["accepted"] == 4
    wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 4, what="4 judgments")
    s = rp.metrics()
    assert s.total("ragpulse_judgments_total", judge="local", metric="groundedness", verdict="grounded") == 1
    assert s.total("ragpulse_judgments_total", judge="local", metric="groundedness", verdict="hallucination") == 1
    assert s.total("ragpulse_judgments_total", judge="local", metric="answer_relevancy", verdict="fallback") == 1
    assert s.total("ragpulse_judgments_total", judge="rule", metric="answer_relevancy", verdict="fallback") == 1
    assert s.total("ragpulse_judge_requests_total") == 0  # no LLM was called
    assert {stage: s.total("ragpulse_badcases_total", stage=stage) for stage in ("generation", "over_refusal", "knowledge_gap")} \
        == {"generation": 1, "over_refusal": 1, "knowledge_gap": 1}

    # User content: behind the API's token, which the ingest token is not.
    assert rp.get("/api/badcases").status == rp.get("/api/badcases", ingest).status == 401
    wait_until(lambda: rp.get("/api/badcases", auth).json()["count"] == 3, what="3 stored bad cases")
    found = rp.get("/api/badcases?stage=generation&since=1h", auth).json()["badcases"]
    assert [(r["trace_id"], r["judge"], r["groundedness"]) for r in found] == [("wrong-number", "local", 1)]
    assert found[0]["chunks"][0] == {"text": RETURNS, "id": "kb-returns", "relevance": 2}
    assert rp.get("/api/badcases?route=warranty", auth).json()["badcases"][0]["trace_id"] == "nothing"
    refused = rp.get("/api/badcases/refused", auth).json()
    # A refusal is never a hallucination: its record says fallback, and its stage whether refusing was right.
    assert {k: refused[k] for k in ("stage", "fallback", "hallucination", "groundedness", "claims")} == {
        "stage": "over_refusal", "fallback": True, "hallucination": False, "groundedness": None, "claims": []}
    nothing = rp.get("/api/badcases/nothing", auth).json()
    assert (nothing["stage"], nothing["hallucination"], nothing["fallback"]) == ("knowledge_gap", False, True)
    # The API and the CLI agree: the same default limit, the total beside what is returned, a trace id prefix.
    one = rp.get("/api/badcases?limit=1", auth).json()
    assert (one["count"], one["total"], len(one["badcases"])) == (1, 3, 1)
    assert rp.get("/api/badcases/wrong-num", auth).json()["trace_id"] == "wrong-number"
    assert rp.get("/api/badcases/r", auth).json()["trace_id"] == "refused"  # the only one that starts with r
    missing = rp.get("/api/badcases/grounded", auth)
    assert (missing.status, missing.json()["error"]) == (404, "not_found")
    for query, parameter in (("stage=nowhere", "stage"), ("since=yesterday", "since"), ("limit=0", "limit"), ("color=red", "color")):
        bad = rp.get(f"/api/badcases?{query}", auth)
        assert (bad.status, bad.json()["parameter"]) == (400, parameter), query

    db = tmp_path / "ragpulse-badcases.sqlite3"  # the default path, relative to the working directory
    listing = subprocess.run([*ragpulse_command(), "badcases", "list", "--db", str(db), "--stage", "over_refusal"],
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split()[:3] == ["judged", "(UTC)", "stage"] and len(lines) == 2
    assert "over_refusal" in lines[1] and "refused" in lines[1] and "How long do I have to return shoes?" in lines[1]
    shown = subprocess.run([*ragpulse_command(), "badcases", "show", "wrong-number", "--db", str(db)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "stage: generation" in shown.stdout and "groundedness 1/5 HALLUCINATION" in shown.stdout
    assert "[1] kb-returns relevance 2/3" in shown.stdout and "within 90 days" in shown.stdout
    for trace_id, verdict in (("refused", "refusal: OVER-REFUSAL"), ("nothing", "refusal: correct abstention")):
        refusal = subprocess.run([*ragpulse_command(), "badcases", "show", trace_id, "--db", str(db)],
                                 capture_output=True, text=True, timeout=60)
        assert verdict in refusal.stdout and "HALLUCINATION" not in refusal.stdout, refusal.stdout
    first = subprocess.run([*ragpulse_command(), "badcases", "list", "--db", str(db), "--limit", "1"],
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0 and "1 of 3 bad cases, newest first (--limit for more)" in first.stderr, first.stderr
    as_json = subprocess.run([*ragpulse_command(), "badcases", "list", "--db", str(db), "--json", "--since", "1h"],
                             capture_output=True, text=True, timeout=60)
    assert sorted(json.loads(line)["trace_id"] for line in as_json.stdout.splitlines()) == ["nothing", "refused", "wrong-number"]
    absent = subprocess.run([*ragpulse_command(), "badcases", "show", "nope", "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert absent.returncode == 1 and "no bad case for trace 'nope'" in absent.stderr
    no_file = subprocess.run([*ragpulse_command(), "badcases", "list", "--db", str(tmp_path / "none.db")],
                             capture_output=True, text=True, timeout=60)
    assert no_file.returncode == 2 and "no bad-case store at" in no_file.stderr
    bad_since = subprocess.run([*ragpulse_command(), "badcases", "list", "--db", str(db), "--since", "soon"],
                               capture_output=True, text=True, timeout=60)
    assert bad_since.returncode == 2 and "'soon' is not a time" in bad_since.stderr


def test_the_store_can_be_turned_off(ragpulse_factory: Factory) -> None:
    rp = ragpulse_factory("--set", "results.sqlite_path=null")
    off = rp.get("/api/badcases")
    assert (off.status, off.json()["error"]) == (404, "no_store")


def test_a_bad_case_is_found_by_its_id_or_a_unique_prefix_and_listed_whole(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    store = BadCaseStore(str(tmp_path / "b.sqlite3"), retention_seconds=5000, max_rows=100,
                         registry=registry)
    ids = ["d15d7d74a51667109d5f0b8e2c4a9e11", "d15d7d74a51667109d5f0b8e2c4a9e12", "0a1b", "0A1B_x"]
    for trace_id in ids:
        event = TraceEvent(trace_id=trace_id, query="q", answer="a", app="shop")
        store(build_record(JudgeItem(event, False), Judgment(trace_id, "m", "v", groundedness=1), "generation", "llm", 0.0, False))
    store.flush()
    db = badcases.connect(tmp_path / "b.sqlite3")
    assert badcases.get_by_prefix(db, "d15d7d74a51667109d5f0b8e2c4a9e12")["trace_id"] == ids[1]  # type: ignore[index]
    with pytest.raises(badcases.AmbiguousPrefix, match="matches several bad cases"):
        badcases.get_by_prefix(db, "d15d7d74a51667109d5")  # the prefix the old table showed
    assert badcases.get_by_prefix(db, "0a")["trace_id"] == "0a1b"  # type: ignore[index]  # case-sensitive
    assert badcases.get_by_prefix(db, "0A1B_")["trace_id"] == "0A1B_x"  # type: ignore[index]  # no wildcards
    assert badcases.get_by_prefix(db, "ffff") is None
    listing = badcases_view.table(badcases.query(db))
    assert ids[0] in listing and ids[1] in listing
    shown = subprocess.run([*ragpulse_command(), "badcases", "show", "d15d7d74a5166710", "--db", str(tmp_path / "b.sqlite3")],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 1 and "give more of it" in shown.stderr
    shown = subprocess.run([*ragpulse_command(), "badcases", "show", "d15d7d74a51667109d5f0b8e2c4a9e1", "--db",
                            str(tmp_path / "b.sqlite3")], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 1  # still two
    shown = subprocess.run([*ragpulse_command(), "badcases", "show", "0A", "--db", str(tmp_path / "b.sqlite3")],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "trace 0A1B_x" in shown.stdout


def test_show_numbers_chunks_from_1_as_the_answer_cites_them_and_invents_no_label(tmp_path: Path) -> None:
    path = tmp_path / "b.sqlite3"
    store = BadCaseStore(str(path), retention_seconds=5000, max_rows=100, registry=CollectorRegistry())
    answer = "Returns are accepted within 90 days【1】. Standard shipping takes 3 to 5 working days【2】【7】."
    event = TraceEvent(trace_id="cites", query="How long do I have to return shoes?", answer=answer, app="shop",
                       chunks=[Chunk(text=RETURNS, id="kb-returns"), Chunk(text=SHIPPING, id="kb-shipping")])
    citations = [CitationVerdict("Returns are accepted within 90 days.", [0], [], "unsupported", "90 is not 30"),
                 CitationVerdict("Standard shipping takes 3 to 5 working days.", [1], ["7"], "supported")]
    judgment = Judgment("cites", "local", "claims.v4", groundedness=1, groundedness_reason="1 of 2 claims contradicted",
                        answer_relevancy=5, chunk_relevance=[2, 1], used_chunks=[1], citations=citations)
    store(build_record(JudgeItem(event, False), judgment, "generation", "local", 0.0, False))
    store.flush()
    shown = subprocess.run([*ragpulse_command(), "badcases", "show", "cites", "--db", str(path)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    # The trace carried no route, model, release or session: not reported, never "None".
    assert lines[2] == "app shop  route not reported  model not reported  release not reported  session not reported"
    assert [line for line in lines if line.startswith(("context used", "citation", "  ["))] == [
        "context used: 1 of 2 chunks ([2])",
        "citation WRONG CITATION: 'Returns are accepted within 90 days.' cites [1] (90 is not 30)",
        "citation supported: 'Standard shipping takes 3 to 5 working days.' cites [2], 7 (dangling)",
        "  [1] kb-returns relevance 2/3",
        "  [2] kb-shipping relevance 1/3",
    ]


@pytest.mark.unit
def test_the_writer_stores_a_backlog_in_batches_one_transaction_each(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    store = BadCaseStore(str(tmp_path / "b.sqlite3"), retention_seconds=86400, max_rows=10_000,
                         registry=registry)
    flushes: list[int] = []

    class Counting:
        """A second sink: sees every record, and how they were grouped."""
        seen = 0

        def __call__(self, record: object) -> None:
            self.seen += 1

        def flush(self) -> None:
            flushes.append(self.seen)

        def close(self) -> None: ...

    counting = Counting()
    writer = ResultWriter([("sqlite", store), ("counting", counting)], capacity=2000, max_bytes=1 << 30,
                          registry=registry)
    for i in range(1200):  # queued before the writer starts: a backlog
        event = TraceEvent(trace_id=f"t{i}", query="q", answer="a", app="shop")
        writer.write(build_record(JudgeItem(event, False), Judgment(f"t{i}", "m", "v", groundedness=1), "generation", "llm",
                                  0.0, False))
    writer.start()
    writer.close()
    assert flushes == [500, 1000, 1200]
    db = badcases.connect(tmp_path / "b.sqlite3")
    assert db.execute("SELECT count(*) FROM badcases").fetchone()[0] == 1200
    assert registry.get_sample_value("ragpulse_results_sink_errors_total", {"sink": "sqlite"}) is None


def judged(name: str, answer: str = "Refunds take 5 business days.") -> tuple[JudgmentRecord, int, Judgment]:
    """A judgment's record, its event's size as decoded (JSON) and the judgment."""
    chunks = [Chunk(text=f"Refunds take 5 business days. {name} " * 20, id=f"kb-{i}") for i in range(3)]
    event = TraceEvent(trace_id=name, query="How long do refunds take?", answer=answer, chunks=chunks,
                       retrieval_queries=["refund time"])
    claims = [Claim(answer, "contradicted", f"says 6 days where the context says 5 ({name})", [0])] * 3
    cited = [CitationVerdict(answer, [0], [], "supported", "the cited chunks support every claim of it")]
    judgment = Judgment(name, "local", "claims.v4", groundedness=1, claims=claims, citations=cited,
                        groundedness_reason="1 of 1 claims contradicted", answer_relevancy=5,
                        answer_relevancy_reason="100% of the question's terms are in the answer")
    record = build_record(JudgeItem(event, False), judgment, "generation", "local", 0.0, False, signals=["thumbs_down"])
    return record, len(msgspec.json.encode(event)), judgment


def judgment_record(name: str, answer: str = "Refunds take 5 business days.") -> JudgmentRecord:
    return judged(name, answer)[0]


@pytest.mark.unit
def test_a_record_estimate_is_at_least_what_a_fresh_copy_of_it_allocates() -> None:
    records = [
        judgment_record("ascii"), judgment_record("中文", answer="退款需要五个工作日。" * 10),
        CandidateRecord("t", 1.0, "to_label", "thumbs_down", "How long?", "Five days.",
                        [{"id": "kb-1", "text": "Refunds take 5 business days. " * 30}]),
        ReviewRecord("t", 1.0, 2, 4, [{"claim": "Refunds take 6 days.", "verdict": "contradicted"}], "wrong", "ana"),
        SignalRecord("t", "rephrase"),
    ]
    def allocated(record: Record) -> int:
        encoded = msgspec.msgpack.encode(record)
        decoder = msgspec.msgpack.Decoder(type(record))  # made first: its type information is not the record's
        tracemalloc.start()
        fresh = decoder.decode(encoded)
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert fresh == record
        return held

    for record in records:
        assert allocated(record) <= record_bytes(record) <= 3 * allocated(record) + 1_024, type(record)
    # A judged trace's record, from its event's size and the judgment's estimate (the judge's path).
    for answer in ("Refunds take 5 business days.", "退款需要五个工作日。" * 10, "Rückerstattung 😀 " * 40):
        record, event_bytes, judgment = judged("t", answer)
        estimate = judged_record_bytes(record, event_bytes, judgment_bytes(judgment))
        assert allocated(record) <= estimate <= 3 * allocated(record), answer


@pytest.mark.unit
def test_the_writer_queue_is_capped_in_bytes_and_gives_them_back_as_it_writes() -> None:
    registry = CollectorRegistry()
    release, seen = threading.Event(), []

    class Stalled:
        """A sink that holds the writer until the test lets it go (a slow disk, a broker away)."""

        def __call__(self, record: Record) -> None:
            release.wait(timeout=30)
            seen.append(record.trace_id)

        def close(self) -> None: ...

    records = [judgment_record(f"t{i}") for i in range(10)]
    size = record_bytes(records[0])
    assert all(record_bytes(r) == size for r in records)  # names of one length: records of one size
    writer = ResultWriter([("stalled", Stalled())], capacity=100, max_bytes=4 * size,
                          registry=registry)
    writer.start()
    writer.write(records[0])
    wait_until(lambda: writer.queue.qsize() == 0, what="the first record taken by the stalled sink")
    for record in records[1:]:
        writer.write(record)  # t0 is held by the sink and still counted: three more fit
    assert writer.queue.bytes == 4 * size
    assert registry.get_sample_value("ragpulse_results_dropped_total", {"reason": "writer_full"}) == 6
    release.set()
    wait_until(lambda: writer.queue.bytes == 0, what="every queued byte given back")
    writer.write(records[9])  # room again
    writer.close()
    assert seen == ["t0", "t1", "t2", "t3", "t9"] and writer.queue.bytes == 0
