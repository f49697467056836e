"""*-q44*'s reading: an agent-assist copilot's output read as what the customer is told plus the agent's guidance, by
construction (scorers/copilot.py). A draft reply's label and an instruction to tell ("Tell the customer …", 请告知客户)
are blanked, what they tell stays a claim; the agent's notes, metadata lines, guidance about the conversation and
knowledge-gap notes claim nothing: an answer of these only is a refusal. None of these sentences is taken from the
blind set; each refusal below was read with claims before."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, judged, refused, verdicts
from test_local_judge_hand_overs import REPAIRS, RETURNS, ZH_RETURNS

from ragpulse.scorers.copilot import is_copilot

pytestmark = pytest.mark.unit

BATTERY = "How long does a laptop battery replacement take?"
ZH_EXCHANGE = "耳机可以换货吗？"


@pytest.mark.parametrize(("question", "answer", "context"), [
    # the agent's note, a routing move and a disposition
    (BATTERY, "Agent note: don't promise a completion date.\nTransfer to the Service Centre (queue SVC).\n"
              "Disposition: REP-TRANSFER", REPAIRS),
    # a knowledge-gap note and guidance, no label
    (BATTERY, "No KB article covers battery swaps. Hold off on any estimate and route to Tier 2 Repairs.", REPAIRS),
    (BATTERY, "KB coverage: none for loan laptops.\nOffer a warm transfer to the repairs desk; log the call as REP-LOAN.",
     REPAIRS),
    # a hand-off told, macro and confidence lines
    (BATTERY, "Let the customer know a repairs specialist will follow up by email.\nUse macro: REP-11\nConfidence: 0.18",
     REPAIRS),
    (BATTERY, "Internal: battery swaps aren't documented yet. Don't estimate a turnaround; send it to the repairs desk.",
     REPAIRS),
    (BATTERY, "Next best actions\n1. Confirm the serial number with the customer.\n2. Escalate to the repairs desk and do "
              "not commit to a date.\n3. Tag the case REP-BATT.", REPAIRS),
    # Chinese: the agent's note, a gap, a routing move, metadata
    (ZH_EXCHANGE, "坐席提示：换货时效知识库条目缺失，请勿自行承诺。\n处置码：RET-转售后", ZH_RETURNS),
    (ZH_EXCHANGE, "坐席备注：换货运费规则无对应条目，一线别表态，升级至二线售后。", ZH_RETURNS),
    (ZH_EXCHANGE, "知识库匹配度：0.19。换货问题请升级至二线售后组，由售后组回复客户。", ZH_RETURNS),
])
def test_a_copilots_guidance_claims_nothing(question: str, answer: str, context: str) -> None:
    assert refused(judged(question, answer, context))


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # told to the customer: a claim, judged
    ("Can I return opened headphones?", "Tell the customer returns are free for 60 days.", RETURNS,
     ["returns are free for 60 days"]),
    ("耳机可以退货吗？", "请告知客户：已拆封的耳机可在60天内退货。\n坐席提示：运费规则请勿承诺。", ZH_RETURNS,
     ["已拆封的耳机可在60天内退货"]),
    # a claim about the world in the agent's note, an instruction with a number or a reason of its own
    ("How long does an escalation take?", "Agent note: Escalation to Tier 2 takes 48 hours.", REPAIRS,
     ["Escalation to Tier 2 takes 48 hours"]),
    ("Can I return opened headphones?", "Escalate to Tier 2 if the order is over $500.", RETURNS,
     ["Escalate to Tier 2 if the order is over $500"]),
    ("Can I get a loan phone?", "Escalate to the repairs desk, since members always get a free loan phone.", REPAIRS,
     ["Escalate to the repairs desk, since members always get a free loan phone"]),
    # a partial: the invented claim stays faulted beside the guidance
    ("How long do screen repairs take?", "Tell the customer screen repairs take 2 days.\nNo KB article covers loan phones; "
     "escalate to Tier 2.", REPAIRS, ["screen repairs take 2 days"]),
])
def test_what_a_copilot_tells_or_states_stays_a_faulted_claim(question: str, answer: str, context: str,
                                                              claims: list[str]) -> None:
    result = judged(question, answer, context)
    assert ([c.claim.strip() for c in result.claims], result.refusal) == (claims, False)
    assert verdicts(result)[0] in FAULTS


def test_a_supported_draft_beside_guidance_is_a_partial_not_flagged() -> None:
    result = judged("How long do screen repairs take?", "Suggested reply: Screen repairs take 5 to 7 business days.\n"
                    "Agent note: don't promise a loan phone; offer a transfer to the repairs desk.", REPAIRS)
    assert ([c.claim.strip() for c in result.claims], verdicts(result), result.refusal, result.hallucination) == (
        ["Screen repairs take 5 to 7 business days"], ["supported"], False, False)


@pytest.mark.parametrize(("answer", "copilot"), [
    ("Suggested reply: Thanks for waiting.", True),
    ("The bank said it would transfer to a new owner. Customers don't quote prices.", False),
    ("Analysts suggest the tier system will change.", False),
    ("会员可以享受包邮服务。", False),
    ("坐席提示：请核实订单号。", True),
])
def test_the_gate_reads_only_a_copilots_register(answer: str, copilot: bool) -> None:
    assert is_copilot(answer) is copilot
