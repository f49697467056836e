"""The claim-level local judge: the labelled tables (exact confusion counts), the text analysis it
rests on (quantities, polarity, clauses), its bounds, and its verdicts in a running sidecar."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from helpers.events import ndjson, trace
from helpers.repo_scripts import load_script
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.attribution import attribute
from ragpulse.judging.local_judge import MAX_CHARS, LocalJudge
from ragpulse.judging.substitution import SWAP_MAX_TOKENS, one_span_apart
from ragpulse.scorers.text import clause, clauses

# The evaluation docs/judging.md's numbers come from.
OWN_TABLE = load_script("bench/eval_own_table.py")

Factory = Callable[..., RagpulseProcess]


def judge(cache_entries: int = 100, cache_max_bytes: int = 10_000_000,
          registry: CollectorRegistry | None = None) -> LocalJudge:
    return LocalJudge(registry or CollectorRegistry(), cache_entries=cache_entries,
                      cache_max_bytes=cache_max_bytes)


def judged(question: str, answer: str, *chunks: str, local: LocalJudge | None = None):  # type: ignore[no-untyped-def]
    return (local or judge()).judge(TraceEvent(trace_id="t", query=question, answer=answer,
                                               chunks=[Chunk(text=text) for text in chunks]))


@pytest.mark.unit
def test_the_labelled_table() -> None:
    """170 cases, 75 of them Chinese. claims.v6 (the model reads the lexical score too, issue 44): recall 0.756 at
    precision 0.944, as claims.v5; claims.v5 (the answer's verdict from the model fitted on public benchmarks): recall 0.756 at
    precision 0.944 (0.958 before numbers in words were read; first fit: 0.589 at 0.930), from 0.867 at 1.0 with claims.v4's cascade.
    A contradicted claim's terms now count half as support, which brings back the English flipped negations and
    most English swaps; the Chinese ones stay missed (7 negations, 5 swaps): on OCNLI a contradiction the rules find is hallucinated no more often than
    any answer, so the model gives it no weight (docs/benchmarks-log.md)."""
    result = OWN_TABLE.evaluate(OWN_TABLE.TABLES[0])
    assert result.cases == 170 and not result.unexpected_fallbacks
    # v8 (local_judge.v3, its cut 0.832 from 0.784): 2 paraphrases and 2 Chinese answers from outside the chunks (p 0.80)
    # and an added 也可以 (p 0.77) fall under it, "free on orders over $35" rises past it (p 0.84)
    assert (result.judge.tp, result.judge.fp, result.judge.fn, result.judge.tn) == (67, 3, 23, 62)  # v7 69, 5, 21, 60 (threshold 0.749 from 0.757: "Only when the item is defective. Otherwise $5.95 …", p 0.79); v6 and v5 68, 4, 22, 61; before numbers in words: 68, 3, 22, 62; first fit 53, 4, 37, 61; v4: 78, 0, 12, 65
    # first fit: 4 paraphrased, 6 added, 4 numbers, 2 units, 15 negations, 10 swaps; v4: 7 added, 1 negation, 3 swaps, 1 general
    assert {kind: n for kind, n in result.wrong_by_kind.items() if n} == {
        "paraphrased": 3, "added_claim": 7, "general_knowledge": 2, "flipped_negation": 7, "swapped_entity": 7}  # v7 5 paraphrased, 6 added, 1 changed number, no general knowledge; v6 4, 7 added; v5: 6
    # added, 1 changed unit
    # claims.v10 (local_judge.v5): "配送到中国大陆、台湾和澳门" names a place its chunk does not (p 0.49 → 0.83, flagged);
    # "支持支付宝、PayPal和银联卡付款" (p 0.83) falls from the hallucination cut 0.831 to v5's 0.832: uncertain
    assert round(result.judge_auroc, 4) == 0.9156  # v9 0.9147; v7 0.9079, at first 0.9078, v6 0.9082, v5 0.9202, 0.918 before numbers in words; first fit 0.8142; v4: 0.9774
    assert result.stages == Counter({  # first fit: generation->generation 43, ->none 34; none->none 61, ->generation 2
        ("generation", "generation"): 57, ("generation", "none"): 19, ("generation", "retrieval"): 4,  # v9 58, 19, 3; v7 at first 57, 20
        ("knowledge_gap", "knowledge_gap"): 7, ("none", "none"): 62, ("none", "generation"): 2, ("none", "retrieval"): 1,  # v7 60, 3, 2; v6 61, 2
        ("over_refusal", "over_refusal"): 8, ("retrieval", "generation"): 1, ("retrieval", "none"): 2,  # v7 no retrieval->none
        ("retrieval", "retrieval"): 7,  # v7 9
    })
    # the fast path's lexical flag on the same cases: what decides which traces are judged first
    assert (result.lexical_flag.tp, result.lexical_flag.fp, result.lexical_flag.fn, result.lexical_flag.tn) == (50, 9, 40, 56)
    assert round(result.lexical_auroc, 4) == 0.6445


@pytest.mark.unit
@pytest.mark.xfail(strict=True, reason="claims.v5 misses issue 34's recall target on its own table: 0.756 < 0.85 "
                   "(the Chinese flipped negations and swaps: the public data gives a contradiction no weight)")
def test_the_labelled_table_meets_its_targets() -> None:
    result = OWN_TABLE.evaluate(OWN_TABLE.TABLES[0])
    assert result.judge.recall >= 0.85 and result.judge.precision >= 0.9  # the issue's targets


@pytest.mark.unit
def test_the_held_out_table() -> None:
    """Written after the judge was tuned on the first table, never tuned on: recall 0.789 with claims.v5's and v6's model
    (its first fit 0.632, claims.v4 0.842), precision 1.0 all three; claims.v7 0.938 (one paraphrase at p 0.79), claims.v8
    1.0 again."""
    result = OWN_TABLE.evaluate(OWN_TABLE.TABLES[1])
    assert result.cases == 37 and not result.unexpected_fallbacks
    assert (result.judge.tp, result.judge.fp, result.judge.fn, result.judge.tn) == (15, 0, 4, 14)  # v8 under its 0.832 cut; v7 15, 1, 4, 13: "Order records are kept for six years, for tax reasons", p 0.79 over the 0.785 line; v6 15, 0, 4, 14; first fit 12, 0, 7, 14; v4: 16, 0, 3, 14
    # first fit: 2 added, 3 negations, 2 swaps; v4: 2 added claims, 1 swap
    assert {kind: n for kind, n in result.wrong_by_kind.items() if n} == {
        "added_claim": 2, "flipped_negation": 1, "swapped_entity": 1}  # v7 1 paraphrased; v6 none
    assert round(result.judge_auroc, 4) == 0.9248  # first fit 0.7951; v4: 0.9586


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "quantities"),
    [
        ("within 14 days", {("duration", 20160.0)}),
        ("within two weeks", {("duration", 20160.0)}),
        ("两周内", {("duration", 20160.0)}),
        ("a 1-year warranty", {("duration", 525960.0)}),
        ("12 months", {("duration", 525960.0)}),
        ("享受一年保修", {("duration", 525960.0)}),
        ("12个月", {("duration", 525960.0)}),
        ("half an hour", {("duration", 30.0)}),
        ("24小时内", {("duration", 1440.0)}),
        ("一天内", {("duration", 1440.0)}),
        ("3 to 5 business days", {("business_days", 3.0), ("business_days", 5.0)}),
        ("3-5 business days", {("business_days", 3.0), ("business_days", 5.0)}),
        ("三到五个工作日", {("business_days", 3.0), ("business_days", 5.0)}),
        ("costs $12.99", {("usd", 12.99)}),
        ("$1,200 or 20 dollars", {("usd", 1200.0), ("usd", 20.0)}),
        ("满九十九元", {("cny", 99.0)}),
        ("50% off", {("percent", 50.0)}),
        ("from 9 am to 8 pm", {("clock", 9.0), ("clock", 20.0)}),
        ("上午10点到晚上9点", {("clock", 10.0), ("clock", 21.0)}),
        ("$9.99 per month", {("usd", 9.99), ("rate", 43830.0)}),
        ("每月15元", {("rate", 43830.0), ("cny", 15.0)}),
        ("4 interest-free installments, once per order", {("count", 4.0), ("times", 1.0)}),
        ("a month of free shipping", set()),  # an article is no number
    ],
)
def test_quantities_are_normalised_to_one_unit(text: str, quantities: set[tuple[str, float]]) -> None:
    assert clause(text).quantities == quantities


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "negated"),
    [
        ("Accidental damage is not covered.", True),
        ("Gift cards cannot be exchanged for cash.", True),
        ("No, cash on delivery is not available.", True),  # the leading "No" answers, it negates nothing
        ("Yes, cash on delivery is available.", False),
        ("If it shows delivered but you don't have it", False),  # "don't have it" governs no content word
        ("不支持货到付款", True),
        ("注销后无法恢复", True),
        ("不能，我们不支持货到付款", True),  # the leading 不能 answers the question
        ("未拆封商品支持7天无理由退货", True),  # 无理由 is a phrase (no-reason returns), 未拆封 negates
        ("支持7天无理由退货", False),
    ],
)
def test_polarity(text: str, negated: bool) -> None:
    assert clause(text).negated is negated


@pytest.mark.unit
def test_clauses_split_where_a_claim_can_hide() -> None:
    assert clauses("Returns take 14 days. Shipping is free, but express costs $12.99; refunds take $5.95 off.") == [
        "Returns take 14 days", "Shipping is free", "but express costs $12.99", "refunds take $5.95 off"]
    assert clauses("Gift cards are valid for 3 years and cannot be exchanged for cash.") == [
        "Gift cards are valid for 3 years", "cannot be exchanged for cash"]
    assert clauses("可以，配件齐全的情况下，已拆封的耳机可在14天内退货。") == ["可以", "配件齐全的情况下", "已拆封的耳机可在14天内退货"]


RETURNS = "Unopened items can be returned within 14 days of delivery for a full refund. Opened headphones can be " \
          "returned within 14 days if all accessories are included."
FEES = "Return shipping is free for defective items. For all other returns, a $5.95 return label is deducted from the refund."


@pytest.mark.unit
def test_one_added_sentence_is_not_averaged_away_and_is_in_the_claims() -> None:
    result = judged("Can I return opened headphones?", "Yes, opened headphones can be returned within 14 days if all "
                    "accessories are included. You can also exchange them in any store without a receipt.", RETURNS, FEES)
    assert result.groundedness == 1 and result.hallucination  # v5: p(unsupported) 0.94, past half-way to 1 (v4: 2)
    assert [(c.claim, c.verdict) for c in result.claims] == [
        ("Yes, opened headphones can be returned within 14 days if all accessories are included", "supported"),
        ("You can also exchange them in any store without a receipt", "not_in_context"),
    ]
    assert result.claims[0].reason == ('100% of its terms are in the context (context: "Opened headphones can be returned '
                                       'within 14 days if all accessories are included")')


@pytest.mark.unit
def test_contradictions_name_their_evidence() -> None:
    number = judged("How long do I have?", "Unopened items can be returned within 30 days of delivery.", RETURNS, FEES)
    assert (number.groundedness, number.claims[0].verdict) == (1, "contradicted")  # v5: p 0.99, first fit 0.87 (v4: 1)
    assert number.claims[0].reason.startswith("says 43200 minutes (duration) where the context says 20160 minutes (duration)")
    flipped = judged("Is return shipping free for defective items?", "No, return shipping is not free for defective items.",
                     RETURNS, FEES)
    assert flipped.claims[0].reason == 'the context says the opposite (context: "Return shipping is free for defective items")'
    assert flipped.hallucination, flipped.groundedness_reason  # v5: p 0.93; the first fit missed it (p 0.25)
    stores = "Our Berlin store is open Monday to Saturday from 9 am to 8 pm. The Munich store closes at 6 pm on Saturdays."
    swapped = judged("When is the Munich store open?", "The Munich store is open Monday to Saturday from 9 am to 8 pm.", stores)
    assert swapped.claims[0].verdict == "contradicted" and swapped.claims[0].reason.startswith("says munich where the context says berlin")
    assert swapped.hallucination, swapped.groundedness_reason  # v5: p 0.93; the first fit missed it (p 0.25)


@pytest.mark.unit
def test_paraphrases_with_other_units_are_supported() -> None:
    result = judged("How long do I have to return an unopened item?",
                    "You have two weeks from delivery to send back an unopened item.", RETURNS, FEES)
    # the claim is supported; the answer is within the band (v8, local_judge.v3: 0.748 to 0.832), flagged at p 0.79 by
    # v7 (its line 0.785), within the band at v6 and v5 (v4: 4)
    assert (result.groundedness, result.groundedness_verdict, result.claims[0].verdict) == (3, "uncertain", "supported")
    chinese = judged("笔记本保修多久？", "笔记本电脑有12个月的有限保修。", "笔记本电脑享受一年有限保修，仅限制造缺陷。")
    assert (chinese.groundedness, chinese.claims[0].verdict) == (4, "supported")  # v5: p 0.41 (v4: 5)


@pytest.mark.unit
def test_relevancy_follows_grounding_so_the_readme_example_is_no_bad_case() -> None:
    result = judged("Can I return opened headphones?", "Yes, within 14 days if all accessories are included.", RETURNS, FEES)
    assert (result.groundedness, result.answer_relevancy, result.chunk_relevance) == (5, 5, [3, 2])
    assert result.answer_relevancy_reason == "its supported claims come from a chunk with 100% of the question's terms"
    assert attribute(result, fallback=False) is None


@pytest.mark.unit
def test_a_chinese_refusal_over_a_relevant_chunk_is_an_over_refusal() -> None:
    result = judged("耳机拆封后还能退吗？", "抱歉，我无法回答这个问题。", "已拆封的耳机在配件齐全的情况下，可在14天内退货。")
    assert result.chunk_relevance == [3]  # 耳 机 拆 封 退 of 耳 机 拆 封 后 退
    assert attribute(result, fallback=True) == "over_refusal"


@pytest.mark.unit
def test_chunks_without_text_are_not_judged_on() -> None:
    result = judge().judge(TraceEvent(trace_id="t", query="q?", answer="An answer.", chunks=[Chunk(id="a", text=None)]))
    assert (result.error, result.groundedness, result.claims, result.chunk_relevance) == ("no_chunk_text", None, [], [None])


@pytest.mark.unit
def test_empty_texts_and_answers_without_claims() -> None:
    blank = judged("Is it free?", "Shipping is free on orders over $50.", "   ")
    assert (blank.groundedness, [c.verdict for c in blank.claims]) == (1, ["not_in_context"])  # v5: p 1.00 (v4: 2)
    chatter = judged("Is it free?", "Happy to help! Let me know if you need anything else.", FEES)
    assert (chatter.groundedness, chatter.claims, chatter.groundedness_reason) == (5, [], "the answer makes no claim to check")


@pytest.mark.unit
def test_long_texts_are_examined_up_to_the_cap() -> None:
    filler = "Our catalogue lists many products in many colours. " * 200  # ~10,000 characters
    assert len(filler) > 2 * MAX_CHARS
    late = judged("How long is the warranty?", "The warranty lasts 2 years.", filler + " The warranty lasts 2 years.")
    assert (late.groundedness, late.claims[0].verdict) == (1, "not_in_context")  # past the cap: not seen (v4: 2)
    early = judged("How long is the warranty?", "The warranty lasts 2 years.", "The warranty lasts 2 years. " + filler)
    assert (early.groundedness, early.claims[0].verdict) == (5, "supported")


@pytest.mark.unit
def test_the_chunk_cache_is_bounded_in_entries_and_bytes_and_counts_evictions() -> None:
    registry = CollectorRegistry()
    local = judge(cache_entries=3, cache_max_bytes=10_000_000, registry=registry)
    for i in range(5):
        judged("Is it free?", "Shipping is free.", f"Shipping is free on orders over ${i}0.", local=local)
    assert registry.get_sample_value("ragpulse_local_judge_chunk_cache_entries") == 3
    assert registry.get_sample_value("ragpulse_local_judge_chunk_cache_evicted_total") == 2
    assert registry.get_sample_value("ragpulse_local_judge_duration_seconds_count") == 5
    small = CollectorRegistry()
    tight = judge(cache_entries=100, cache_max_bytes=20_000, registry=small)
    for i in range(20):
        judged("Is it free?", "Shipping is free.", f"Standard shipping is free on orders over ${i}0 in our stores.", local=tight)
    held = small.get_sample_value("ragpulse_local_judge_chunk_cache_bytes")
    assert held is not None and 0 < held <= 20_000
    assert small.get_sample_value("ragpulse_local_judge_chunk_cache_evicted_total") == 20 - small.get_sample_value(
        "ragpulse_local_judge_chunk_cache_entries")


def test_a_running_sidecar_records_the_local_judges_claims(ragpulse_factory: Factory, tmp_path: Path) -> None:
    records = tmp_path / "judgments.jsonl"
    rp = ragpulse_factory("--set", "judge.sample_rate=1.0", "--set", f"results.jsonl_path={records}")
    chunks = [{"id": "kb-returns", "text": RETURNS}, {"id": "kb-fees", "text": FEES}]
    rp.post("/v1/events", ndjson([
        trace("added", chunks=chunks, query="Can I return opened headphones?",
              answer="Yes, within 14 days if all accessories are included. Return labels cost $9.95."),
        trace("readme", chunks=chunks, query="Can I return opened headphones?",
              answer="Yes, within 14 days if all accessories are included."),
    ]))
    wait_until(lambda: records.exists() and len(records.read_text().splitlines()) == 2, timeout=30)
    judged_records = {r["trace_id"]: r for r in map(json.loads, records.read_text().splitlines())}
    added = judged_records["added"]
    assert (added["judge"], added["prompt_version"], added["groundedness"], added["stage"]) == ("local", "claims.v11", 1, "generation")
    assert [(c["claim"], c["verdict"]) for c in added["claims"]] == [
        ("Yes, within 14 days if all accessories are included", "supported"),
        ("Return labels cost $9.95", "contradicted"),
    ]
    readme = judged_records["readme"]
    assert (readme["groundedness"], readme["answer_relevancy"], readme["stage"]) == (5, 5, None)
    # the verdict and the judge's confidence in it travel with the record (claims.v5 on: the model's p(unsupported)
    # for a hallucination, 1 - p for a grounded answer; claims.v4: 0.75 and 1.0)
    assert (added["verdict"], added["confidence"], readme["verdict"], readme["confidence"]) == (
        "hallucination", 0.996, "grounded", 0.846)  # v8 0.847; v7 0.991, 0.868; v6 0.99, 0.87, at first 0.869; v5 0.992, 0.845; before numbers in words 0.968, 0.843


@pytest.mark.unit
@pytest.mark.parametrize(("answer", "context"), [
    # A lower-case source has no capitalised names: the name is there as a word.
    ("Kilauea has erupted continuously since 1983.", "the kilauea volcano has erupted continuously since 1983."),
    # A name that opens the source's sentence is no name by capitalisation there, but it is there.
    ("The film Poseidon grossed 181 million dollars.", "Poseidon grossed 181 million dollars at the box office."),
])
def test_a_name_is_found_in_any_case_and_position(answer: str, context: str) -> None:
    verdict = judged("How did it do?", answer, context)
    assert (verdict.hallucination, [c.verdict for c in verdict.claims]) == (False, ["supported"]), verdict.groundedness_reason


@pytest.mark.unit
def test_a_name_the_context_does_not_have_is_still_missing() -> None:
    verdict = judged("How did it do?", "The film Titanic grossed 181 million dollars.",
                     "Poseidon grossed 181 million dollars at the box office.")
    assert verdict.hallucination and verdict.claims[0].verdict == "not_in_context"
    assert "does not mention titan" in verdict.claims[0].reason


@pytest.mark.unit
def test_a_preamble_and_a_note_to_the_reader_are_no_claims() -> None:
    context = "Poseidon grossed $181,674,817 at the worldwide box office on a budget of $160 million."
    verdict = judged("Summarize the passage.", "Here is a concise summary of the passage:\n\nPoseidon grossed "
                     "$181,674,817 worldwide on a budget of $160 million.", context)
    assert (verdict.hallucination, [c.verdict for c in verdict.claims]) == (False, ["supported"]), verdict.groundedness_reason
    noted = judged("Summarize the passage.", "Poseidon grossed $181,674,817 worldwide ( Note: The budget was $160 million )",
                   context)
    assert not any("does not mention" in c.reason for c in noted.claims), [c.reason for c in noted.claims]


@pytest.mark.unit
def test_a_number_in_digits_before_a_chinese_unit_is_that_quantity() -> None:
    verdict = judged("多久可以退货？", "7 天内可以退货。", "收到商品后七天内可以无理由退货。")
    assert (verdict.hallucination, [c.verdict for c in verdict.claims]) == (False, ["supported"]), verdict.groundedness_reason


# -- abstention and the failure classes found on public benchmarks (docs/benchmarks-log.md) ------------------------

def verdicts(verdict) -> tuple[bool, list[str]]:  # type: ignore[no-untyped-def]
    return verdict.hallucination, [c.verdict for c in verdict.claims]


@pytest.mark.unit
def test_weak_evidence_is_an_uncertain_claim_that_the_model_weighs() -> None:
    """A reworded claim with 43% of its words in the context: the rules cannot tell, so the claim is "uncertain"; the
    answer's verdict is the model's, and on the public benchmarks an English answer with that little of its words in
    the context was mostly unsupported (claims.v4 abstained: groundedness 3, uncertain)."""
    verdict = judged("What did the report find?", "Researchers observed a sharp decline in regional bee colonies.",
                     "The survey counted fewer bee colonies in the region this spring than in any year before.")
    assert verdicts(verdict) == (True, ["uncertain"]), verdict.groundedness_reason
    assert (verdict.groundedness, verdict.groundedness_verdict, verdict.confidence) == (1, "hallucination", 0.967)  # v8 0.968, v7 0.976, v6 0.975, at first 0.976, v5 0.963
    # v8: support_pooled (+0.62) and lexical_support (+0.62) alike; v7 p 0.98, most from lexical_support (+0.74)
    assert "1 uncertain; p(unsupported)=0.97, hallucination: most from support_pooled (+0.62)" in verdict.groundedness_reason


@pytest.mark.unit
def test_a_claim_with_none_of_its_words_in_the_context_is_unsupported() -> None:
    verdict = judged("What is the return window?", "Returns take 14 days. Loyalty members also get free gift wrapping.",
                     "Returns are accepted within 14 days of delivery.")
    assert verdicts(verdict) == (True, ["supported", "not_in_context"]), verdict.groundedness_reason
    assert "none of its 5 terms" in verdict.claims[1].reason  # loyalty, member, free, gift, wrap
    assert verdict.confidence == 0.994  # p(unsupported), the model's (v7 0.996, v5 0.995; v4: 0.75, 0.5 + 5 terms / 20)


@pytest.mark.unit
def test_a_supported_answer_is_confident_and_a_contradiction_more_so_the_closer_it_copies() -> None:
    context = "Accidental damage is not covered by the standard warranty."
    grounded = judged("Is accidental damage covered?", "Accidental damage is not covered by the standard warranty.", context)
    assert (grounded.groundedness_verdict, grounded.confidence) == ("grounded", 0.846)  # 1 - p (v8 0.847, v7 0.868, v6 0.87, at first 0.869, v5 0.845; v4: 1.0)
    contradicted = judged("Is accidental damage covered?", "Accidental damage is covered by the standard warranty.", context)
    # v5: a contradicted claim's terms count half as support (judging/judge_features.py), p 0.93; the first fit missed
    # it (grounded, p 0.24): a flipped copy of the context's words is rare in the public benchmarks; v4: confidence 1.0
    # v6: the lexical score, which counts the flipped claim's words in full, is discounted as its share is, p 0.93
    assert verdicts(contradicted) == (True, ["contradicted"]) and contradicted.confidence == 0.916  # v8 0.917, v7 0.929, v6 0.926, at first 0.927, v5 0.933


@pytest.mark.unit
@pytest.mark.parametrize(("answer", "context"), [
    # the negator governs "active mining", not the mine
    ("The Pike mine is in Utah.", "The Pike mine is in Utah. After 1920 the mine never had active mining again."),
    # both negate the injuries ("No" opening a statement is no answer to a question)
    ("No immediate injuries or damage were reported.", "There were no immediate reports of injuries or damage."),
    # two negators in the source, the one that matters negates the same thing as the claim
    ("He doesn't want the belt in his presence.", "He can't hide the fact he doesn't want the belt in his presence."),
    # "not only" negates nothing
    ("Evaluating the fights involves the quality of the action.",
     "Evaluating the fights involves not only the quality of the action but the undertones."),
])
def test_a_negator_counts_only_where_it_governs_the_claims_words(answer: str, context: str) -> None:
    verdict = judged("What does it say?", answer, context)
    assert not verdict.hallucination and "contradicted" not in [c.verdict for c in verdict.claims], verdict.groundedness_reason


@pytest.mark.unit
@pytest.mark.parametrize(("answer", "context"), [
    ("The program costs a trillion dollars.", "The program costs $1 trillion."),
    ("The program costs $1 trillion.", "The program costs a trillion dollars."),
    ("The hall seats two hundred people.", "The hall seats 200 people."),
    ("The series ran for 2 seasons.", "The series ran for two seasons on CBS."),
    ("Keating is a 21-year-old striker.", "Striker Keating, 21, was recommended to the manager."),
    ("Sheerin, aged 39, joined the club.", "Sheerin, 39, joined the club in 2010."),
])
def test_numbers_in_words_scales_and_ages_are_the_numbers(answer: str, context: str) -> None:
    verdict = judged("What does it say?", answer, context)
    assert verdicts(verdict) == (False, ["supported"]), verdict.groundedness_reason


@pytest.mark.unit
def test_a_count_in_words_is_evidence_not_a_claim_and_a_wrong_digit_is_still_caught() -> None:
    # "two films" counts what the source lists: no claim to check on its own
    listed = judged("Summarize.", "The passage describes two films.", "Veeram is a 2014 film. Veeram is also a 2016 film.")
    assert not listed.hallucination, listed.groundedness_reason
    wrong = judged("How long did it run?", "The series ran for 3 seasons.", "The series ran for two seasons on CBS.")
    assert "3 (count) is not in the context" in wrong.claims[0].reason
    # p 0.82, most from the missing number (+1.15)
    assert (wrong.groundedness, wrong.groundedness_verdict, wrong.hallucination) == (2, "hallucination", True)


@pytest.mark.unit
def test_a_one_word_wrong_entity_is_a_missing_name() -> None:
    context = "He was born in England in 1950 and moved to Canada in 1975."
    wrong = judged("Where was he born?", "Scotland.", context)
    assert verdicts(wrong) == (True, ["not_in_context"]) and "does not mention scotland" in wrong.claims[0].reason
    right = judged("Where was he born?", "England.", context)
    assert not right.hallucination, right.groundedness_reason


@pytest.mark.unit
def test_an_attribute_given_to_the_wrong_subject_is_contradicted() -> None:
    """Every word of the claim is in the source, but 1636 is Harvard's year, and the sentence about Dartmouth
    says 1769."""
    context = "Dartmouth College was founded in 1769. Harvard College was founded in 1636 in Cambridge."
    wrong = judged("When was Dartmouth founded?", "Dartmouth College was founded in 1636.", context)
    # v5 flags it (p 0.97): once contradicted, the claim's terms count half as support; the first fit missed it (every
    # word in the context, p 0.55, grounded); v4 called it a hallucination
    assert verdicts(wrong) == (True, ["contradicted"]), wrong.groundedness_reason
    assert "1636 (count) is said of something else" in wrong.claims[0].reason
    right = judged("When was Dartmouth founded?", "Dartmouth College was founded in 1769.", context)
    assert verdicts(right) == (False, ["supported"]), right.groundedness_reason


@pytest.mark.unit
@pytest.mark.parametrize(("answer", "context"), [
    ("Beckford has offers from Belgian clubs.", "beckford also has offers from clubs in belgium."),
    ("Protests are illegal in several Chinese cities.", "though demonstrations are illegal in china, cities saw protests."),
    ("- Full name: Christopher Livingstone Eubank", "Christopher Livingstone Eubank is a British boxer."),
    ("1. Eubank is a British boxer.", "Christopher Livingstone Eubank is a British boxer."),
    ("Ilze from Latvia met Pablo in Riga in 2011.", "latvian ilze , 31 , met pablo in riga in 2011 ."),  # the other way
    ("Exports to China rose.", "Chinese exports rose in March."),
])
def test_demonyms_and_list_markers_are_no_missing_names(answer: str, context: str) -> None:
    """The claim is supported (no missing name). v5: the answer's verdict is the model's, which flags two of these
    (60% of their words in the context, p 0.85), so the rule is held on the claim (v4 held it on the answer)."""
    verdict = judged("Summarize.", answer, context)
    assert [c.verdict for c in verdict.claims] == ["supported"], verdict.groundedness_reason


@pytest.mark.unit
def test_a_public_benchmark_sample_through_the_benchmark_script() -> None:
    """bench/eval_local_judge.py on 50 rows of BEGIN (tests/data/NOTICE): the report the docs' numbers come from,
    exact, with its baselines (flag-everything F1, answer-length precision / F1 and AUROC)."""
    eval_local_judge = load_script("bench/eval_local_judge.py")
    items = eval_local_judge.begin_items((Path(__file__).parent / "data" / "begin_wow_sample.tsv").read_text(), "dev")
    assert (len(items), sum(i.held_out for i in items), sum(i.hallucinated for i in items)) == (50, 20, 25)
    assert eval_local_judge.evaluate("BEGIN sample", items) == [
        # claims.v8: development AUROC 0.977; claims.v7: 0.973; claims.v6 (the model reads the lexical score): development recall 0.769, AUROC 0.973 (v5 0.769, 0.989; 0.692
        # before the speaker's story was told from a refusal);
        # held out 0.583, AUROC 0.885 (v5 0.667, 0.885); no false positive either way
        "| BEGIN sample | development | 30 | 43.3% | 33.3% | 0.0% | 1.000 | 0.769 | 0.870 | 0.977 | 0.605 | 0.533 / 0.571 | 0.620 |",
        "| BEGIN sample | held out | 20 | 60.0% | 35.0% | 0.0% | 1.000 | 0.583 | 0.737 | 0.885 | 0.750 | 0.750 / 0.750 | 0.688 |",
    ]


@pytest.mark.unit
@settings(max_examples=2_000, deadline=None)
@given(st.lists(st.sampled_from("abcde"), max_size=12), st.lists(st.sampled_from("abcde"), max_size=12))
def test_the_swap_prefilter_never_drops_what_the_matcher_would_find(claim: list[str], aligned: list[str]) -> None:
    """one_span_apart spares most clauses the matcher: it must pass every pair the matcher finds one replaced
    span of at most SWAP_MAX_TOKENS apart (it may pass others: the matcher decides)."""
    changes = [op for op in SequenceMatcher(None, claim, aligned, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(changes) == 1 and changes[0][0] == "replace":
        _, i1, i2, j1, j2 = changes[0]
        if max(i2 - i1, j2 - j1) <= SWAP_MAX_TOKENS:
            assert one_span_apart(claim, aligned)
    assert one_span_apart(list("abcxyz"), list("abcqz")) and not one_span_apart(list("abcdefgh"), list("xbcdefgy"))


def test_a_reason_is_the_same_whatever_the_hash_seed() -> None:
    """Quantities are sets: a reason that named the first in a set's order changed from process to process."""
    script = (
        "from prometheus_client import CollectorRegistry\n"
        "from ragpulse.collector.events import Chunk, TraceEvent\n"
        "from ragpulse.judging.local_judge import LocalJudge\n"
        "judge = LocalJudge(CollectorRegistry(), cache_entries=10, cache_max_bytes=10**6)\n"
        "print(judge.judge(TraceEvent(trace_id='t', query='How long do returns take?', answer="
        "'Returns take 14 days, 3 hours or 2 weeks and cost $5 or $7.', chunks=[Chunk(text="
        "'Returns take 30 days, 5 hours or 6 weeks and cost $9 or $12.')])).claims[0].reason)\n"
    )
    reasons = {subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONHASHSEED": str(seed)},
                              capture_output=True, text=True, check=True).stdout.strip() for seed in (1, 2, 3, 4)}
    assert reasons == {'says 180 minutes (duration) where the context says 300 minutes (duration), 43200 minutes '
                       '(duration), 60480 minutes (duration) (context: "Returns take 30 days, 5 hours or 6 weeks and '
                       'cost $9 or $12")'}
