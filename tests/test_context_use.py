"""What answers do with their context, judged: the chunks they use (context utilisation, by rank), whether
their citations hold (supported by the chunk cited, not by any chunk), and an agent's searches as a reading of
the question; by the local judge, and by the LLM judge through a running sidecar and the real openai client."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.events import ndjson
from helpers.fake_openai import FakeOpenAI
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.attribution import attribute
from ragpulse.judging.local_judge import LocalJudge

Factory = Callable[..., RagpulseProcess]
SHOP = [
    "Returns: unused items can be returned within 30 days of delivery.",
    "Warranty: electronics carry a 2-year manufacturer warranty against defects.",
    "Shipping: standard delivery takes 3 to 5 business days.",
    "Gift cards never expire and can be used on any order.",
    "Our stores are open Monday to Saturday from 9 am to 8 pm.",
]


def local(question: str, answer: str, chunks: list[str] = SHOP, searches: list[str] | None = None):  # type: ignore[no-untyped-def]
    judge = LocalJudge(CollectorRegistry(), cache_entries=100, cache_max_bytes=10_000_000)
    return judge.judge(TraceEvent(trace_id="t", query=question, answer=answer, retrieval_queries=searches,
                                  chunks=[Chunk(id=f"kb-{i}", text=text) for i, text in enumerate(chunks)]))


@pytest.mark.unit
def test_utilisation_is_the_chunks_the_claims_come_from() -> None:
    one = local("How long is the warranty?", "Electronics carry a 2-year manufacturer warranty against defects.")
    assert one.used_chunks == [1]
    every = local("Tell me everything.", "Unused items can be returned within 30 days of delivery. Electronics carry a "
                  "2-year warranty against defects. Standard delivery takes 3 to 5 business days. Gift cards never "
                  "expire. Our stores are open Monday to Saturday from 9 am to 8 pm.")
    assert every.used_chunks == [0, 1, 2, 3, 4]
    invented = local("How long is the warranty?", "Electronics carry a 5-year manufacturer warranty against defects.")
    assert invented.used_chunks == [] and invented.hallucination


@pytest.mark.unit
def test_a_faithful_citation_a_wrong_one_and_a_dangling_one() -> None:
    answer = ("Unused items can be returned within 30 days of delivery [1]. Electronics carry a 2-year warranty "
              "against defects [3]. Standard delivery takes 3 to 5 business days [9].")
    judgment = local("What are your returns, warranty and delivery policies?", answer)
    assert [(c.sentence, c.chunks, c.dangling, c.verdict) for c in judgment.citations] == [
        ("Unused items can be returned within 30 days of delivery.", [0], [], "supported"),
        ("Electronics carry a 2-year warranty against defects.", [2], [], "unsupported"),  # chunk 1 says it, not 3
        ("Standard delivery takes 3 to 5 business days.", [], ["9"], "dangling"),
    ]
    assert judgment.citations[1].reason.startswith("against the cited chunks: ")
    # The markers are no claims ("[9]" is no number), and every sentence is true of the context as a whole.
    assert (judgment.groundedness, judgment.hallucination, len(judgment.claims)) == (5, False, 3)
    assert judgment.used_chunks == [0, 1, 2]
    assert attribute(judgment, fallback=False) == "generation"  # a wrong citation is a bad case of generation
    faithful = local("What are your returns policies?", "Unused items can be returned within 30 days of delivery [1].")
    assert [c.verdict for c in faithful.citations] == ["supported"] and attribute(faithful, fallback=False) is None


@pytest.mark.unit
def test_chinese_citations_and_ids() -> None:
    chunks = ["退货政策：未使用的商品可在签收后30天内退货。", "保修：电子产品享有两年保修。"]
    judgment = local("保修多久？", "电子产品享有两年保修【2】。", chunks)
    assert [(c.chunks, c.verdict) for c in judgment.citations] == [([1], "supported")]
    by_id = local("How long is the warranty?", "Electronics carry a 2-year warranty against defects (source: kb-0).")
    assert [(c.chunks, c.verdict) for c in by_id.citations] == [([0], "unsupported")]


@pytest.mark.unit
def test_an_agents_searches_are_scored_against_the_question() -> None:
    question = "How long is the warranty on electronics?"
    good = local(question, "Electronics carry a 2-year warranty.", searches=["electronics warranty length"])
    assert (good.search_relevance, good.search_relevance_reason) == (
        5, "the best search ('electronics warranty length') has 67% of the question's terms")
    bad = local(question, "Electronics carry a 2-year warranty.", searches=["store opening hours"])
    assert bad.search_relevance == 1
    assert local(question, "Electronics carry a 2-year warranty.").search_relevance is None  # no searches: not scored
    # A plain retriever searches with the question itself (case, spaces and punctuation aside): nothing to judge.
    plain = local(question, "Electronics carry a 2-year warranty.", searches=["how long is the  warranty on electronics"])
    assert (plain.search_relevance, plain.search_relevance_reason) == (None, "")
    both = local(question, "Electronics carry a 2-year warranty.", searches=[question, "store opening hours"])
    assert both.search_relevance == 5  # an agent's own search among them: its searches are judged, the best counts


def test_the_llm_judge_checks_citations_and_names_the_chunks_through_a_sidecar(
        ragpulse_factory: Factory, fake: FakeOpenAI, tmp_path: Path) -> None:
    """The judgment.v3 prompt through the real openai client: the cited sentences and an agent's searches are
    shown to the judge, its verdicts counted by rank and verdict, and kept in the record; a plain retriever's
    search, the question itself, is neither shown nor judged."""
    results = tmp_path / "judged.jsonl"
    rp = ragpulse_factory("--set", f"judge.base_url={fake.base_url}", "--set", "judge.api_key=k",
                          "--set", "judge.sample_rate=1.0", "--set", f"results.jsonl_path={results}")
    chunks = [{"id": f"kb-{i}", "text": text} for i, text in enumerate(SHOP)]
    events = [
        {"type": "trace", "trace_id": "cite-ok", "app": "shop", "query": "Can I return shoes?", "chunks": chunks,
         "answer": "Unused items can be returned within 30 days of delivery [1].", "retrieval_queries": ["can I return shoes"]},
        {"type": "trace", "trace_id": "cite-wrong", "app": "shop", "query": "How long is the warranty?", "chunks": chunks,
         "answer": "Electronics carry a manufacturer warranty against defects [4]."},
        {"type": "trace", "trace_id": "cite-none", "app": "shop", "query": "How long does shipping take?",
         "chunks": chunks, "answer": "Standard delivery takes 3 to 5 business days.",
         "retrieval_queries": ["shipping delivery time"]},
    ]
    assert rp.post("/v1/events", ndjson(events)).status == 200
    wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 3, what="three judgments")
    s = rp.metrics()
    verdicts = {v: s.total("ragpulse_citation_verdicts_total", app="shop", verdict=v)
                for v in ("supported", "unsupported", "uncertain", "dangling", "error")}
    assert verdicts == {"supported": 1, "unsupported": 1, "uncertain": 0, "dangling": 0, "error": 0}
    used = {rank: s.total("ragpulse_context_chunks_used_total", app="shop", rank=rank) for rank in ("1", "2", "3", "4", "5")}
    assert used == {"1": 1, "2": 1, "3": 1, "4": 0, "5": 0}  # each answer drew on its own chunk
    assert s.total("ragpulse_context_chunks_retrieved_total", app="shop") == 15
    assert s.total("ragpulse_citations_total", app="shop", outcome="resolved") == 2
    assert s.total("ragpulse_badcases_total", app="shop", stage="generation") == 1  # the wrong citation
    assert s.total("ragpulse_judgments_total", app="shop", metric="search_relevance", verdict="irrelevant") == 1
    assert s.total("ragpulse_judgments_total", app="shop", metric="search_relevance", verdict="relevant") == 0
    prompts = [p for p in fake.prompts() if "cite-" in p or "<cited" in p or "<search>" in p]
    assert any('<cited index="1" chunks="4">Electronics carry a manufacturer warranty against defects.</cited>' in p
               for p in prompts)
    assert any("<search>shipping delivery time</search>" in p for p in prompts)
    assert sum("<search>" in p for p in prompts) == 1
