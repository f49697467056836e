"""*-q38*'s reading: an enterprise RAG assistant held to a markdown answer template, read by construction, not phrasing
(scorers/templates.py). A format field's label is no claim, its value read as a sentence of its own; a metadata field
(sources, confidence, status, a ticket) says nothing of the world; the answer field's value that declines ("Not
available", "Cannot be determined", 暂无, 无从确认) is a refusal; the assistant in the third person declining ("The
assistant is not able to confirm …", 本助手无法确认…) and the retrieval named as the gap ("not answerable from the retrieved
material", 不在本次检索结果之中) refuse wherever they are said. Each refusal below was a claim or a judged hallucination
before; a content label ("Return window: 30 days", 退货期限：30天) and an answer field that answers stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import judged, refused
from test_local_judge_hand_overs import REPAIRS, RETURNS, ZH_INVOICE, ZH_RETURNS


pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("question", "answer", "context"), [
    # a template's labels and metadata, the answer field's value declining
    ("Can I return a used blender?", "**Answer:** Not available.\n**Sources:** —\n**Confidence:** low", RETURNS),
    ("Can I return a used blender?", "Answer: Undetermined.\nConfidence: 0.2\nStatus: routed to an agent", RETURNS),
    ("Can I return a used blender?", "```\nanswer: unavailable\nescalation: RET-L1\nconfidence: 0.1\n```", RETURNS),
    ("Can I return a used blender?", "**Final answer:** Cannot be determined from the documents.\n**Citations:** none",
     RETURNS),
    ("Can I return a used blender?", "### Summary\nInsufficient evidence to answer.\n**Sources:** n/a", RETURNS),
    ("Can I return a used blender?", "**Answer:** TBD — pending review by the returns team.\n**Status:** open", RETURNS),
    ("Can I return a used blender?", "**Answer:** Unable to confirm for a used blender.\n**Details:**\n- The retrieved "
     "passages only cover opened electronics.\n**Sources:** [1] (partial)", RETURNS),
    ("耳机可以换货吗？", "**答复：** 暂无\n**来源：** 无\n**置信度：** 低", ZH_RETURNS),
    ("纸质发票能开专票吗？", "**结论：** 待人工确认。\n**引用：** 无", ZH_INVOICE),
    # the assistant in the third person
    ("Is a loan phone available during repairs?", "The assistant is not able to confirm loan phones.", REPAIRS),
    ("Is a loan phone available during repairs?", "This assistant won't estimate a repair's cost.", REPAIRS),
    ("Is a loan phone available during repairs?", "**Answer:** Loan phones are not something this assistant can confirm.",
     REPAIRS),
    ("Is a loan phone available during repairs?", "Loan phones are outside what this assistant is able to confirm.",
     REPAIRS),
    ("Is a loan phone available during repairs?", "The assistant makes no commitment on loan phones.", REPAIRS),
    ("纸质发票能开专票吗？", "**答复：** 本助手不对专票开具作出判断。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "专票开具超出本助手权限。", ZH_INVOICE),
    # the retrieval named as the gap
    ("Is a loan phone available during repairs?",
     "The retrieved articles cover screen repairs only; neither mentions loan phones.", REPAIRS),
    ("Is a loan phone available during repairs?", "Loan phones: not answerable from this retrieval set.", REPAIRS),
    ("Is a loan phone available during repairs?",
     "The retrieved passage fell below the relevance threshold, so it was not used.", REPAIRS),
    ("纸质发票能开专票吗？", "检索到的片段均未提及专票。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "专票的开具条件在检索范围之外。", ZH_INVOICE),
    ("纸质发票能开专票吗？", "两段检索内容均与专票无关。", ZH_INVOICE),
])
def test_a_template_declining_claims_nothing(question: str, answer: str, context: str) -> None:
    assert refused(judged(question, answer, context))


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # the answer field that answers, a content label, a detail's own label: claims
    ("Can I return opened headphones?", "**Answer:** Returns are free within 30 days.\n**Sources:** [1]", RETURNS,
     ["Returns are free within 30 days"]),
    ("Can I return opened headphones?", "Return window: 30 days", RETURNS, ["Return window: 30 days"]),
    ("Can I return opened headphones?", "**Details:**\n- Unopened items: 30 days\n**Confidence:** high", RETURNS, ["Unopened items: 30 days"]),
    ("耳机可以退货吗？", "退货期限：30天", ZH_RETURNS, ["退货期限：30天"]),
    ("耳机可以退货吗？", "**答复：** 已拆封的耳机可在14天内退货。\n**来源：** [1]", ZH_RETURNS, ["已拆封的耳机可在14天内退货"]),
    # the assistant or the retrieval named, nothing declined
    ("Is a loan phone available during repairs?", "The assistant does not charge for screen repairs.", REPAIRS,
     ["The assistant does not charge for screen repairs"]),
    ("纸质发票能开专票吗？", "本助手不收取开票费用。", ZH_INVOICE, ["本助手不收取开票费用"]),
    ("Can I return opened headphones?", "Retrieved items are refunded within 5 days.", RETURNS,
     ["Retrieved items are refunded within 5 days"]),
])
def test_a_claim_that_looks_like_a_template_declining_stays_a_claim(question: str, answer: str, context: str,
                                                                    claims: list[str]) -> None:
    assert [c.claim.strip() for c in judged(question, answer, context).claims] == claims

