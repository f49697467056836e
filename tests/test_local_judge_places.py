"""Places in Chinese claims (claims.v10): Chinese has no capital letters to tell a name, so the analysis finds the
places of scorers/cjk_places.py in a clause, and a claim naming one its context does not is flagged as an English
claim naming "Japan" is. Each of these fails on claims.v9, which read 日本 as two characters among the claim's terms."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.scorers.cjk_places import CJK_PLACES
from ragpulse.scorers.text import clause

SHIPPING = "我们配送到加拿大、墨西哥和英国。国际订单不享受免运费。"
SCOPE = "目前仅支持配送到中国大陆、香港和澳门，暂不支持海外配送。"


def judged(question: str, answer: str, *chunks: str):  # type: ignore[no-untyped-def]
    local = LocalJudge(CollectorRegistry(), cache_entries=100, cache_max_bytes=10_000_000)
    return local.judge(TraceEvent(trace_id="t", query=question, answer=answer, chunks=[Chunk(text=t) for t in chunks]))


@pytest.mark.unit
@pytest.mark.parametrize(("text", "names"), [
    ("我们配送到加拿大、墨西哥和日本。", ["加拿大", "墨西哥", "日本"]),
    ("我們配送到韓國和臺灣。", ["台湾", "韩国"]),  # a Traditional form is its Simplified name
    ("港澳台地区订单需额外支付运费", ["台湾", "澳门", "香港"]),  # a short form names each place
    ("内蒙古和新疆不包邮", ["内蒙古", "新疆", "蒙古"]),  # overlapping forms both
    ("开封后不能退货，大同小异", []),  # 开封 "opened" and 大同 are words first: no places here
    ("iPhone在日本卖得好", ["iphon", "日本"]),  # with a Latin name (stemmed), as before
])
def test_a_chinese_clause_holds_the_places_it_names(text: str, names: list[str]) -> None:
    assert sorted(clause(text).names) == sorted(names)


@pytest.mark.unit
def test_every_written_form_stands_for_places_of_the_table() -> None:
    canonical = {names[0] for form, names in CJK_PLACES.items() if len(names) == 1 and form == names[0]}
    assert all(set(names) <= canonical for names in CJK_PLACES.values())
    assert (CJK_PLACES["韓國"], CJK_PLACES["臺灣"], CJK_PLACES["港澳"]) == (["韩国"], ["台湾"], ["香港", "澳门"])


@pytest.mark.unit
def test_a_place_the_context_does_not_name_makes_the_claim_not_in_the_context() -> None:
    wrong = judged("可以配送到哪些国家？", "关税我不清楚，不过我们也支持配送到新加坡和日本。", SHIPPING)
    assert wrong.hallucination and [c.verdict for c in wrong.claims] == ["not_in_context"], wrong.groundedness_reason
    assert "the context does not mention 新加坡, 日本" in wrong.claims[0].reason
    right = judged("可以配送到哪些国家？", "我们配送到加拿大、墨西哥和英国。", SHIPPING)
    assert not right.hallucination and [c.verdict for c in right.claims] == ["supported"], right.groundedness_reason


@pytest.mark.unit
def test_a_place_in_another_form_or_a_short_form_is_named_by_the_context() -> None:
    traditional = judged("可以配送到哪里？", "我們支援配送到香港和澳門。", SCOPE)
    assert not any("does not mention" in c.reason for c in traditional.claims), traditional.groundedness_reason
    grouped = judged("香港要运费吗？", "香港地区订单需要额外运费。", "港澳台地区订单需额外支付运费。")
    assert not grouped.hallucination and [c.verdict for c in grouped.claims] == ["supported"], grouped.groundedness_reason


@pytest.mark.unit
def test_a_negated_claim_about_a_place_outside_the_contexts_list_agrees_with_it() -> None:
    """"新加坡不在配送范围内" over a context that lists where it ships: the list holds the others out. Over a context
    that names no place, the place is still one the context does not mention."""
    listed = judged("能寄新加坡吗？", "新加坡不在配送范围内。", SCOPE)
    assert not listed.hallucination and not any("does not mention" in c.reason for c in listed.claims), listed.groundedness_reason
    unlisted = judged("新疆包邮吗？", "新疆不包邮。", "偏远地区不包邮。")
    assert "the context does not mention 新疆" in unlisted.claims[0].reason
