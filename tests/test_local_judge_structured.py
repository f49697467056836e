"""*-q43*'s reading: an answer given as a JSON document (structured outputs, function calling) read as what the user is
told (scorers/structured_output.py). Keys, syntax, ids, codes and scores are no words; a document that declines by
itself ("answerable": false, "answer": null, a status of unanswerable, "needs_human": true, a hand-off tool call) with
no claim of its own is a refusal; an ordinary answer in JSON is judged as its told text, an invented claim still
flagged; an answer that merely holds braces stays as written. Each refusal below was a claim or a judged
hallucination before the reading."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, judged, refused
from test_local_judge_refusal_sets import KNOWLEDGE

from ragpulse.scorers.structured_output import Told, told

pytestmark = pytest.mark.unit


def test_told_text_and_declines() -> None:
    assert told('```json\n{"answer": null, "citations": [], "confidence": "low", "reason": "NO_CONTEXT", "message": '
                '"Not in my sources."}\n```') == Told("Not in my sources.", '"answer": null')
    assert told('{"reply": "Yes, we do.", "follow_up_questions": ["Anything else?"]}') == Told("Yes, we do.", None)
    # a short value of a content field keeps its key; a label of a format field does not speak
    assert told('{"免息分期门槛": "订单满500元", "reason": "分期说明"}') == Told("免息分期门槛：订单满500元", None)
    assert told('{"payment_methods": ["Visa", "PayPal"], "status": "ok"}') == Told("payment methods: Visa, PayPal", None)
    assert told('{"name": "transfer_to_agent", "arguments": {"summary": "Asks about refunds."}}') == Told(
        "", "a tool call that hands the question on (transfer_to_agent)")
    assert told('{"name": "lookup_order", "arguments": {"order_id": "A-17"}}') == Told("", None)


@pytest.mark.parametrize(("question", "answer", "chunk"), [
    ("Does the loan phone cost anything?", '{"answerable": false, "explanation": "Loan phone charges sit with the '
     'service desk."}', "repair"),
    ("Does the loan phone cost anything?", '{"can_answer": false, "message": "The service desk sets out loan phone '
     'charges when you book in."}', "repair"),
    ("Can I return a opened blender?", '```json\n{\n  "status": "out_of_scope",\n  "message": "Small kitchen '
     'appliances are a question for our returns colleagues."\n}\n```', "returns"),
    ("Can I combine two gift cards?", 'Here is the JSON:\n{"response": "Merging gift card balances is for the gift '
     'card team to decide.", "needs_human": true, "reason": "gift_card_merge"}', "gift"),
    ("Is the Berlin store open on public holidays?", '{"name": "escalate_to_human", "arguments": {"summary": "Customer '
     'asks whether the Berlin store opens on holidays; holiday hours are not in the store page."}}', "stores"),
    ("Do points expire?", '{"function_call": {"name": "open_support_ticket", "arguments": "{\\"queue\\": \\"loyalty\\",'
     ' \\"description\\": \\"Member asks about point expiry, not covered by the loyalty terms.\\"}"}}', "loyalty"),
    ("积分会过期吗？", '{"tool_calls": [{"function": {"name": "transfer_to_human", "arguments": "{\\"summary\\": '
     '\\"\\\\u7528\\\\u6237\\\\u8be2\\\\u95ee\\\\u79ef\\\\u5206\\\\u8fc7\\\\u671f\\\\u65f6\\\\u95f4\\\\uff0c'
     '\\\\u8f6c\\\\u4f1a\\\\u5458\\\\u4e13\\\\u5458\\\\u3002\\"}"}}]}', "zh_points"),
    ("发票能开公司抬头吗？", '以下是JSON：\n{"status": "declined", "message": "开票抬头的事宜请由财务同事为您处理。"}', "zh_invoice"),
    ("维修能加急吗？", '"{\\"answer\\": \\"\\", \\"needs_human\\": true, \\"note\\": \\"加急维修是否可行，'
     '由服务中心来判断。\\"}"', "zh_repair"),
])
def test_a_document_that_declines_and_claims_nothing_is_a_refusal(question: str, answer: str, chunk: str) -> None:
    assert refused(judged(question, answer, KNOWLEDGE[chunk]))


@pytest.mark.parametrize(("question", "answer", "chunk", "claims"), [
    ("How long do I have to return unopened items?", '{"answer": "Unopened items can be returned within 30 days", '
     '"citations": ["returns"], "confidence": 0.91}', "returns", ["Unopened items can be returned within 30 days"]),
    ("How much is express shipping?", '```json\n{"reply": "Express shipping costs $12.99.", "follow_up_questions": '
     '["Do you want the standard rates too?"]}\n```', "shipping", ["Express shipping costs $12.99"]),
    ("加急快递多少钱？", '{"answer": "\\u987a\\u4e30\\u52a0\\u6025\\u9700\\u53e6\\u4ed815\\u5143\\u3002", '
     '"citations": ["zh_shipping"]}', "zh_shipping", ["顺丰加急需另付15元"]),
])
def test_an_ordinary_json_answer_is_judged_as_its_told_text(question: str, answer: str, chunk: str,
                                                           claims: list[str]) -> None:
    result = judged(question, answer, KNOWLEDGE[chunk])
    assert [(c.claim, c.verdict) for c in result.claims] == [(claim, "supported") for claim in claims]
    assert (result.refusal, result.hallucination) == (False, False)


@pytest.mark.parametrize(("question", "answer", "chunk", "claim"), [
    ("How long are gift cards valid?", '{"answer": "Gift cards are valid for 10 years.", "citations": ["gift"]}',
     "gift", "Gift cards are valid for 10 years"),
    # a partial: the document declines a part ("needs_human"), its claim is still judged
    ("How long does a screen repair take?", '{"response": "Screen repairs take 2 business days.", "needs_human": true, '
     '"reason": "Repair pricing is not in the service terms I have."}', "repair", "Screen repairs take 2 business days"),
])
def test_an_invented_claim_in_json_is_still_flagged(question: str, answer: str, chunk: str, claim: str) -> None:
    result = judged(question, answer, KNOWLEDGE[chunk])
    assert [(c.claim, c.verdict in FAULTS) for c in result.claims][:1] == [(claim, True)]
    assert (result.refusal, result.hallucination) == (False, True)


def test_a_json_answer_is_judged_as_its_prose() -> None:
    """A partial in JSON and the same text in prose: the same claims, verdicts and answer verdict."""
    document = ('{"answer": "Members earn 1 point per dollar spent.", "unanswered": "Moving points between accounts is '
                'not mentioned in my sources.", "citations": ["loyalty"], "confidence": 0.8}')
    prose = "Members earn 1 point per dollar spent.\nMoving points between accounts is not mentioned in my sources."
    structured, plain = (judged("How do points work?", a, KNOWLEDGE["loyalty"]) for a in (document, prose))
    assert [(c.claim, c.verdict) for c in structured.claims] == [(c.claim, c.verdict) for c in plain.claims] == [
        ("Members earn 1 point per dollar spent", "supported")]
    assert (structured.hallucination, structured.refusal) == (plain.hallucination, plain.refusal) == (False, False)


def test_an_answer_that_only_holds_braces_is_not_read() -> None:
    """Prose, code, a template's placeholder, a document with more prose around it than a line, a list: as written."""
    held = ("Returns are free within 30 days.", "Use the template Dear {{customer_name}}, your order ships today.",
            "Call it as `config = {\"retries\": 3}` and then restart the service.\nThat resets the client.",
            "Prices {shown below} include tax.",
            "First paragraph.\nSecond paragraph.\n{\"answer\": \"Not a document: two lines of prose lead it.\"}",
            '{"answer": "yes"} and then some more text follows it.\nAnd another line.', "[1, 2, 3]")
    assert [told(answer) for answer in held] == [None] * len(held)
