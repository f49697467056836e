"""Citations in answers: the inline forms, sentences, dangling markers, structured citations and the counters."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, EventCitation, FeedbackEvent, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.judging.exit import JudgedTrace, build_record
from ragpulse.judging.llm_judge import builtin_template, render_prompt
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.judging.sampler import JudgeItem
from ragpulse.judging.utilisation import CITATION_VERDICTS, ContextRecorder
from ragpulse.judging.verdicts import MAX_JUDGED_CITATIONS, Judgment
from ragpulse.scorers.citations import (
    MAX_MARKERS,
    CitationScorer,
    Citations,
    CitedSentence,
    _read,
    count_inline,
    event_citations,
    parse_citations,
    strip_markers,
)

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

IDS = ["kb-1", "kb-2", "kb-12"]  # chunks 0, 1, 2


def parsed(answer: str, ids: list[str | None] = IDS) -> Citations:  # type: ignore[assignment]
    result = parse_citations(answer, ids)
    assert result is not None
    return result


def one(sentence: str, chunks: tuple[int, ...], dangling: tuple[str, ...] = ()) -> CitedSentence:
    return CitedSentence(sentence, chunks, dangling)


@pytest.mark.parametrize(
    ("answer", "sentence", "chunks", "resolved"),
    [
        ("Paris is the capital [1].", "Paris is the capital.", (0,), 1),
        ("Paris is the capital [1][2].", "Paris is the capital.", (0, 1), 2),
        ("Paris is the capital [1, 3].", "Paris is the capital.", (0, 2), 2),
        ("Paris is the capital [1-2].", "Paris is the capital.", (0, 1), 2),
        ("Paris is the capital [3][1][3].", "Paris is the capital.", (2, 0), 3),  # deduplicated, first mention first
        ("Paris is the capital【1】.", "Paris is the capital.", (0,), 1),
        ("Paris is the capital［2］.", "Paris is the capital.", (1,), 1),
        ("Paris is the capital [^1].", "Paris is the capital.", (0,), 1),
        ("Paris is the capital (source: kb-12).", "Paris is the capital.", (2,), 1),
        ("Paris is the capital (Sources: kb-1, kb-2).", "Paris is the capital.", (0, 1), 2),
        ("Paris is the capital [kb-12].", "Paris is the capital.", (2,), 1),
        ("Paris is the capital [KB-12].", "Paris is the capital.", (2,), 1),  # case-insensitive after exact
        ("Paris is the capital [doc2].", "Paris is the capital.", (1,), 1),
        ("Paris is the capital [source: 3].", "Paris is the capital.", (2,), 1),
        ("Paris is the capital. [1]", "Paris is the capital.", (0,), 1),  # after the period: the sentence before
        ("Paris is the capital.[1]", "Paris is the capital.", (0,), 1),
        ("[1] Paris is the capital.", "Paris is the capital.", (0,), 1),  # opening the answer: its first sentence
    ],
)
def test_each_inline_form_cites_its_chunks(answer: str, sentence: str, chunks: tuple[int, ...], resolved: int) -> None:
    assert parsed(answer) == Citations((one(sentence, chunks),), uncited=0, resolved=resolved, dangling=0)


def test_an_exact_id_wins_over_one_that_differs_in_case() -> None:
    assert parsed("Both [Kb-1].", ["kb-1", "Kb-1"]).sentences == (one("Both.", (1,)),)


def test_markers_before_and_after_the_period_belong_to_the_sentence_they_follow() -> None:
    answer = "Paris is the capital [1]. Lyon is larger than Nice. [2][3] Nice is warm.\nMarseille has a port [1]"
    assert parsed(answer) == Citations(
        (one("Paris is the capital.", (0,)), one("Lyon is larger than Nice.", (1, 2)), one("Marseille has a port", (0,))),
        uncited=1, resolved=4, dangling=0)
    assert strip_markers(answer) == "Paris is the capital. Lyon is larger than Nice. Nice is warm.\nMarseille has a port"


def test_a_marker_glued_between_two_sentences_still_ends_the_first() -> None:
    assert parsed("Paris is the capital.[1]Lyon is larger.") == Citations(
        (one("Paris is the capital.", (0,)),), uncited=1, resolved=1, dangling=0)


def test_chinese_sentences() -> None:
    answer = "退货需要在三十天内完成【1】。保修期为一年。【2】运费由我们承担！请保留收据。"
    assert parsed(answer) == Citations(
        (one("退货需要在三十天内完成。", (0,)), one("保修期为一年。", (1,))), uncited=2, resolved=2, dangling=0)


def test_out_of_range_zero_and_unknown_ids_dangle() -> None:
    answer = "Returns take 30 days [4]. Shipping is free [0][2]. Warranty is a year (source: kb-99). See [doc kb-7]."
    assert parsed(answer) == Citations(
        (one("Returns take 30 days.", (), ("4",)), one("Shipping is free.", (1,), ("0",)),
         one("Warranty is a year.", (), ("kb-99",)), one("See.", (), ("kb-7",))),
        uncited=0, resolved=1, dangling=4)
    # a list and a range: each rank is a marker
    assert parsed("Both [2, 5-6].") == Citations((one("Both.", (1,), ("5", "6")),), uncited=0, resolved=1, dangling=2)


@pytest.mark.parametrize("answer", [
    "Returns are free [see below].", "The policy changed (in 2019).", "Their wording [sic] is odd.",
    "Use `items[1]` or `x = [1, 2]` in code.", "```python\nx = [1, 2, 3]\n```", "Years [2019-2020] and [1-500].",
    "A checkbox [x] and a link [the docs](https://example.com).", "An unknown id [kb-99] alone is text.",
    "A resource, a source, but no citation.", "Reversed ranges [3-1] are no citation.", "[^note] is no chunk's id.",
])
def test_ordinary_brackets_are_no_citations(answer: str) -> None:
    assert parse_citations(answer, IDS) is None


def test_no_citation_marks_at_all_is_none() -> None:
    assert parse_citations("You can return unused items within 30 days of delivery.", IDS) is None
    assert parse_citations("", []) is None


def test_citations_among_ordinary_brackets_and_code() -> None:
    answer = "Returns are free [see below] within 30 days [1]. Call `f([2])` to check (in 2019) [sic] [2]."
    assert parsed(answer) == Citations(
        (one("Returns are free [see below] within 30 days.", (0,)),
         one("Call `f([2])` to check (in 2019) [sic].", (1,))), uncited=0, resolved=2, dangling=0)


def test_definition_lines_are_no_sentences() -> None:
    answer = "Returns take 30 days [^1].\n\n[^1]: Returns policy, section 2\n[2]: https://example.com/kb-2"
    assert parsed(answer) == Citations((one("Returns take 30 days.", (0,)),), uncited=0, resolved=1, dangling=0)


def test_an_answer_is_read_up_to_the_marker_cap_and_what_is_past_it_is_no_dangling() -> None:
    answer = "Cited everywhere " + "[1]" * (MAX_MARKERS + 10) + ". Then [2]."
    # The 10 past the cap and [2] are not read: neither dangling nor resolved, and "Then." is no sentence counted
    # (the text is read up to the last marker read).
    assert parsed(answer) == Citations((one("Cited everywhere", (0,)),), 0, MAX_MARKERS, 0, over_cap=True)
    assert strip_markers(answer).endswith("[1][1]. Then [2].")  # the part not read stays as written
    assert parsed("Cited " + "[1]" * MAX_MARKERS + ".").over_cap is False  # exactly the cap: all read
    structured = TraceEvent(trace_id="t", query="q", answer="a", chunks=[Chunk(id="kb-1")],
                            citations=[EventCitation(text="a", chunk_ids=["kb-1"] * 200), EventCitation(ranks=[1, 2] * 100),
                                       EventCitation(text="past the cap", ranks=[1])])
    assert event_citations(structured) == Citations((one("a", (0,)), one("", (0,), ("2",))), uncited=0,
                                                    resolved=200 + 28, dangling=28, over_cap=True)


HOSTILE = "Paris [1-50]. " * 2_000  # 28,000 characters, under limits.max_answer_chars: 100,000 markers


@pytest.mark.parametrize(("chunks", "resolved"), [(50, 256), (2, 5 * 2 + 2)])
def test_one_answer_of_ranges_counts_at_most_the_cap(chunks: int, resolved: int) -> None:
    ids: list[str | None] = [f"kb-{i}" for i in range(chunks)]
    # Five ranges and 6 of the sixth are read (256 markers); the 44 + 1,994 x 50 past them are not.
    assert count_inline(HOSTILE, ids)[1:] == (6, 0, resolved, MAX_MARKERS - resolved, True)
    result = parsed(HOSTILE, ids)
    assert (len(result.sentences), result.uncited, result.resolved, result.dangling, result.over_cap) == (
        6, 0, resolved, MAX_MARKERS - resolved, True)
    scan = _read(HOSTILE, ids)  # a range expands no further than the cap, and the scan stops there
    assert [len(markers) for _, markers in scan.placed] == [50] * 5 + [6]


def test_256_structured_citations_with_valid_ranks_are_never_dangling() -> None:
    event = TraceEvent(trace_id="t", query="q", answer="Paris.", chunks=[Chunk(id="kb-1"), Chunk(id="kb-2")],
                       citations=[EventCitation(text="Paris.", ranks=[1, 2])] * MAX_MARKERS)
    # The first 128 citations hold the cap's 256 markers; the other 128 are not read.
    assert event_citations(event) == Citations((one("Paris.", (0, 1)),) * 128, 0, MAX_MARKERS, 0, over_cap=True)


def test_structured_citations_from_the_event() -> None:
    chunks = [Chunk(id="kb-1", text="a"), Chunk(id="kb-2", text="b"), Chunk(text="c")]
    event = TraceEvent(trace_id="t", query="q", answer="Paris [9] is the capital.", chunks=chunks, citations=[
        EventCitation(text=" Paris is the capital. ", chunk_ids=["kb-1", "KB-2", "kb-9"], ranks=[1, 4]),
        EventCitation(ranks=[3]),
        EventCitation(text="names nothing"),
    ])
    assert event_citations(event) == Citations(
        (one("Paris is the capital.", (0, 1), ("kb-9", "4")), one("", (2,))), uncited=0, resolved=4, dangling=2)
    event.citations = []  # the app says: no citation (the answer's "[9]" is not read)
    assert event_citations(event) is None
    event.citations = None
    assert event_citations(event) == Citations((one("Paris is the capital.", (), ("9",)),), 0, 0, 1)


def test_structured_citations_decode_and_are_bounded() -> None:
    import msgspec

    body = b'{"trace_id":"t","query":"q","answer":"a","citations":[{"text":"a","chunk_ids":["kb-1"],"ranks":[2]}]}'
    event = msgspec.json.decode(body, type=TraceEvent)
    assert event.citations == [EventCitation(text="a", chunk_ids=["kb-1"], ranks=[2])]
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"trace_id":"t","query":"q","answer":"a","citations":[{"ranks":[0]}]}', type=TraceEvent)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"trace_id": "t", "query": "q", "answer": "a", "citations": [{"ranks": [1]}] * (MAX_MARKERS + 1)},
                        TraceEvent)


# -- the stage ---------------------------------------------------------------------------------

def stage() -> tuple[CitationScorer, CollectorRegistry]:
    registry = CollectorRegistry()
    return CitationScorer(registry, LabelGuard(["app"], 50, 100, registry)), registry


def envelope(answer: str, *, app: str = "shop", chunks: int | None = 3, fallback: str | None = None,
             citations: list[EventCitation] | None = None) -> Envelope:
    event = TraceEvent(trace_id="t", query="q", answer=answer, app=app, citations=citations,
                       chunks=None if chunks is None else [Chunk(id=f"kb-{i + 1}", text="x") for i in range(chunks)])
    return Envelope(event, "test", 0.0, 0, fallback_rule=fallback)


def values(registry: CollectorRegistry, app: str = "shop") -> dict[str, float | None]:
    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"app": app, **labels})

    return {
        "cited": value("ragpulse_citation_answers_total", cited="true"),
        "not_cited": value("ragpulse_citation_answers_total", cited="false"),
        "cited_sentences": value("ragpulse_citation_sentences_total", kind="cited"),
        "uncited_sentences": value("ragpulse_citation_sentences_total", kind="uncited"),
        "resolved": value("ragpulse_citations_total", outcome="resolved"),
        "dangling": value("ragpulse_citations_total", outcome="dangling"),
        "over_cap": value("ragpulse_citation_answers_over_cap_total"),
    }


def test_the_stage_counts_answers_sentences_and_markers() -> None:
    scorer, registry = stage()
    for item in [
        envelope("Returns take 30 days [1]. Shipping is free. Warranty is a year [2][7]."),  # 2 of 3 cited; 2 + 1
        envelope("Returns take 30 days."),  # cites nothing
        envelope("Returns take 30 days [1].", fallback="en_not_found"),  # a fallback: not counted
        envelope("", chunks=0),  # no answer: not counted
        envelope("Returns take 30 days [1].", chunks=None),  # retrieval not reported: no marker outcome
        envelope("Anything.", citations=[EventCitation(text="Anything.", chunk_ids=["kb-2", "kb-9"])]),  # structured
    ]:
        assert scorer(item) is item
    assert values(registry) == {"cited": 3.0, "not_cited": 1.0, "cited_sentences": 3.0, "uncited_sentences": 1.0,
                                "resolved": 3.0, "dangling": 2.0, "over_cap": 0.0}


def test_the_stage_counts_an_answer_past_the_cap_once_and_no_marker_past_it() -> None:
    scorer, registry = stage()
    scorer(envelope(HOSTILE, chunks=50))
    scorer(envelope("Paris.", chunks=2, citations=[EventCitation(text="Paris.", ranks=[1, 2])] * MAX_MARKERS))
    assert values(registry) == {"cited": 2.0, "not_cited": 0.0, "cited_sentences": 6.0, "uncited_sentences": 0.0,
                                "resolved": 2.0 * MAX_MARKERS, "dangling": 0.0, "over_cap": 2.0}


def test_the_stage_makes_every_series_of_a_label_set_at_first_sight() -> None:
    scorer, registry = stage()
    scorer(envelope("Returns take 30 days.", app="help"))
    assert values(registry, "help") == {"cited": 0.0, "not_cited": 1.0, "cited_sentences": 0.0,
                                        "uncited_sentences": 0.0, "resolved": 0.0, "dangling": 0.0, "over_cap": 0.0}
    feedback = Envelope(FeedbackEvent(kind="thumbs", trace_id="t", value="up"), "test", 0.0, 0)
    assert scorer(feedback) is feedback
    assert values(registry, "help")["not_cited"] == 1.0


# -- the judges' verdicts ----------------------------------------------------------------------

PARIS = [Chunk(id="kb-1", text="Paris is the capital of France."), Chunk(id="kb-2", text="Paris has two airports.")]


def judged(event: TraceEvent) -> tuple[Judgment, dict[str, float | None]]:
    """The local judge's judgment of the event, and the citation verdicts the judging exit counts of it."""
    judgment = LocalJudge(CollectorRegistry(), cache_entries=10, cache_max_bytes=1_000_000).judge(event)
    registry, item = CollectorRegistry(), JudgeItem(event, fallback=False)
    ContextRecorder(registry, LabelGuard(["app"], 10, 10, registry), judge="local").record(
        JudgedTrace(item, judgment, None, "local", build_record(item, judgment, None, "local", 0.0, False), 0))
    return judgment, {verdict: registry.get_sample_value(
        "ragpulse_citation_verdicts_total", {"app": "shop", "judge": "local", "verdict": verdict})
        for verdict in CITATION_VERDICTS}


def test_an_answer_gets_at_most_max_judged_citations_verdicts() -> None:
    event = TraceEvent(trace_id="t", query="What is the capital of France?", answer="Paris.", app="shop", chunks=PARIS,
                       citations=[EventCitation(text="Paris is the capital of France.", ranks=[1, 2])] * MAX_MARKERS)
    judgment, counts = judged(event)  # 128 cited sentences read (the cap), the first 32 judged
    assert (len(judgment.citations), judgment.citations_not_judged) == (MAX_JUDGED_CITATIONS, 128 - MAX_JUDGED_CITATIONS)
    assert counts == {"supported": 32.0, "unsupported": 0.0, "uncertain": 0.0, "dangling": 0.0, "error": 0.0,
                      "not_judged": 96.0}
    # The LLM judge is shown the same 32, numbered from 1 as their chunks are ("[1]" is chunk 1).
    prompt = render_prompt(builtin_template(), event, event_citations(event))
    assert prompt.count("<cited ") == MAX_JUDGED_CITATIONS
    assert re.findall(r'<cited index="(\d+)" chunks="([\d,]+)">', prompt) == [
        (str(n), "1,2") for n in range(1, MAX_JUDGED_CITATIONS + 1)]


def test_one_answer_of_ranges_gets_the_verdicts_of_the_sentences_read() -> None:
    event = TraceEvent(trace_id="t", query="What is the capital of France?", answer=HOSTILE, app="shop", chunks=PARIS)
    judgment, counts = judged(event)
    assert (len(judgment.citations), judgment.citations_not_judged) == (6, 0)
    assert sum(count or 0.0 for count in counts.values()) == 6.0


# -- properties --------------------------------------------------------------------------------

_PIECES = st.sampled_from(["[1]", "[2, 3]", "[1-4]", "[0]", "[9]", "【1】", "[^2]", "[kb-12]", "[KB-1]", "[doc2]",
                           "(source: kb-9)", "(sources: kb-1, 3)", "[see below]", ". ", "。", "\n", "`", "[", "]",
                           "]: ", "(", "Paris is the capital", " ", "[3-1]", "[1" + "0" * 3 + "]"])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(_PIECES | st.text(max_size=5), max_size=40).map("".join)),
       st.lists(st.sampled_from(["kb-1", "kb-2", "kb-12", "KB-12", "", None]), max_size=5))
def test_parse_never_raises_and_its_counts_agree(answer: str, ids: list[str | None]) -> None:
    result = parse_citations(answer, ids)
    if result is None:
        return
    scan = _read(answer, ids)  # every marker group read
    assert result.resolved + result.dangling == sum(len(markers) for _, markers in scan.placed) <= MAX_MARKERS
    assert scan.read == len(scan.text) or result.over_cap  # the scan stops early only past the cap
    assert result.uncited >= 0 and result.resolved >= 0 and result.dangling >= 0
    for sentence in result.sentences:
        assert all(0 <= index < len(ids) for index in sentence.chunks)
        assert len(set(sentence.chunks)) == len(sentence.chunks)
        assert sentence.sentence == sentence.sentence.strip()
    assert sum(len(s.chunks) for s in result.sentences) <= result.resolved
    assert sum(len(s.dangling) for s in result.sentences) <= result.dangling
