"""The local lexical scorers: a table of English and Chinese cases with the expected outcome."""

from __future__ import annotations

import pytest
from helpers.lexical_chunks import EN, ZH
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, LexicalScores, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.scorers.citations import CitationScorer
from ragpulse.scorers.lexical import LexicalScorer, units

def scorer() -> LexicalScorer:
    registry = CollectorRegistry()
    return LexicalScorer(registry, LabelGuard(["app"], 50, 100, registry))


def score(question: str, answer: str, chunks: list[str]):  # type: ignore[no-untyped-def]
    result = scorer().score(TraceEvent(trace_id="t", query=question, answer=answer, chunks=[Chunk(text=c) for c in chunks]))
    assert result is not None
    return result


@pytest.mark.unit
@pytest.mark.parametrize(
    ("question", "answer", "chunks", "mismatch", "grounded_at_least", "grounded_below"),
    [
        ("How long is the warranty?", "The warranty covers manufacturing defects for 1 year.", EN, False, 0.99, None),
        ("How long is the warranty?", "The warranty covers manufacturing defects for 2 years.", EN, True, None, None),
        ("How long do I have for returns?", "You have thirty days from delivery to return unused items.", EN, False, 0.6, None),
        ("How much is express shipping?", "Express shipping costs $12.99.", EN, False, 0.99, None),
        # Hyphenated (issue: local judge): "1-month" is 1 month, not a bare 1 that the chunks' "1 year" has.
        ("How long is the warranty?", "It has a 1-month warranty on manufacturing defects.", EN, True, None, None),
        ("How long is the warranty?", "It has a 1-year warranty on manufacturing defects.", EN, False, None, None),
        ("How much is express shipping?", "Express shipping costs $4.99.", EN, True, None, None),
        ("Can I pay with crypto?", "Yes, we accept Bitcoin and Ethereum at checkout.", EN, False, None, 0.2),
        ("退货期限是多久？", "退货需要在三十天内完成。", ZH, False, 0.99, None),
        ("退货期限是多久？", "您可以在30天内退货。", ZH, False, None, None),  # "三十天" and "30天" are one number
        ("保修多久？", "保修期为两年。", ZH, True, None, None),
        ("保修多久？", "保修期为一年。", ZH, False, 0.99, None),
        ("可以用比特币付款吗？", "可以，我们支持比特币和以太坊付款。", ZH, False, None, 0.2),
    ],
)
def test_lexical_support_and_number_checks(question: str, answer: str, chunks: list[str], mismatch: bool,
                                           grounded_at_least: float | None, grounded_below: float | None) -> None:
    result = score(question, answer, chunks)
    assert result.number_mismatch is mismatch
    assert result.groundedness is not None
    if grounded_at_least is not None:
        assert result.groundedness >= grounded_at_least
    if grounded_below is not None:
        assert result.groundedness < grounded_below


@pytest.mark.unit
def test_relevancy_proxies() -> None:
    on_topic = score("How long is the warranty for defects?", "The warranty covers defects for 1 year.", EN)
    off_topic = score("How long is the warranty for defects?", "Express shipping costs $12.99.", EN)
    assert on_topic.answer_relevancy is not None and off_topic.answer_relevancy is not None
    assert on_topic.answer_relevancy > 0.5 > off_topic.answer_relevancy
    assert on_topic.context_relevance == pytest.approx(2 / 3)  # warranty, defect(s) in the chunks; "long" not
    unknown = score("Do you sell refurbished drones?", "No.", EN)
    assert unknown.context_relevance == 0.0


@pytest.mark.unit
def test_no_chunks_no_scores() -> None:
    assert scorer().score(TraceEvent(trace_id="t", query="q", answer="a")) is None


def test_local_scores_reach_metrics_when_enabled(ragpulse_factory) -> None:  # type: ignore[no-untyped-def]
    from helpers.events import ndjson, trace
    from helpers.waiting import wait_until

    rp = ragpulse_factory("--set", "local_scorers.enabled=true")
    chunks = [{"text": t} for t in EN]
    rp.post("/v1/events", ndjson([
        trace("a", chunks=chunks, query="How long is the warranty?", answer="The warranty covers manufacturing defects for 1 year."),
        trace("b", chunks=chunks, query="How long is the warranty?", answer="The warranty covers manufacturing defects for 2 years."),
    ]))
    labels = {"app": "shop", "route": "returns", "model": "m1", "release": "r1"}
    wait_until(lambda: rp.metrics().get_value("ragpulse_local_groundedness_count", **labels) == 2, what="2 local scores")
    s = rp.metrics()
    assert s.get_value("ragpulse_local_number_mismatch_total", **labels) == 1
    assert s.get_value("ragpulse_local_groundedness_bucket", le="1.0", **labels) == 2


@pytest.mark.unit
def test_each_text_is_scored_on_its_first_max_chars_characters() -> None:
    from ragpulse.scorers.lexical import MAX_CHARS

    filler = "The warranty covers manufacturing defects. " * 150  # 6,450 characters
    assert len(filler) > MAX_CHARS
    assert score("How long is the warranty?", filler + "It lasts 5 years.", EN).number_mismatch is False  # past the cap
    assert score("How long is the warranty?", "It lasts 5 years. " + filler, EN).number_mismatch is True


@pytest.mark.unit
def test_citation_markers_are_no_numbers() -> None:
    """"[1]" cites the first chunk; read as the number 1, no chunk would have it: a false number mismatch. The
    citations stage, first in the pipeline, leaves the answer without its markers for the lexical scorer."""
    registry = CollectorRegistry()
    guard = LabelGuard(["app"], 50, 2000, registry)
    citations = CitationScorer(registry, guard)
    scorer = LexicalScorer(registry, guard)
    chunks = [Chunk(id="kb-1", text="Returns are accepted within 30 days of delivery.")]

    def scored(answer: str) -> LexicalScores | None:
        envelope = citations(Envelope(TraceEvent(trace_id="t", query="Return window?", chunks=chunks, answer=answer),
                                      "http", 0.0, 0))
        return scorer(envelope).local_scores

    cited = scored("Returns are accepted within 30 days of delivery [1]. (source: kb-1)")
    assert cited is not None and (cited.number_mismatch, cited.groundedness) == (False, 1.0)
    wrong = scored("Returns are accepted within 60 days of delivery [1].")
    assert wrong is not None and wrong.number_mismatch  # the real number still counts


def defined_scores(question: str, answer: str, chunks: list[str]) -> LexicalScores:
    """The scores' definition on the units as sets: what the crate's scoring is held to."""
    asked, said, known = units(question), units(answer), [units(chunk) for chunk in chunks]
    words = frozenset().union(*(chunk.words for chunk in known))
    numbers = frozenset().union(*(chunk.numbers for chunk in known))
    values = frozenset().union(*(chunk.values for chunk in known))
    unfound_numbers = said.numbers - numbers

    def share_found(found: int, total: int) -> float | None:
        return 1 - (total - found) / total if total else None

    return LexicalScores(
        groundedness=share_found(len(said.words & words) + len(said.numbers & numbers), len(said.words) + len(said.numbers)),
        answer_relevancy=len(asked.words & said.words) / len(asked.words) if asked.words else None,
        context_relevance=share_found(len(asked.words & words) + len(asked.numbers & numbers),
                                      len(asked.words) + len(asked.numbers)),
        number_mismatch=any(unit != "" or value not in values for value, unit in unfound_numbers))


_PIECES = ["return", "returns", "warranty", "days", "7", "seven", "30", "1.5", "1,5", "kg", "year", "years", "%",
           "usd", "the", "within", "退货", "三十天", "30天", "保修", "一年", "两年", "元", " ", ", ", "-", "."]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=14).map(" ".join)


@pytest.mark.unit
@settings(max_examples=600, deadline=None)
@given(_TEXTS, _TEXTS, st.lists(_TEXTS, min_size=1, max_size=4))
def test_the_crate_scores_as_defined_on_the_units(question: str, answer: str, chunks: list[str]) -> None:
    assert score(question, answer, chunks) == defined_scores(question, answer, chunks)


@pytest.mark.unit
def test_chunks_without_text_are_not_scored_against() -> None:
    event = TraceEvent(trace_id="t", query="How long is the warranty?", answer="It lasts 2 years.",
                       chunks=[Chunk(id="kb-9"), Chunk(text=EN[1])])
    assert scorer().score(event) == score("How long is the warranty?", "It lasts 2 years.", [EN[1]])
    assert scorer().score(TraceEvent(trace_id="t", query="q", answer="a", chunks=[Chunk(id="kb-9")])) is None
