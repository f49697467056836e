"""Golden-set probes: `ragpulse probe run` against a small real RAG service (tests/helpers/rag_service.py) with a
32-question set, also as docs/probes.md's "Try a probe locally" tells a new user to run it; the metric maths and a
golden set's validation are tests/test_probes_golden.py's."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.fake_openai import FakeOpenAI
from helpers.net import free_port, http
from helpers.rag_service import RagService
from helpers.sidecar import ragpulse_command
from helpers.waiting import wait_until

from ragpulse.probes import compare, golden

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden_shop.jsonl"
LOG3 = math.log2(3)


@pytest.fixture
def service() -> Iterator[RagService]:
    rag = RagService()
    yield rag
    rag.close()


def probe(config: Path, db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ragpulse_command(), "probe", "run", "-c", str(config), "--golden", str(GOLDEN), "--target", "shop",
                           "--db", str(db), *extra], capture_output=True, text=True, timeout=120)


def test_probe_runs_against_a_real_rag_service_score_exactly_and_gate(service: RagService, tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(yaml.safe_dump({"probes": {"k": 5, "max_requests_per_second": 200, "targets": [
        {"name": "shop", "url": f"{service.url}/query"}]}}))
    db = tmp_path / "probes.sqlite3"
    done = probe(config, db, "--gate", "hit_rate>=0.9,mrr>=0.9", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    by_id = {q["key"]: q for q in run["results"]}
    # Hand-computed from the retrievals (tests/helpers/rag_service.py, k = 5, 30 questions with relevant chunks): 26
    # single chunks at rank 1; g29's at rank 2 (a water-damage chunk outranks it); g23, g24 two chunks at ranks 1 and 2;
    # g22 nothing retrieved (no shared word: a vocabulary miss).
    overall = _overall(run)
    assert overall["hit_rate"] == pytest.approx(29 / 30)
    assert overall["mrr"] == pytest.approx((26 + 0.5 + 1 + 1) / 30)
    assert overall["recall"] == pytest.approx(29 / 30)
    assert overall["precision"] == pytest.approx((26 * 0.2 + 0.2 + 0.4 + 0.4) / 30)
    assert overall["ndcg"] == pytest.approx((26 + 1 / LOG3 + 1 + 1) / 30)
    assert by_id["g29"]["retrieval"]["reciprocal_rank"] == 0.5 and by_id["g22"]["chunk_ids"] == []
    # fallbacks: g31, g32 expected and given; g22 answerable and fell back (counted wrong: correctness 1)
    assert (by_id["g31"]["fell_back"], by_id["g22"]["fell_back"], by_id["g01"]["fell_back"]) == (True, True, False)
    assert overall["fallback_accuracy"] == pytest.approx(31 / 32)
    assert (overall["expected_fallbacks_fell_back"], overall["answerable_fell_back"]) == (2, 1)
    assert (by_id["g01"]["correctness"], by_id["g22"]["correctness"]) == (5, 1)
    # g29 answers from the water-damage chunk: true, but without the 2-year warranty the expected answer gives (1:
    # claims.v5's score from the model's probability, 2 under claims.v4's rules); g08's answer says more than its
    # expected answer (the delivery time besides the price): not wrong for it (5)
    assert (by_id["g29"]["correctness"], by_id["g08"]["correctness"]) == (1, 5)
    # each answer judged as live traffic is: the extractive "LLM" answers with its best chunk's own words
    judged = [q for q in run["results"] if q["groundedness"] is not None]
    assert len(judged) == 29 and {(q["groundedness"], q["judge"]) for q in judged} == {(5, "local")}
    assert by_id["g22"]["groundedness"] is None  # it fell back: nothing to judge
    assert run["gate"] == {"hit_rate>=0.9": True, "mrr>=0.9": True}
    # probe traffic is marked: every request carried the run's id
    assert len(service.requests) == 32
    assert {r["headers"]["X-Ragpulse-Probe"] for r in service.requests} == {run["run_id"]}
    assert {r["headers"]["baggage"] for r in service.requests} == {f"ragpulse.probe={run['run_id']}"}

    service.degraded = True  # the best chunk of every retrieval is lost
    degraded = probe(config, db, "--gate", "hit_rate>=0.9,mrr>=0.9")
    assert degraded.returncode == 1, degraded.stderr
    assert "gate hit_rate>=0.9: 0.100 FAIL" in degraded.stdout and "gate mrr>=0.9: 0.100 FAIL" in degraded.stdout
    listing = subprocess.run([*ragpulse_command(), "probe", "list", "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and listing.stdout.count("golden_shop") == 2
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert "started (UTC)" in listing.stdout and listing.stdout.count(today) >= 2, listing.stdout  # when each ran
    from contextlib import closing

    from ragpulse.probes import store

    with closing(store.connect(db)) as connection:
        second, first = store.runs(connection)
        before, after = store.get(connection, first["run_id"]), store.get(connection, second["run_id"])
    assert before is not None and after is not None
    # Degraded, by hand: only g29 (now rank 1), g23 and g24 (their second chunk at rank 1) still hit.
    degraded_g01 = next(q for q in after["questions"] if q["key"] == "g01")
    # the return label's "24 hours" where the expected answer says 30 days: contradicted
    assert (degraded_g01["answer"], degraded_g01["correctness"]) == (
        "A prepaid return label is emailed within 24 hours of starting a return.", 1)
    summary = after["summary"]["overall"]
    assert (summary["hit_rate"], summary["mrr"]) == (pytest.approx(3 / 30), pytest.approx(3 / 30))
    assert summary["recall"] == pytest.approx((1 + 0.5 + 0.5) / 30)
    assert summary["ndcg"] == pytest.approx((1 + 3 / (3 + 3 / LOG3) + 1 / (7 + 1 / LOG3)) / 30)
    differences = {d.metric: d for d in compare.compare(before, after)}
    hits = differences["hit_rate"]
    assert (hits.pairs, hits.better, hits.worse) == (30, 0, 26)
    assert hits.p_value == pytest.approx(2 * 0.5**26)  # McNemar exact: 26 discordant pairs, all one way
    rr = differences["mrr"]
    assert (rr.better, rr.worse) == (1, 26) and rr.p_value == pytest.approx(2 * 28 / 2**27)  # sign test, 27 changed
    shown = subprocess.run([*ragpulse_command(), "probe", "compare", first["run_id"][:8], second["run_id"][:8], "--db", str(db)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "McNemar exact" in shown.stdout and "-0.867" in shown.stdout


def _overall(run: dict[str, object]) -> dict[str, float]:
    """The overall aggregate, recomputed by the CLI's own code from the JSON run."""
    from ragpulse.probes.retrieval import RetrievalScores
    from ragpulse.probes.runner import QuestionResult, aggregate

    results = []
    for q in run["results"]:  # type: ignore[attr-defined]
        q = dict(q)
        q["retrieval"] = RetrievalScores(**q["retrieval"]) if q["retrieval"] else None
        results.append(QuestionResult(**q))
    out = aggregate(results)
    return {**vars(out), "error_rate": out.error_rate}


TRY_IT = "**Try a probe locally.**"  # the docs/probes.md paragraph whose fenced blocks the next test runs


def _try_it() -> tuple[str, list[tuple[str, str]]]:
    """docs/probes.md's "Try a probe locally" paragraph up to its last block, and its first four fenced blocks
    (language, text): the command that starts the toy service, the config, the probe command, its output."""
    page = (REPO / "docs" / "probes.md").read_text(encoding="utf-8")
    assert TRY_IT in page, f"docs/probes.md lost its {TRY_IT} paragraph"
    after = page[page.index(TRY_IT):]
    blocks = list(re.finditer(r"^```(\w*)\n(.*?)^```$", after, re.M | re.S))[:4]
    return after[:blocks[-1].end()], [(b[1], b[2]) for b in blocks]


def _argv(command: str) -> list[str]:
    """A documented command, with the clone's .venv executables replaced by the ones of the Python running the tests."""
    argv = shlex.split(command)
    if argv[0] == ".venv/bin/python":
        return [sys.executable, *argv[1:]]
    assert argv[0] == ".venv/bin/ragpulse", f"a documented command the test does not know how to run: {command}"
    return [*ragpulse_command(), *argv[1:]]


def _normalised(output: str) -> str:
    """What differs between runs, and nothing else: the run id, the duration; trailing blanks (rich pads the title)."""
    output = re.sub(r"^run [0-9a-f]+ ", "run RUN_ID ", output.strip("\n"), flags=re.M)
    output = re.sub(r" questions in \d+(\.\d+)?s ", " questions in DURATION ", output)
    return "\n".join(line.rstrip() for line in output.splitlines())


def _answers(url: str) -> bool:
    try:
        return http("POST", url, b'{"query": "return label"}', {"Content-Type": "application/json"}).status == 200
    except OSError:  # not listening yet
        return False


def test_the_docs_try_a_probe_locally_runs_as_written_and_prints_its_table(tmp_path: Path) -> None:
    paragraph, blocks = _try_it()
    assert [language for language, _ in blocks] == ["sh", "yaml", "sh", ""], blocks
    (_, start_service), (_, config_text), (_, probe_command), (_, quoted) = blocks
    start_argv = _argv(start_service.strip())
    assert "tests/helpers/rag_service.py" in start_argv and "--port" in start_argv
    documented_port = start_argv[start_argv.index("--port") + 1]
    target_url = yaml.safe_load(config_text)["probes"]["targets"][0]["url"]
    assert f"127.0.0.1:{documented_port}/" in target_url, "the config must point at the port the service is started on"
    # the page's port may be taken on this machine: the same commands on a free one
    port = str(free_port())
    start_argv[start_argv.index("--port") + 1] = port
    (tmp_path / "ragpulse.yaml").write_text(config_text.replace(f"127.0.0.1:{documented_port}/", f"127.0.0.1:{port}/"))
    (tmp_path / "tests").symlink_to(REPO / "tests")  # run where a clone's relative paths hold; the store lands here
    check_command = re.search(r"`(\.venv/bin/ragpulse config check [^`]+)`", paragraph)
    assert check_command, "the paragraph says how to validate the config"
    check = subprocess.run(_argv(check_command[1]), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and check.stdout.startswith("ragpulse.yaml: OK"), check.stdout + check.stderr
    log = tmp_path / "rag_service.log"
    with log.open("w") as out:
        service = subprocess.Popen(start_argv, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = target_url.replace(f":{documented_port}/", f":{port}/")
        wait_until(lambda: service.poll() is not None or _answers(url), timeout=30, what="the toy RAG service to answer")
        assert service.poll() is None, log.read_text()
        assert log.read_text() == f"rag_service: listening on http://127.0.0.1:{port} (POST /query; POST /v1/chat/completions); Ctrl-C stops.\n"
        done = subprocess.run(_argv(probe_command.strip()), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    finally:
        service.terminate()
        service.wait(10)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _normalised(done.stdout) == _normalised(quoted)
    assert (tmp_path / "ragpulse-probes.sqlite3").exists()  # where the paragraph says the run is stored


def test_the_openai_chat_preset_reads_the_answer_and_configured_citations(service: RagService, tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(yaml.safe_dump({"probes": {"max_requests_per_second": 200, "targets": [
        {"name": "shop", "preset": "openai_chat", "model": "rag-bot", "url": f"{service.url}/v1/chat/completions",
         "headers": {"Authorization": "env:SHOP_TOKEN"},
         "response": {"answer": "$.choices[0].message.content", "chunks": "$.citations[*]"}}]}}))
    db = tmp_path / "probes.sqlite3"
    missing = probe(config, db)
    assert missing.returncode == 2 and "the environment variable SHOP_TOKEN is not set" in missing.stderr
    import os

    done = subprocess.run([*ragpulse_command(), "probe", "run", "-c", str(config), "--golden", str(GOLDEN), "--target", "shop",
                           "--db", str(db), "--json"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SHOP_TOKEN": "Bearer s3cret"})
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert _overall(run)["hit_rate"] == pytest.approx(29 / 30)
    request = service.requests[-1]
    assert request["headers"]["Authorization"] == "Bearer s3cret" and request["body"]["model"] == "rag-bot"
    assert request["body"]["messages"][0]["role"] == "user"
    assert "s3cret" not in done.stdout


def test_ragpulse_run_probes_on_a_schedule_and_exports_sums_and_counts(
        service: RagService, tmp_path: Path, ragpulse_factory) -> None:  # type: ignore[no-untyped-def]
    from helpers.waiting import wait_until

    config = tmp_path / "ragpulse.yaml"
    db = tmp_path / "probes.sqlite3"
    config.write_text(yaml.safe_dump({"probes": {
        "max_requests_per_second": 200, "db_path": str(db),
        "targets": [{"name": "shop", "url": f"{service.url}/query"}],
        "schedules": [{"golden": str(GOLDEN), "target": "shop", "interval_seconds": 2, "jitter_seconds": 0}],
    }}))
    rp = ragpulse_factory("--config", str(config))
    wait_until(lambda: rp.metrics().total("ragpulse_probe_runs_total", outcome="ok") >= 2, timeout=60, what="two probe runs")
    s = rp.metrics()
    runs = s.total("ragpulse_probe_runs_total", outcome="ok")
    if s.total("ragpulse_probe_hit_count") != 30 * runs:  # a run finished between the two reads: read again
        s = rp.metrics()
        runs = s.total("ragpulse_probe_runs_total", outcome="ok")
    labels = {"golden_set": "golden_shop", "target": "shop"}
    # per run, as by hand above: 29 hits and MRR sum 28.5 over 30 questions with relevant chunks
    assert s.total("ragpulse_probe_hit_count", **labels) == 30 * runs
    assert s.total("ragpulse_probe_hit_sum", **labels) == 29 * runs
    assert s.total("ragpulse_probe_reciprocal_rank_sum", **labels) == pytest.approx(28.5 * runs)
    assert s.total("ragpulse_probe_hit_sum", intent="warranty", release="not_reported") == 6 * runs
    assert s.total("ragpulse_probe_questions_total", outcome="answered") == 32 * runs
    assert s.total("ragpulse_probe_fallbacks_total", expected="true", fell_back="true") == 2 * runs
    assert s.total("ragpulse_probe_fallbacks_total", expected="false", fell_back="true") == 1 * runs
    assert s.total("ragpulse_probe_correctness_count", judge="local") == 29 * runs
    assert s.total("ragpulse_probe_correctness_count", judge="rule") == 1 * runs  # g22 fell back
    assert s.total("ragpulse_probe_hallucination_count", judge="local") == 29 * runs
    assert s.total("ragpulse_probe_hallucination_sum") == 0
    assert s.get_value("ragpulse_probe_k") == 5
    assert s.get_value("ragpulse_probe_last_run_timestamp_seconds", **labels) > 1.7e9
    # probe traffic is not production traffic: none of it is counted as a trace of the sidecar
    assert s.total("ragpulse_traces_total") == 0
    from contextlib import closing

    from ragpulse.probes import store

    with closing(store.connect(db)) as connection:
        assert len(store.runs(connection)) >= 2


@pytest.mark.unit
def test_probe_config_problems_name_what_to_fix(tmp_path: Path) -> None:
    from ragpulse.config import parse_config
    from ragpulse.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        parse_config({"probes": {
            "targets": [{"name": "shop", "url": "rag.internal/query", "response": {"answer": "$.[["}},
                        {"name": "shop", "url": "http://x", "preset": "openai_chat"}],
            "schedules": [{"golden": str(tmp_path / "none.jsonl"), "target": "nope"}],
        }})
    assert [(p.path, p.message) for p in caught.value.problems] == [
        ("probes.targets[0].url", "expected an http:// or https:// URL, got 'rag.internal/query'"),
        ("probes.targets[0].response.answer", caught.value.problems[1].message),
        ("probes.targets[1].name", "duplicate target name 'shop'"),
        ("probes.targets[1].model", "the openai_chat preset needs the model to ask (or a body)"),
        ("probes.schedules[0].target", "no probes.targets entry named 'nope'"),
        ("probes.schedules[0].golden", f"no such file: {tmp_path / 'none.jsonl'}"),
    ]
    assert caught.value.problems[1].message.startswith("not a JSONPath expression")


def test_perturbation_sensitivity(service: RagService, tmp_path: Path) -> None:
    from ragpulse.probes.perturb import variant

    config = tmp_path / "ragpulse.yaml"
    config.write_text(yaml.safe_dump({"probes": {"max_requests_per_second": 500, "targets": [
        {"name": "shop", "url": f"{service.url}/query"}]}}))
    done = probe(config, tmp_path / "probes.sqlite3", "--perturb", "--json")
    assert done.returncode == 0, done.stderr
    sensitivity = json.loads(done.stdout)["sensitivity"]
    # The service's retriever lower-cases, drops punctuation and ignores word order: those variants change nothing.
    for kind in ("case", "punctuation", "word_order"):
        assert sensitivity[kind]["retrieval_changed"] == 0, kind
    # A typo loses a word: the service's own retriever says which hits it costs (none here: every question shares
    # two or more words with its chunk, so one misspelt word does not lose it).
    cases = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    lost = sum(1 for case in cases if case.get("relevant_chunk_ids") and (typo := variant(case["query"], "typo"))
               and any(c in case["relevant_chunk_ids"] for c, _ in service.retrieve(case["query"])[:5])
               != any(c in case["relevant_chunk_ids"] for c, _ in service.retrieve(typo)[:5]))
    assert sensitivity["typo"]["retrieval_changed"] == lost == 0
    assert sensitivity["typo"]["retrieval_measured"] == 30
    assert sensitivity["typo"]["variants"] == 32  # every question has a Latin word of four letters or more
    assert sensitivity["all"]["variants"] == sum(s["variants"] for k, s in sensitivity.items() if k != "all")


def test_correctness_by_the_llm_judge_with_the_local_judge_when_it_fails(service: RagService, fake: FakeOpenAI,
                                                                        tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(yaml.safe_dump({
        "judge": {"base_url": fake.base_url, "api_key": "k", "model": "judge-m", "max_retries": 0},
        "probes": {"max_requests_per_second": 200, "concurrency": 1,
                   "targets": [{"name": "shop", "url": f"{service.url}/query"}]},
    }))
    fake.script = ["grade"] * 5 + ["500"]  # the sixth judge call fails: that question is graded locally
    done = probe(config, tmp_path / "probes.sqlite3", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["correctness_judge"] == "llm"
    judges = [q["correctness_judge"] for q in run["results"]]
    # 29 answered with an expected answer (g22 fell back: rule; g31, g32 have none); the failed call: local
    assert (judges.count("llm"), judges.count("local"), judges.count("rule"), judges.count(None)) == (28, 1, 1, 2)
    local = next(q for q in run["results"] if q["correctness_judge"] == "local")
    assert local["correctness_reason"].startswith("the LLM judge failed: InternalServerError; the expected answer in")
    by_id = {q["key"]: q for q in run["results"]}
    assert (by_id["g08"]["correctness"], by_id["g08"]["correctness_reason"]) == (5, "graded by rule")
    assert {q["judge"] for q in run["results"] if q["groundedness"] is not None} == {"llm"}
    assert local["key"] == "g03"  # the sixth judge call: g01 and g02 each made two (the judgment, the correctness)
    prompts = [p for p in fake.prompts() if "<reference_answer>" in p]
    assert len(prompts) == 29
    first = prompts[0]
    assert "<question>\nHow many days do I have to return unused items?\n</question>" in first
    assert "<reference_answer>\nUnused items can be returned within 30 days of delivery.\n</reference_answer>" in first


def test_golden_candidates_from_production_signals_and_bad_cases(ragpulse_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from helpers.events import ndjson, trace
    from helpers.waiting import wait_until

    rp = ragpulse_factory("--set", "judge.sample_rate=1.0")  # the local judge, the store in the working directory
    chunks = [{"id": "kb-returns", "text": "Unused items can be returned within 30 days of delivery."}]
    rp.post("/v1/events", ndjson([
        trace("liked", chunks=chunks, query="How long do I have to return unused items?",
              answer="Unused items can be returned within 30 days of delivery.", route="returns"),
        trace("disliked", chunks=chunks, query="Can I return used items?", answer="Unused items can be returned within 30 days.",
              route="returns"),
        trace("invented", chunks=chunks, query="How long do returns take?", answer="Returns take 90 days.", route="returns"),
        trace("no-chunks", query="Hi there", answer="Hello! How can I help?"),
    ]))
    wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 3, what="three judgments")
    rp.post("/v1/feedback", ndjson([
        {"type": "feedback", "kind": "thumbs", "trace_id": "liked", "value": "up"},
        {"type": "feedback", "kind": "thumbs", "trace_id": "disliked", "value": "down"},
        {"type": "feedback", "kind": "thumbs", "trace_id": "no-chunks", "value": "up"},  # nothing to make a case of
    ]))
    db = tmp_path / "ragpulse-badcases.sqlite3"

    def exported(*extra: str) -> list[dict[str, object]]:
        done = subprocess.run([*ragpulse_command(), "golden", "candidates", "--db", str(db), *extra],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]

    wait_until(lambda: len(exported()) == 3, what="three candidates")
    lines = sorted(exported(), key=lambda line: str(line["id"]))
    assert lines == [
        {"id": "cand-positive-liked", "query": "How long do I have to return unused items?",
         "expected_answer": "Unused items can be returned within 30 days of delivery.", "relevant_chunk_ids": ["kb-returns"],
         "intent": "returns", "tags": ["candidate", "positive", "thumbs_up"]},
        {"id": "cand-to_label-disliked", "query": "Can I return used items?", "intent": "returns",
         "tags": ["candidate", "to_label", "thumbs_down"]},
        {"id": "cand-to_label-invented", "query": "How long do returns take?", "intent": "returns",
         "tags": ["candidate", "to_label", "bad_case:generation"]},
    ]
    as_file = tmp_path / "candidates.jsonl"
    as_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert len(golden.load(as_file).cases) == 3  # valid golden-set lines, ready for a person to edit
    assert [line["id"] for line in exported("--kind", "positive")] == ["cand-positive-liked"]
    review = exported("--format", "review", "--kind", "positive")
    assert review[0]["answer"] == "Unused items can be returned within 30 days of delivery." and review[0]["signal"] == "thumbs_up"


def test_probe_traffic_reported_back_as_traces_stays_out_of_production_metrics(ragpulse_factory) -> None:  # type: ignore[no-untyped-def]
    """A service asked by a probe reports the request's trace like any other: marked (the app copies the probe's
    baggage to its spans, as OpenTelemetry's BaggageSpanProcessor does, or sets the attribute on the events it posts),
    it is counted apart and nowhere else."""
    from helpers.events import ndjson, trace
    from helpers.otlp_shapes import openinference_trace, provider
    from helpers.waiting import wait_until
    from opentelemetry import baggage
    from opentelemetry.baggage.propagation import W3CBaggagePropagator
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    rp = ragpulse_factory()
    rp.post("/v1/events", ndjson([trace("user-1"), trace("probe-1", attributes={"ragpulse.probe": "run-1"})]))

    class BaggageToAttributes(SpanProcessor):
        def on_start(self, span, parent_context=None) -> None:  # type: ignore[no-untyped-def]
            value = baggage.get_baggage("ragpulse.probe", parent_context)
            if value is not None:
                span.set_attribute("ragpulse.probe", str(value))

    exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{rp.otlp_port}/v1/traces")
    tracer_provider = provider(BaggageToAttributes())
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    # the request's headers, as the prober sends them, extracted by the app's propagator
    from opentelemetry import context

    token = context.attach(W3CBaggagePropagator().extract({"baggage": "ragpulse.probe=run-2"}))
    try:
        openinference_trace(tracer_provider)
    finally:
        context.detach(token)
    openinference_trace(tracer_provider)  # a user's request: no baggage
    tracer_provider.shutdown()
    wait_until(lambda: rp.metrics().total("ragpulse_probe_events_ingested_total") == 2
               and rp.metrics().total("ragpulse_traces_total") == 2, what="two probe events and two user traces")
    s = rp.metrics()
    assert (s.get_value("ragpulse_probe_events_ingested_total", source="http"),
            s.get_value("ragpulse_probe_events_ingested_total", source="otlp")) == (1.0, 1.0)
    assert s.total("ragpulse_events_processed_total", type="trace") == 2
