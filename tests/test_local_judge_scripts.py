"""Chinese in either script, and Cantonese negation (claims.v11): the analysis reads every CJK character in its
Simplified form (scorers/cjk_simplified.py, OpenCC's t2s character by character), so that a Traditional answer
shares its terms with a Simplified context, and reads 唔 and 冇 (Cantonese 不 and 没) and Traditional 無 and 沒 as
negators. Each judgment test fails on claims.v10, which read 我們 and 我们 as different terms and 唔 as a content
character."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.judging.verdicts import Judgment
from ragpulse.scorers.cjk_simplified import SIMPLIFIED
from ragpulse.scorers.lexical import units
from ragpulse.scorers.text import clause, question_terms

SHIPPING = "我们配送到韩国和日本。"
RETURNS = "香港可以退货，七天内免费。"


def judged(question: str, answer: str, *chunks: str) -> Judgment:
    local = LocalJudge(CollectorRegistry(), cache_entries=100, cache_max_bytes=10_000_000)
    return local.judge(TraceEvent(trace_id="t", query=question, answer=answer, chunks=[Chunk(text=t) for t in chunks]))


def unsupported(judgment: Judgment) -> str:
    """The model's probability as the reason gives it: equal for two answers read alike."""
    return judgment.groundedness_reason.split("p(unsupported)=")[1].split(",")[0]


@pytest.mark.unit
def test_the_table_is_t2s_character_by_character() -> None:
    assert [SIMPLIFIED.get(c) for c in "們國灣無沒係後週萬"] == list("们国湾无没系后周万")
    assert all(c not in SIMPLIFIED for c in "我们国唔冇嘅")  # Simplified and Cantonese characters stay


@pytest.mark.unit
def test_a_traditional_answer_over_a_simplified_chunk_and_the_reverse_are_supported() -> None:
    # claims.v10: "40% of its 5 terms are in the context" (uncertain); the reverse 50%
    traditional = judged("可以配送到韩国吗？", "可以，我們配送到韓國", SHIPPING)
    assert [(c.claim, c.verdict) for c in traditional.claims] == [("我們配送到韓國", "supported")]  # past "可以，"
    # the claim and the context are quoted as written: only the analysis reads them in Simplified
    assert traditional.claims[0].reason == '100% of its terms are in the context (context: "我们配送到韩国和日本")'
    simplified = judged("可以配送到韓國嗎？", "可以，我们配送到韩国", "我們配送到韓國和日本。")
    assert simplified.claims[0].reason == '100% of its terms are in the context (context: "我們配送到韓國和日本")'
    assert not traditional.hallucination and not simplified.hallucination
    assert unsupported(traditional) == unsupported(judged("可以配送到韩国吗？", "可以，我们配送到韩国", SHIPPING))


@pytest.mark.unit
def test_a_traditional_claim_the_chunk_does_not_support_is_still_flagged() -> None:
    place = judged("可以配送到哪裡？", "我們也配送到新加坡。", SHIPPING)
    assert place.hallucination and [c.verdict for c in place.claims] == ["not_in_context"]
    assert place.claims[0].reason == 'the context does not mention 新加坡 (context: "我们配送到韩国和日本")'
    fee = judged("運費多少？", "運費是五十元。", "运费是二十元。")
    assert fee.hallucination and [c.verdict for c in fee.claims] == ["contradicted"]
    # claims.v10: "50 (cny) is not in the context", 運費 not read as 运费
    assert fee.claims[0].reason == 'says 50 (cny) where the context says 20 (cny) (context: "运费是二十元")'


@pytest.mark.unit
@pytest.mark.parametrize(("answer", "mandarin"), [
    ("香港冇得退貨。", "香港没得退货。"),
    ("香港暫時唔可以退貨。", "香港暂时不可以退货。"),
    ("香港無得退貨。", "香港无得退货。"),
    ("香港沒有退貨服務。", "香港没有退货服务。"),
])
def test_a_cantonese_or_traditional_negation_contradicts_an_affirmative_chunk_as_mandarin_does(
        answer: str, mandarin: str) -> None:
    said, twin = judged("香港可以退貨嗎？", answer, RETURNS), judged("香港可以退货吗？", mandarin, RETURNS)
    assert [c.verdict for c in said.claims] == [c.verdict for c in twin.claims] == ["contradicted"]
    assert said.claims[0].reason == 'the context says the opposite (context: "香港可以退货")'
    assert unsupported(said) == unsupported(twin)


@pytest.mark.unit
def test_a_cantonese_negation_agrees_with_a_negative_chunk() -> None:
    for answer in ("台灣暫時唔寄。", "台灣暫時冇得寄。"):
        agreed = judged("台灣可以寄嗎？", answer, "台湾暂时不寄，其他地区正常发货。")
        assert [c.verdict for c in agreed.claims] == ["supported"] and not agreed.hallucination, answer


@pytest.mark.unit
@pytest.mark.parametrize(("text", "negated"), [
    ("台灣暫時唔寄", True), ("香港冇得退", True), ("香港無得退", True), ("沒有運費", True), ("唔係免費", True),
    ("呢款手機支援無線充電", False),  # 無線 wireless, read as 无线
    ("無論任何原因都可以退貨", False), ("唔該晒", False), ("唔好意思，要等三日", False), ("唔單止香港，澳門都得", False),
    ("唔係，我哋有得退", False),  # a leading "No," answers a question
])
def test_cantonese_and_traditional_negators_and_the_words_that_only_hold_one(text: str, negated: bool) -> None:
    assert clause(text).negated is negated


@pytest.mark.unit
def test_both_scripts_have_the_same_terms_units_and_question_terms() -> None:
    traditional, simplified = clause("運費兩週內退還，無線耳機除外"), clause("运费两周内退还，无线耳机除外")
    assert (traditional.terms, traditional.quantities, traditional.negated) == (
        simplified.terms, simplified.quantities, simplified.negated)
    assert traditional.text == "運費兩週內退還，無線耳機除外"
    assert units("我們配送到韓國").words == units("我们配送到韩国").words
    assert question_terms("運費多少？") == question_terms("运费多少？") == frozenset({"运", "费"})
