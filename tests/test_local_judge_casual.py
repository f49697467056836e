"""*-q41*'s reading: a chatbot told to talk like its young audience, read by construction, not phrasing
(scorers/casual.py). An emoji, an emoticon or a tilde after Chinese before more words ends a sentence, so a claim before
"🙏 x tho? no clue" stays a claim (it was read with the question after it, and the whole answer as a refusal); chat's
tags and intensifiers ("ngl", "lowkey", "bestie", "sooo", xswl, 家人们) are no words of a claim; a bare decline after a
matter named ("the box question idk"), the speaker's own state of lacking or being unable whatever the metaphor ("i'm
stuck on that", "my brain's buffering", "out of my depth", "not the one to ask", "a call i won't make", "a level i never
unlocked", "nothing on my side covers it"), the matter said not to be the speaker's ("not my thing", "isn't in my
playbook", "a secret to me", "off limits for me", "uncharted for me"); the referral in text-speak ("hmu", "X got u", "X is
who u want", "X is the move") and sympathy beside a refusal are no claims; in Chinese holding back from saying at random
(不敢瞎说, 就不乱讲了), the speaker giving up (摆烂, 交白卷), 超纲, 给不出答案, a topic with a particle (这事儿嘛). Each refusal
below was a claim, a judged hallucination or unrecognised at 1f83ece; the look-alikes stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, judged, refused
from test_local_judge_hand_overs import REPAIRS, RETURNS, ZH_INVOICE, ZH_RETURNS
from test_local_judge_small_models import SHIPPING, WARRANTY

from ragpulse.scorers.refusal import read

pytestmark = pytest.mark.unit

LOYALTY = "Members earn 1 point per dollar spent. 100 points can be redeemed for a $5 voucher."


@pytest.mark.parametrize(("question", "answer", "context"), [
    # the speaker's own state, whatever the metaphor, and text-speak referrals beside it
    ("Can I return a gift without a receipt?", "receipts?? i'm kinda stuck on this one 😵 hmu the returns desk", RETURNS),
    ("Do points expire?", "point expiry... my head is blanking on that one, the loyalty crew is who u want", LOYALTY),
    ("Can I insure my order?", "order insurance?? tbh i'm out of my league there, the order desk got u", SHIPPING),
    ("Is a water-damaged phone repairable?", "water damage ugh 😭 i'm not the right person to ask fr, the service "
     "centre is the move", REPAIRS),
    ("Can I get a refund on a used laptop?", "used laptop refunds?? that's a call i can't make, the returns desk is the "
     "move", RETURNS),
    ("Do you sell extended warranties?", "extended plans? that's a level i never unlocked lol, the warranty desk has "
     "the deets", WARRANTY),
    # the matter said not to be the speaker's
    ("Can I combine two vouchers?", "voucher stacking is sooo not my department bestie :/ the loyalty crew is who u "
     "want", LOYALTY),
    ("When is the next sale?", "the next sale date is kinda a secret to me too, follow our socials for the drop 👀",
     LOYALTY),
    ("Can you change my billing address?", "billing address changes are off limits for me ngl, account support got u 🙏",
     RETURNS),
    ("Do you ship on Sundays?", "sunday dispatch?? that's uncharted for me", SHIPPING),
    # a bare decline after a matter named, a topic with a particle
    ("Do you gift wrap?", "gift wrapping... not gonna say yes or no on that, the checkout page will show u", SHIPPING),
    ("能用数字人民币付款吗？", "数字人民币这事儿嘛…咱不敢瞎说😅 问问客服吧", ZH_RETURNS),
    # the speaker giving up, 超纲, 给不出答案
    ("耳机能以旧换新吗？", "以旧换新？救命，这个我投降了家人们，找门店问问", ZH_RETURNS),
    ("发票能开到海外公司吗？", "海外抬头这个超纲了xswl，真给不出答案，问下财务吧", ZH_INVOICE),
])
def test_a_casual_decline_claims_nothing(question: str, answer: str, context: str) -> None:
    assert refused(judged(question, answer, context))


@pytest.mark.parametrize(("question", "answer", "context", "claims"), [
    # a claim before an emoji and a declined second part: the claim is judged (it was never: the whole a refusal)
    ("Can I return opened headphones?", "opened headphones can go back within 30 days 🎧 the box question "
     "tho? no clue on that one", RETURNS, ["opened headphones can go back within 30 days"]),
    ("How many points do I earn?", "u earn 3 points per dollar ✨ gifting points? can't say tbh", LOYALTY,
     ["u earn 3 points per dollar"]),
    ("电子发票多久到？", "电子发票下单后1小时就到邮箱哈～ 纸质发票这个我答不上，问问客服？", ZH_INVOICE, ["电子发票下单后1小时就到邮箱哈"]),
    # slang around a real claim, and a claim before "no clue on the rest": claims
    ("What's the best warranty?", "lowkey the best deal: 2-year warranty on every laptop", WARRANTY,
     ["lowkey the best deal: 2-year warranty on every laptop"]),
    ("Is express shipping fast?", "ngl express shows up in 4 days, no clue on the rest", SHIPPING,
     ["express shows up in 4 days, no clue on the rest"]),
    # "no cap" on a cap is no tag
    ("Is there a limit on returns?", "there's no cap on returns, every item gets 30 days", RETURNS,
     ["there's no cap on returns, every item gets 30 days"]),
])
def test_look_alikes_stay_claims(question: str, answer: str, context: str, claims: list[str]) -> None:
    result = judged(question, answer, context)
    assert [c.claim.strip() for c in result.claims] == claims
    assert result.claims[-1].verdict in FAULTS


@pytest.mark.parametrize(("answer", "claims", "refusals"), [
    # a bare decline after a matter named (the judge weighed it as a claim), the speaker's side as its sources (a clause
    # of a refusal's shape only, the judge deciding by the context)
    ("crypto payments specifically, idk tbh", [], ["crypto payments specifically, idk"]),
    ("the gift box question idk, support can confirm", [], ["the gift box question idk, support can confirm"]),
    ("student deals 🤔 nothing on my side covers those fr", ["student deals"], ["nothing on my side covers those"]),
])
def test_a_casual_decline_is_read_as_one(answer: str, claims: list[str], refusals: list[str]) -> None:
    reading = read(answer)
    assert (reading.claims, reading.refusals) == (claims, refusals)

