"""*-q32*'s reading: refusals in the registers a support line's assistants speak in, each a construction, not a phrasing.
A plain-language assistant explains the word asked about before it declines; a marketplace seller's bot introduces
itself; a lookup fails or times out; the speaker will not guess at it ("not one I'm going to guess at", "than have me
guess"); a table's or a list's label is the topic of the refusal in its cell; a ticketing macro keeps its template's
placeholder; a Chinese answer names the matter and the team in English words; a voice line's transcript runs without
punctuation and connects the caller. Each refusal below was a claim, and most answers hallucinations, before it; the
claims beside such lines stay claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.local_judging import judged

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data"
DEVELOPMENT = {row["id"]: row for row in map(json.loads, (DATA / "refusals_dev.jsonl").read_text(encoding="utf-8").splitlines())}
KNOWLEDGE = json.loads((DATA / "refusals_kb.json").read_text(encoding="utf-8"))

WARRANTY = "All laptops come with a 1-year limited warranty. Accidental damage is not covered by the standard warranty."
RETURNS = "Unopened items can be returned within 30 days of delivery for a full refund."
STORES = "Our Berlin store is open Monday to Saturday, 10:00 to 20:00."
POINTS = "会员每消费1元积1分，积分有效期为两年。"
INVOICES = "电子发票将在订单完成后发送至您的邮箱。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    # the word asked about explained first, in plain language
    ("How long is the warranty on a laptop?", "Thanks for your question. A warranty is a promise to repair a product "
     "that breaks. I am not allowed to give warranty answers. A person from our team can help.", WARRANTY),
    ("Can I get a refund?", 'Hello. "Refund" means getting your money back. I cannot advise on refunds. Please ask a '
     "person on our team.", RETURNS),
    ("积分可以兑换现金吗？", "您好。“兑换”就是用一样东西换另一样东西。这个问题我不能回答您。请您问一下人工客服。", POINTS),
    # a seller's bot that introduces itself and hands the question on
    ("Can I return opened headphones?", "Hi! I'm the virtual assistant for Harbour Sound, a seller on this marketplace. "
     "Returns are outside what I'm set up to cover, so please use the marketplace's help centre.", RETURNS),
    ("Is the warranty longer for business customers?", "This is the automated helper for Brightline Tech. I'd like the "
     "seller's warranty team to handle that one personally. Tap 'Message seller' on your order.", WARRANTY),
    # a lookup that failed or timed out, and the asker told to try again
    ("Is the Berlin store open on Sunday?", "I tried to look up the store's holiday hours, but the request timed out. "
     "Could you try again in a few minutes?", STORES),
    ("How long do refunds take?", "I went to fetch the refund rules, but the search returned an error. If it keeps "
     "failing, the support desk can take it from there.", RETURNS),
    ("积分多久过期？", "刚才查询积分规则的时候系统出错了，暂时查不了。麻烦您过一会儿再试一次。", POINTS),
    # not to be guessed at, without a verb of not knowing
    ("Does the warranty cover a cracked screen?", "Good question, and not something I'm going to guess at. Warranty "
     "claims are worth getting right, so please check with our repair team.", WARRANTY),
    ("Can I return a gift?", "Returning a gift is a tricky one, and I'd rather our returns team looked at it than have "
     "me guess. Want me to open a request for you?", RETURNS),
])
def test_a_refusal_in_a_registers_own_words_claims_nothing(question: str, answer: str, context: str) -> None:
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("question", "answer", "context"), [
    # a table's and a list's labels, their cells declining
    ("Is accidental damage covered, and what would a repair cost?", "| Your question | Where I stand |\n|---|---|\n"
     "| Accidental damage cover | Not something I'll confirm |\n| Repair price | Not something I'll estimate |", WARRANTY),
    ("Can I return an opened item?", "- **Opened items:** not something I'm able to confirm\n- **Next step:** a "
     "customer service agent can give you an answer", RETURNS),
    # a ticketing macro: its template's placeholder line, an escalation
    ("发票什么时候发？", "[Macro: FP-CN-02]\n亲，您好！您咨询的发票问题已为您升级至财务专员，专员会在工单内回复您，请耐心等待～\n"
     "Ref: #{{case_id}}", INVOICES),
    # English words in a Chinese refusal: the matter at hand and the team to ask
    ("积分 transfer 给家人可以吗？", "这个 case 有点复杂，积分转让我不想随便回答，建议跟 support team 确认一下哦。", POINTS),
    # a voice line's transcript without punctuation that connects the caller
    ("um how long is the warranty on a laptop", "okay you're asking about laptop warranty uh that's something an agent "
     "will need to go over with you I'm connecting you now please hold", WARRANTY),
    ("喂 我想问下 积分 会过期吗", "好的 关于积分是否过期 呃 我这边为您转接人工服务 请不要挂机", POINTS),
])
def test_a_refusal_in_a_form_or_a_transcript_claims_nothing(question: str, answer: str, context: str) -> None:
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # a definition of the shop's own ("The warranty is …"), a label whose value answers, a claim after a failed lookup
    ("The warranty is a promise to repair laptops for 2 years. I can't advise on claims.",
     ["The warranty is a promise to repair laptops for 2 years"]),
    ("- **Accidental damage:** covered for 2 years\n- **Repair price:** not something I'll estimate",
     ["- **Accidental damage:** covered for 2 years"]),
    ("The lookup timed out, but accidental damage is covered for two years.", ["but accidental damage is covered for two years"]),
    # and a bot's introduction where nothing refuses: read as before
    ("I'm the assistant for Harbour Sound. Accidental damage is covered for 2 years.",
     ["I'm the assistant for Harbour Sound", "Accidental damage is covered for 2 years"]),
])
def test_claims_beside_such_lines_stay_claims(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("Is accidental damage covered?", answer, WARRANTY).claims] == claims


@pytest.mark.parametrize(("answer", "claims"), [
    # a Chinese claim's English words name what it says (not the matter at hand after 这个)
    ("积分只能 transfer 给 family member，我没法确认。", ["积分只能 transfer 给 family member"]),
    ("积分有效期是三年，这个 case 我不好说。", ["积分有效期是三年"]),
])
def test_a_chinese_claims_english_words_stay_its_claim(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("积分可以转让吗？", answer, POINTS).claims] == claims


@pytest.mark.parametrize("row", [
    # judged hallucinations frozen: the word explained first, a seller's bot, a failed lookup, guessing declined, a
    # list's and a table's labels, a transcript without punctuation, a macro, English words in Chinese
    "en-refusal-q3203", "en-refusal-q3205", "en-refusal-q3206", "en-refusal-q3208", "en-refusal-q3212",
    "en-refusal-q3214", "en-refusal-q3215", "en-refusal-q3220", "en-refusal-q3221", "en-refusal-q3224",
    "en-refusal-q3226", "en-refusal-q3227", "en-refusal-q3228", "en-refusal-q3229",
    "zh-refusal-q3206", "zh-refusal-q3218", "zh-refusal-q3221", "zh-refusal-q3229",
    # not recognised frozen, not hallucinations: 查不了 after 接口报错, 不好乱说 beside 牵涉到钱的事, 已帮您记录下来, a voice
    # line's 转驳 and 转接, a macro's 升级至售后专员 and Ref line, the word explained first
    "zh-refusal-q3207", "zh-refusal-q3208", "zh-refusal-q3212", "zh-refusal-q3213", "zh-refusal-q3215",
    "zh-refusal-q3223", "zh-refusal-q3224", "zh-refusal-q3225",
])
def test_q32s_missed_refusal_over_its_own_chunks(row: str) -> None:
    """*-q32*'s refusals its measurement missed (34 of 60 recognised frozen), once read: refusals, never
    hallucinations."""
    written = DEVELOPMENT[row]
    result = judged(written["q"], written["a"], *(KNOWLEDGE[key] for key in written["chunks"]))
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason
