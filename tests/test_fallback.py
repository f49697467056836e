"""Fallback detection: the order of trust, and the default phrase rules in English and Chinese."""

from __future__ import annotations

import pytest
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse.collector.events import Chunk, FeedbackEvent, TraceEvent
from ragpulse.config import Config
from prometheus_client import CollectorRegistry

from ragpulse.scorers import fallback as fallback_module
from ragpulse.scorers import refusal_zh
from ragpulse.scorers.fallback import FallbackDetector, FallbackMetrics


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def detector(empty_retrieval: bool = True) -> FallbackDetector:
    rules = [(r.name, r.pattern) for r in Config().all_fallback_rules()]
    return FallbackDetector(rules, empty_retrieval=empty_retrieval)


def event(answer: str, chunks: list[Chunk] | None = None, fallback: bool | None = None) -> TraceEvent:
    return TraceEvent(trace_id="t", query="q", answer=answer, chunks=chunks, fallback=fallback)


REFUSALS = [
    ("I'm sorry, I couldn't find any information about that in our help center.", "en_not_found"),
    ("I could not find the details of that policy.", "en_not_found"),
    ("We were unable to locate any records matching your request.", "en_not_found"),
    ("I couldn’t find anything about drones.", "en_not_found"),  # typographic apostrophe
    ("I can't find any information on that order.", "en_not_found"),
    ("I can't answer that based on the documents I have.", "en_cannot_answer"),
        # Contractions right after the subject (issue: local judge): the alternatives used to sit after a space.
    ("I'm not able to help with that request.", "en_cannot_answer"),
    ("I'm unable to answer that.", "en_cannot_answer"),
    ("We're unable to help with that.", "en_cannot_answer"),
    ("We’re not able to answer your question.", "en_cannot_answer"),
    ("I'm unable to find any information about that.", "en_not_found"),
    ("Sorry, I don't have information on that. Would you like to talk to an agent?", "en_no_information"),
    ("I do not have enough information to answer.", "en_no_information"),
    ("No relevant documents were found for your question.", "en_no_information"),
    ("Unfortunately, I'm not able to help with this request.", "en_cannot_answer"),  # the first rule that fires
    ("Sorry, we can't say for certain.", "en_apology_refusal"),
    ("Sorry, I don't know.", "en_apology_refusal"),
    ("Empty Response", "en_empty_response"),  # LlamaIndex's synthesizers, when the retriever returned nothing
    ("Agent stopped due to iteration limit or time limit.", "en_agent_stopped"),  # LangChain's agent executor
    ("抱歉，我无法回答这个问题。", "zh_apology_refusal"),
    ("抱歉，没有找到相关信息。", "zh_not_found"),
    ("对不起，我找不到相关的内容。", "zh_not_found"),
    ("知识库中没有关于无人机的资料。", "zh_not_found"),
    ("很遗憾，没有找到。", "zh_not_found"),
    ("不好意思，我不清楚这个政策。", "zh_apology_refusal"),
    ("抱歉，我無法回答這個問題。", "zh_apology_refusal"),  # Traditional characters: the same rules
    ("知識庫中沒有關於無人機的資料。", "zh_not_found"),
]


@pytest.mark.parametrize(("answer", "rule"), REFUSALS)
def test_refusals_are_detected_with_the_rule_that_fired(answer: str, rule: str) -> None:
    assert detector().detect(event(answer, chunks=[Chunk(text="x")])) == rule


@pytest.mark.parametrize(
    "answer",
    [
        "I found no issues with your order, here is the tracking link: ...",
        "I couldn't find any problem with your payment; it went through on Monday.",
        "Sorry for the wait! Your refund of $25 was issued yesterday.",
        "We apologize for the delay. Your parcel ships today.",
        "If you can't find your order number, look in the confirmation email.",
        "You did not find the item in your box? Open a missing-item request under Orders.",
        "No, restocking fees don't apply to defective items.",
        "We're unable to ship on Sundays, so your parcel leaves on Monday.",
        "I'm not able to see why not: the return window is 30 days.",
        "抱歉让您久等了，您的订单已经发货。",
        "如果您找不到订单号，请查看确认邮件。",
        "如果您没有找到退货标签，可以在订单页面重新下载。",
        "退货需要在30天内完成，没有找到问题的商品可以直接退回。",
    ],
)
def test_answers_that_merely_sound_negative_are_not_fallbacks(answer: str) -> None:
    assert detector().detect(event(answer, chunks=[Chunk(text="x")])) is None


@pytest.mark.parametrize(("answer", "rule"), [
    ("I couldn't find any information on exchanges, but returns are free for 90 days.", None),
    ("抱歉，没有找到相关信息，不过退货在90天内免费。", None),
    ("I do not have enough information to answer. Our support line is open 24/7.", None),
    # a referral, a question or another refusal after the phrase: still a fallback
    ("I'm sorry, I couldn't find any information about that. Please contact our support team.", "en_not_found"),
    ("Sorry, I don't know. Is there anything else I can help with?", "en_apology_refusal"),
    ("抱歉，我无法回答这个问题，建议您咨询人工客服。", "zh_apology_refusal"),
])
def test_a_fallback_phrase_followed_by_claims_is_an_answer(answer: str, rule: str | None) -> None:
    """The claims after a refusal are judged like any answer's (issue 44): the answer is no fallback."""
    assert detector().detect(event(answer, chunks=[Chunk(text="x")])) == rule


def test_explicit_flag_wins_over_every_other_signal() -> None:
    d = detector()
    assert d.detect(event("Here is your answer.", chunks=[Chunk(text="x")], fallback=True)) == "explicit"
    # The service says it answered: neither the empty retrieval nor the phrase overrides it.
    assert d.detect(event("I couldn't find any information.", chunks=[], fallback=False)) is None


def test_empty_retrieval_is_a_fallback_only_when_reported_and_enabled() -> None:
    assert detector().detect(event("Hello! How can I help?", chunks=[])) == "empty_retrieval"
    assert detector().detect(event("Hello! How can I help?", chunks=None)) is None  # retrieval not reported
    assert detector(empty_retrieval=False).detect(event("Hello! How can I help?", chunks=[])) is None


def test_custom_rules_and_their_order() -> None:
    d = FallbackDetector([("de_not_found", r"leider (?:konnte|kann) ich (?:keine|nichts)"), ("any_sorry", "sorry")],
                         empty_retrieval=True)
    assert d.detect(event("Leider konnte ich keine Informationen finden.")) == "de_not_found"
    assert d.detect(event("SORRY!")) == "any_sorry"  # case-insensitive
    assert d.rule_names == ["explicit", "empty_retrieval", "de_not_found", "any_sorry"]


def test_the_built_in_rules_traditional_forms_are_opencc_s2t_s_and_custom_ones_convert() -> None:
    """The table that spares a default config OpenCC's s2t dictionary (scorers/traditional_forms.json) holds every
    built-in pattern with Chinese or other non-ASCII characters, as s2t converts it (None: to itself)."""
    known = {r.pattern: (None if (t := refusal_zh.to_traditional(r.pattern)) == r.pattern else t)
             for r in Config().all_fallback_rules() if not r.pattern.isascii()}
    assert refusal_zh._KNOWN_TRADITIONAL == known  # noqa: SLF001
    assert refusal_zh.in_both_scripts("没有资料") == "(?:没有资料)|(?:沒有資料)"  # not in the table: s2t loaded


ANSWERS = [answer for answer, _ in REFUSALS] + [
    "Returns are accepted within 14 days.", "", "Sorry", "sorry\nI cannot say", "我们无法找到相关信息。", "OK.",
    "no information here", "Information: none, sorry.", "\n", "can't\nfind",
]
# Rules whose matches depend on where an answer starts and ends, or could run into the next answer.
TRICKY_RULES = [("starts_sorry", r"^sorry"), ("ends_ok", r"ok\.$"), ("greedy", r"information[^!]*"),
                ("empty_answer", r"^$"), ("across_lines", r"(?s)sorry.*say"), ("zh", "无法找到")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ANSWERS) | st.text(alphabet="abc sorryOK.\n!无法找到", max_size=30), max_size=40),
       st.sampled_from(["default", "tricky", "both"]))
def test_a_batch_is_decided_exactly_as_its_answers_one_by_one(answers: list[str], rules: str) -> None:
    """`prepare` joins a batch's answers for one search: it must change no event's rule."""
    default = [(r.name, r.pattern) for r in Config().all_fallback_rules()]
    chosen = {"default": default, "tricky": TRICKY_RULES, "both": TRICKY_RULES + default}[rules]
    batched = FallbackDetector(chosen, empty_retrieval=True)
    envelopes = [envelope(event(answer)) for answer in answers]
    batched.prepare(envelopes)
    one_by_one = FallbackDetector(chosen, empty_retrieval=True)
    assert [batched(e).fallback_rule for e in envelopes] == [one_by_one.detect(e.event) for e in envelopes]


def test_a_rule_anchored_to_the_whole_text_turns_the_joined_search_off() -> None:
    detector_ = FallbackDetector([("starts", r"\Asorry")], empty_retrieval=True)
    envelopes = [envelope(event(answer)) for answer in ["ok", "sorry"]]
    detector_.prepare(envelopes)
    assert [detector_(e).fallback_rule for e in envelopes] == [None, "starts"]


def test_the_memo_of_matched_answers_decides_as_reading_them_does_and_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A recurring fallback answer is decided from the memo: the same rule as reading it again, for refusals and for a
    partial refusal whose claim makes it no fallback; past its entries the oldest goes, counted."""
    monkeypatch.setattr(fallback_module, "MEMO_ENTRIES", 2)
    registry = CollectorRegistry()
    remembering = FallbackDetector([(r.name, r.pattern) for r in Config().all_fallback_rules()], empty_retrieval=True,
                                   metrics=FallbackMetrics(registry))
    answers = ["Sorry, I don't have information on that. Would you like to talk to an agent?",
               "I couldn't find any information on exchanges, but returns are free for 90 days.",
               "I'm unable to answer that.", "Returns are free."]
    expected = [detector().detect(event(answer)) for answer in answers]
    assert expected == ["en_no_information", None, "en_cannot_answer", None]
    for _ in range(3):
        assert [remembering.detect(event(answer)) for answer in answers] == expected
    # three matched answers through a memo of two, three times: each read is a miss that evicts the oldest
    assert registry.get_sample_value("ragpulse_fallback_memo_evicted_total") == 7.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ANSWERS) | st.text(alphabet="abc sorryOK.\n!无法找到", max_size=30), max_size=40),
       st.sampled_from(["default", "tricky", "anchored"]), st.booleans())
def test_prepare_puts_each_traces_rule_on_its_envelope_as_one_by_one(answers: list[str], rules: str,
                                                                     feedback_too: bool) -> None:
    """`prepare` decides the batch on the envelopes themselves (the pipeline then skips the stage's per-event call); with
    a rule anchored to the whole text it decides what its fields decide and leaves the rest to the per-event call."""
    default = [(r.name, r.pattern) for r in Config().all_fallback_rules()]
    chosen = {"default": default, "tricky": TRICKY_RULES, "anchored": [("starts", r"\Asorry"), *default]}[rules]
    batched = FallbackDetector(chosen, empty_retrieval=True)
    traces = [event(answer, fallback=True if answer == "OK" else None) for answer in answers]
    envelopes = [envelope(trace) for trace in traces]
    if feedback_too:
        envelopes.append(envelope(FeedbackEvent(kind="thumbs", value="up", trace_id="t")))
    for item in envelopes:
        item.fallback_rule = "before"  # every trace's is written, feedback's left alone
    decided = batched.prepare(envelopes)
    one_by_one = FallbackDetector(chosen, empty_retrieval=True)
    expected = [one_by_one.detect(trace) for trace in traces]
    if rules != "anchored":
        assert decided is True
        assert [item.fallback_rule for item in envelopes[:len(traces)]] == expected
    else:
        assert decided is (all(answer == "OK" for answer in answers))
        assert [batched(item).fallback_rule for item in envelopes[:len(traces)]] == expected
    assert all(item.fallback_rule == "before" for item in envelopes[len(traces):])
