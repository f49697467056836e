"""The local judge's refusal readings, issue 44: refusals recognised by what they are (scorers/refusal.py), each
register and construction on a minimal answer, and the claims that look alike but stay claims."""

from __future__ import annotations

import pytest
from helpers.local_judging import FAULTS, judged, verdicts

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging.attribution import attribute
from ragpulse.judging.exit import build_record
from ragpulse.judging.sampler import JudgeItem
from ragpulse.scorers.refusal import read

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

# -- refusals ----------------------------------------------------------------------------------------------------

RETURNS = "Unopened items can be returned within 30 days of delivery for a full refund."


@pytest.mark.parametrize("answer", [
    "Unfortunately, our knowledge base doesn't cover that.",
    "The documents I have access to don't say anything about gift wrapping. Would you like me to connect you with an agent?",
    "I'm not sure. The context doesn't specify the battery life. Please contact our support team.",
    "知识库里查不到这方面的内容。",
    "关于学生优惠，资料里一个字都没提。",
    "这个我不清楚，建议您咨询人工客服。",
    # missed in the held-out sets *-w* and *-x*: a search that came back empty, passing on it, a reason or a channel
    # the assistant lacks, the assistant as the speaker
    "I ran a search of the help centre, but nothing came back about cancelling orders. Shall I escalate this to a human agent?",
    "Sorry, I don't have pricing for express delivery. You might want to ask our delivery team.",
    "That's a tricky one and I don't want to give you wrong info, so I'll have to pass on it. Would you like me to put you "
    "through to the warranty team?",
    "敬愛的客戶您好，有關企業採購事宜，本助理目前無相關資料可供答覆，敬請見諒。建議您洽詢業務部門。",
    "很抱歉，關於帳號綁定多個手機號碼的問題，我目前無從得知。若您需要，可以請真人客服協助。",
    "Our order tracking tool is currently unavailable, so I can't look that up for you right now. Please try again a "
    "little later, sorry for the trouble.",
    "Thank you for your enquiry. For security reasons, I am not permitted to discuss payment-related matters in this "
    "chat. Please refer to an authorised representative.",
    "Dear valued customer, we are unable to process service enquiries through this channel. Please contact us via the "
    "official service line. We thank you for your patience.",
    "I'm still learning and don't know the answer to that yet. Sorry! You can reach a human agent through the Contact "
    "page if you need it sooner.",
    "您好，您咨询的事项暂不在本平台受理范围内，建议您通过人工服务渠道进一步咨询。感谢您的理解与支持。",
    "关于贵方所询事项，本系统暂不具备答复权限，请另行联系相关部门。特此说明。",
    "您好，很抱歉给您带来不便。关于您反映的问题，智能客服暂时无法处理，您可回复“人工”转接人工坐席为您服务。",
    "尊敬的客户您好，根据相关规定，支付方式相关问题暂不支持在此渠道咨询，请您通过官方客服热线进行咨询。感谢您的来电。",
    # and in *-y*: texting without apostrophes, a persona, where to look, sympathy before the refusal
    "sorry i dont have any info on gift card validity 🙁 maybe ask at the till next time ur in store?",
    "Great question, Commander! 🎮 Sadly I don't have any intel on upcoming releases. Keep an eye on our official "
    "channels for announcements!",
    "Oh no, sorry your item arrived damaged! 😟 I'm not able to answer questions about return shipping costs, but our "
    "support team can help — just hit 'Contact us' at the bottom of the page.",
    "少侠，这个问题小精灵暂时帮不了你哦～建议你提交工单联系专属客服，麻烦动动手指啦～",
    "您好呀～关于会员价格，我这里暂时没有办法给您准确的答复哦😊 您可以在App内【我的-会员中心】查看，或者咨询在线客服~",
    # and in *-z*: a persona, the sources about other subjects, the question said back, a long span before 答复
    "Hello! I'm Lena, your store assistant. I'm really sorry, but I can't give you opening times right now. Please "
    "contact the store directly or check our website — they'll have the latest information for you. 😊",
    "I want to be upfront: the material I retrieved for this question is about different subjects, and nothing in it "
    "explains how personal data is handled after an account is closed.",
    "我查阅了本次检索到的资料，其中讨论的是其他方面的内容，并未涉及上门安装服务。为避免给您错误的信息，我就不作推测了。",
    "您好，您询问的是买到假货后的赔偿方式。很抱歉，我掌握的资料中没有这方面的内容，暂时无法回答，建议您咨询人工客服。",
    "**无法回答**\n抱歉，我不能就已拆封商品的退货问题给出答复，请您咨询售后客服。",
    # and in *-q2*: a search that found nothing, hours, a question not understood
    "I searched our help articles but didn't find anything on managing email subscriptions. Sorry about that — a "
    "support agent should be able to sort it out for you.",
    "I'm sorry, I don't have opening hours for individual stores. You may want to contact the store directly.",
    "抱歉，没有理解您的意思。请尝试换个说法，或回复“人工”联系客服。",
    "亲亲，活动信息小助手这边还没有收到哦，请您留意官方公告～",
])
def test_an_answer_that_claims_nothing_and_declines_is_a_refusal_never_a_hallucination(answer: str) -> None:
    result = judged("Do you offer gift wrapping?", answer, RETURNS)
    assert (result.refusal, result.hallucination, result.claims, result.groundedness) == (True, False, [], None)
    assert result.groundedness_verdict == "refusal" and result.groundedness_reason.startswith("a refusal")
    assert attribute(result, fallback=result.refusal) == "knowledge_gap"  # the chunk does not answer the question

GIFT_CARDS = "Gift cards are valid for 3 years from purchase and can be used online."


@pytest.mark.parametrize("answer", [
    # a chat's marks and a bot's status line: no words of a claim
    "@dani — leaving that one for a human to confirm. :wave:\n> _PolicyBot v2.3 · confidence below threshold · no answer posted_",
    # a kiosk's header and buttons around a pointer
    "[KIOSK BER-01]\nFor gift card questions please see the Customer Service desk near the entrance.\n[ Show map ]",
    # a topic owned by another team, and declining to comment
    ":no_entry_sign: Gift-card terms are owned by Finance. Not commenting — ask in #finance-questions.",
    # a hand-off with its reference, signed by an automated answerer
    "Hi Hannah,\n\nI'd rather not comment on this one myself. I've passed your message to the finance team under case "
    "RC-55102 and they will reply to this thread.\n\nBest,\nCustomer Care (automated agent)",
    "Reckon that's one to put to the finance team, mate — I'll stay out of it.",
    "您好，\n\n这个问题我这边不便下结论，已将您的问题转给售后团队（工单 WX-77210），他们会在本邮件线程中回复。\n\n客服中心（自动处理）",
])
def test_a_channels_chrome_and_a_bots_own_lines_around_a_refusal_claim_nothing(answer: str) -> None:
    """*-q28*'s registers: what a screen, a chat or a bot says around a refusal or a hand-off was judged as claims (a
    kiosk's id, a reference's digits, a signature's team) and the answer called a hallucination (the rows of *-q28*
    above hold the JSON reply that defers, 会员价格归市场部管 and 我就不代答了)."""
    result = judged("How long is a gift card valid?", answer, GIFT_CARDS)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # a line of buttons and a status line are blanked; a bracketed label before a Chinese claim is not a button
    ("[ Call a colleague ]  [ Back ]\nGift cards are valid for 3 years.", ["Gift cards are valid for 3 years"]),
    ("【保修范围】笔记本摔坏属于保修范围，一年内可以免费维修。", ["【保修范围】笔记本摔坏属于保修范围", "一年内可以免费维修"]),
    ("_Reminder: gift cards are valid for 3 years._", ["_Reminder: gift cards are valid for 3 years._"]),
    (":tada: Gift cards are valid for 3 years.", ["Gift cards are valid for 3 years"]),
])
def test_chrome_is_blanked_and_claims_are_kept(answer: str, claims: list[str]) -> None:
    assert [c.strip() for c in read(answer).claims] == claims


DAMAGED_RETURNS = "Return shipping is free for items that arrive damaged. Refunds are issued within 5 business days."


@pytest.mark.parametrize("answer", [
    # an auto-reply that cannot answer automatically, its ticket's reference in brackets, a team that will be in touch
    "Hello,\n\nThis is an automated message. Your question can't be answered automatically. Your enquiry has been "
    "recorded [ref #30917] and one of our team will be in touch shortly.\n\nKind regards,\nHelp Centre",
    "Thanks for your email. We are unable to send an automatic reply to this question; we've opened a support ticket "
    "(case 55120) for you.",
    # a question best left to a person
    "Damage claims are best checked with our returns desk, so I won't guess at it here.",
    # the same in Chinese: 本邮件 as the speaker, a reference after 编号 or 单号 in any bracket, the mail an auto-reply
    "您好！本邮件无法为您解答退货运费的问题，系统已为您生成服务单【编号 448120】，客服专员会尽快与您联系。\n\n本邮件由系统自动发送，请勿直接回复。",
    "您的问题暂时无法通过系统自动处理，因为涉及运费判定，已提交工单（单号 RT-5520），请耐心等待。",
])
def test_an_auto_reply_that_opens_a_ticket_claims_nothing(answer: str) -> None:
    """*-q29*'s registers: an e-mail auto-reply that says it cannot answer automatically and logs a ticket was judged as
    claims (a reference's digits in brackets read as a quantity, "will be in touch" and the mail's own lines as claims),
    as was a topic "best confirmed by" a person; the answers are refusals."""
    result = judged("Is the return shipping free if my order arrived broken?", answer, DAMAGED_RETURNS)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


GIFT_CARD_TERMS = "Gift cards are valid for 3 years from purchase."
SCREEN_REPAIRS = "屏幕维修需要5到7个工作日。维修期间可免费借用备用机。"


@pytest.mark.parametrize(("question", "answer", "context"), [
    # a text's sign-off naming a brand (the letter's "After-Sales Team" and 请留意后续邮件: the rows of *-q30* above)
    ("Do you take Apple Pay?", "Sorry, can't help with payment questions by text. Pls contact our team. – QuickMart",
     GIFT_CARD_TERMS),
    # an agent's trace lines: the tool it called and a count it got back
    ("Can I pay with Klarna?", "Action: search_kb(query=\"klarna\")\nObservation: 2 documents returned.\nI'm afraid I "
     "can't confirm payment plans. Please reach out to our billing team.", GIFT_CARD_TERMS),
    # a queue's notice, the speaker's search that found nothing on a topic the context has
    ("Can I pay with Klarna?", "I can't help with payment plans here, sorry. You are number 4 in the queue for an agent.",
     GIFT_CARD_TERMS),
    ("发票开错了怎么重开？", "发票的问题小助手这边无法处理哦，已为您转接人工，前面还有2位，请留意后续短信通知。", GIFT_CARD_TERMS),
    ("换屏大概要花多少钱？", "抱歉，我没有找到屏幕维修的费用信息，无法告诉您具体价格。", SCREEN_REPAIRS),
])
def test_a_sign_off_an_agents_trace_and_a_queue_around_a_refusal_claim_nothing(question: str, answer: str,
                                                                               context: str) -> None:
    """*-q30*'s registers: a sign-off naming a brand or a team ("– ShopCare", "After-Sales Team") was read as a name
    the context lacks, an agent's "Observation: 1 document returned" and a queue's 当前排队第3位 as quantities, 请留意后续
    邮件 as a claim, and "I found no information on <a topic the context has>" as a claim the context supports."""
    result = judged(question, answer, context)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # a queue of the shop's is a claim, and so is what the speaker found
    ("我不确定礼品卡的事，不过门店排队一般要20分钟。", ["门店排队一般要20分钟"]),
    ("我没有找到价格信息，不过我找到了维修时长：5到7个工作日。", ["我找到了维修时长：5到7个工作日"]),
])
def test_claims_beside_a_sign_off_or_a_queue_stay_claims(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("Can I pay with Klarna?", answer, GIFT_CARD_TERMS, SCREEN_REPAIRS).claims] == claims


INTERNATIONAL = "We ship to Canada, Mexico and the United Kingdom. International orders are not eligible for free shipping."


@pytest.mark.parametrize(("question", "answer"), [
    # the figures the speaker lacks, whatever they are of, for a topic the context names (*-q31*'s en-refusal-q3107:
    # "I don't have delivery timeframes for orders going to Canada, sorry, and I'd rather not guess")
    ("How long does delivery to Toronto take?", "I don't have delivery timeframes for Canada."),
    ("When will my UK order arrive?", "I don't have lead times for the United Kingdom, so I can't give you a date."),
    ("Can I get an ETA for Canada?", "I haven't got any estimates for orders to Canada, sorry."),
    ("How much is shipping to Mexico?", "Sorry, I have no shipping costs for Mexico, and I'd rather not guess."),
])
def test_the_figures_the_speaker_lacks_are_information_it_lacks(question: str, answer: str) -> None:
    """*-q31*'s: "I don't have <figures> for <a topic>" (timeframes, lead times, estimates, costs) was read as a claim of
    the speaker's the context barely supports, and the answer called a hallucination."""
    result = judged(question, answer, INTERNATIONAL)
    assert (result.refusal, result.hallucination, result.claims) == (True, False, []), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # the shop's figures are claims; so is what comes before the speaker's lack
    ("There are no fees for orders to Canada.", ["There are no fees for orders to Canada"]),
    ("We don't charge fees for orders shipped to Canada.", ["We don't charge fees for orders shipped to Canada"]),
    ("Orders to Mexico take 10 days; I don't have lead times for the UK though.", ["Orders to Mexico take 10 days"]),
])
def test_the_shops_figures_beside_the_speakers_lack_stay_claims(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("Are there fees for Canada?", answer, INTERNATIONAL).claims] == claims


@pytest.mark.parametrize(("answer", "claims"), [
    # what the new shapes leave a claim of the world: a check done by someone (not "best" left to them), what is done
    # automatically (not what cannot be), a claim after a reference's line
    ("I'm not sure about refunds, but returns are checked by the warehouse within 2 days.",
     ["but returns are checked by the warehouse within 2 days"]),
    ("I can't say when, but refunds are processed automatically within 5 business days.",
     ["but refunds are processed automatically within 5 business days"]),
    ("我这边查不到您的退款进度，不过退款会在7个工作日内自动原路退回。", ["退款会在7个工作日内自动原路退回"]),
])
def test_claims_beside_a_refusal_stay_claims(answer: str, claims: list[str]) -> None:
    assert [c.claim for c in judged("When will my return be refunded?", answer, DAMAGED_RETURNS).claims] == claims


@pytest.mark.parametrize(("answer", "verdict"), [
    # a JSON object's members read apart: what it resolves is judged, what it declines is no claim
    ('{"resolved": ["Return shipping is free for defective items."], "unresolved": ["Label printing steps are '
     'not in the knowledge base."], "escalate": false}', "supported"),
    ('{"answer": "Defective items are returned free within 90 days at any store.", "declined": "Label printing is not '
     'covered by the available documents."}', "not_in_context"),
    # a label in brackets before each line
    ("[Assistant] Return shipping is free for defective items.\n[Notice] Label printing could not be verified from current "
     "sources.", "supported"),
    # a greeting before the claim; a reasoning model's thinking, which is not the answer
    ("Dear customer, we offer free courier pickup for every return. Regarding the label, I am not having that "
     "information.", "uncertain"),
    ("<think>The passage covers defective items only. Nothing on labels.</think>\nReturn shipping is free for defective "
     "items. I can't tell you how to print the label, sorry.", "supported"),
])
def test_a_structured_partial_refusal_keeps_its_claim_judged(answer: str, verdict: str) -> None:
    result = judged("Is return shipping free for a defective item, and how do I print the label?", answer,
                    "Return shipping is free for defective items.")
    assert (result.refusal, verdicts(result)) == (False, [verdict]), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claims"), [
    # in an answer that may refuse, fillers and a word said again are speech, not words of the claim
    ("okay so um the the shipping is free on orders over fifty dollars uh. I'm not sure about returns though.",
     ["okay so    the     shipping is free on orders over fifty dollars"]),
    # in an answer that may refuse, its structure is no claim: a member's key, a label in brackets, a literal alone
    ('{"answer": "Returns are free.", "declined": "I can\'t tell you the fee.", "confidence": 0.9}', ["Returns are free."]),
    ("[Assistant] Returns are free.\n[Notice] I can't tell you the fee.", ["Returns are free"]),
    ("Message: returns are free. I can't tell you the fee.", ["returns are free"]),
    # a reasoning model's thinking is not the answer
    ("<think>Fees are not in the passage.</think> Returns are free. I can't tell you the fee.", ["Returns are free"]),
])
def test_speech_and_structure_are_read_past(answer: str, claims: list[str]) -> None:
    assert read(answer).claims == claims


def test_a_refusal_over_a_chunk_that_answers_is_an_over_refusal_and_its_record_a_refusal() -> None:
    result = judged("Can I return unopened items?", "I'm afraid the help articles don't say.", RETURNS)
    assert result.refusal and attribute(result, fallback=True) == "over_refusal"
    event = TraceEvent(trace_id="t", query="Can I return unopened items?", answer="I'm afraid the help articles don't say.",
                       chunks=[Chunk(text=RETURNS)])
    record = build_record(JudgeItem(event, False, "base_rate", "routine", "none"), result, "over_refusal", "local", 0.0, False)
    assert (record.fallback, record.verdict, record.hallucination, record.groundedness, record.used_chunks) == (
        True, "refusal", False, None, None)


def test_a_partial_refusal_keeps_its_claims_judged() -> None:
    """The refusal clause is no claim; what follows the "but" is, and an unsupported one is flagged."""
    supported = judged("Can I return opened items?", "I couldn't find the exact policy for opened items, but unopened "
                       "items can be returned within 30 days of delivery.", RETURNS)
    assert (supported.refusal, verdicts(supported), supported.hallucination) == (False, ["supported"], False)
    invented = judged("Can I return opened items?", "I couldn't find the exact policy, but returns are free for 90 days.",
                      RETURNS)
    assert not invented.refusal and verdicts(invented) == ["contradicted"]
    chinese = judged("拆封的商品能退吗？", "已拆封商品的规定我不太清楚，不过未拆封商品签收后60天内都可以退货。",
                     "未拆封商品自签收之日起30天内可无理由退货。")
    assert not chinese.refusal and verdicts(chinese) == ["contradicted"]


DELIVERY = "Standard delivery is free on orders above $50 and takes 3-5 business days."


@pytest.mark.parametrize("answer", [
    "Free standard delivery above $50. Sat delivery: can't confirm, sorry.",
    "Standard delivery is free above $50. Saturday drops, can't help there, sorry.",
    "Standard delivery is free above $50. About Saturday delivery, sorry, I don't have info on that.",
])
def test_a_refusal_after_its_topic_is_no_claim_beside_a_supported_one(answer: str) -> None:
    """The part declined names its topic first ("Sat delivery:", "Saturday drops,", "About …, sorry"): it was kept
    as a claim the context lacks, and the answer called a hallucination beside its supported claim."""
    result = judged("Is delivery free, and do you deliver on Saturdays?", answer, DELIVERY)
    assert (result.refusal, verdicts(result), result.hallucination) == (False, ["supported"], False), result.groundedness_reason


@pytest.mark.parametrize("answer", [
    "Apple Pay works, yes. Whether crypto is accepted I can't say from what I've got.",
    "We accept Apple Pay. Crypto payments: I'm not sure we take them.",
])
def test_the_object_of_a_refusal_put_first_is_no_claim(answer: str) -> None:
    """"Whether crypto is accepted" and a label ("Crypto payments:") before the speaker's refusal are what it declines
    to answer: the first was judged as a claim the context barely supports."""
    result = judged("Do you take Apple Pay or crypto?", answer, "We accept Visa, Mastercard, PayPal and Apple Pay.")
    assert (result.refusal, verdicts(result)) == (False, ["supported"]), result.groundedness_reason


WARRANTY = "All laptops come with a 1-year limited warranty. Accidental damage is not covered by the standard warranty."


@pytest.mark.parametrize(("answer", "context"), [
    ("I really don't know, i just know that accidental damage isn't covered after 6 months.", WARRANTY),
    ("I'm not sure. All I know is that laptops don't come with any warranty.", WARRANTY),
    ("Not sure about water damage, though the warranty doesn't cover laptops older than 6 months.", WARRANTY),
    ("我真的不知道，只知道笔记本电脑不享受任何保修。", "笔记本电脑享受一年有限保修，仅限制造缺陷，人为损坏不在保修范围内。"),
])
def test_a_claim_after_a_refusal_is_judged_whatever_the_connective(answer: str, context: str) -> None:
    """What follows the refusal says something about the world (with a negation and the speaker, which alone would
    read as a refusal the context does not support): a claim, and this one unsupported."""
    result = judged("Is water damage covered?", answer, context)
    assert not result.refusal and any(v in FAULTS for v in verdicts(result)), result.groundedness_reason

@pytest.mark.parametrize(("answer", "claims"), [
    ("We don't ship to Hawaii.", ["We don't ship to Hawaii"]),
    ("I can confirm returns are free.", ["I can confirm returns are free"]),
    ("Not sure if you noticed, but returns are free within 30 days.", ["but returns are free within 30 days"]),
    ("It's hard to say no to free shipping on orders over $50.", ["It's hard to say no to free shipping on orders over $50"]),
    ("I'd guess it arrives in 3 to 5 business days.", ["I'd guess it arrives in 3 to 5 business days"]),
    ("Nothing beats our express shipping.", ["Nothing beats our express shipping"]),
    ("You've got me covered with the warranty.", ["You've got me covered with the warranty"]),
    ("我们不支持海外配送。", ["我们不支持海外配送"]),
    ("这个价格说不准明天就涨了。", ["这个价格说不准明天就涨了"]),
    ("外行也能轻松上手这款笔记本。", ["外行也能轻松上手这款笔记本"]),
    ("发货时间，我们一般是3天内。", ["发货时间", "我们一般是3天内"]),
])
def test_a_claim_that_looks_like_an_idiom_of_ignorance_stays_a_claim(answer: str, claims: list[str]) -> None:
    """The idioms of ignorance (scorers/refusal.py) are refusals only in their shape: "beats" without "me", "hard to
    say no", "I'd guess", 说不准 inside a claim, 外行 without a speaker, a topic before a claim are claims."""
    assert read(answer).claims == claims


@pytest.mark.parametrize("answer", ["我国没有出口这种芯片。", "我省未开通跨境退货服务。", "不同会员等级的说法也有区别。",
                                    "我的看法跟说明书不同。"])
def test_our_country_and_a_word_that_holds_a_negator_are_no_speaker_declining(answer: str) -> None:
    """我国, 我省 ("our country", "our province") are not the speaker, and 不同, 区别 negate nothing: claims, not refusals
    (OCNLI's development half had such hypotheses read as refusals, and so never judged)."""
    result = judged("退货要多久？", answer, "退货在签收后七天内办理，运费由买家承担。")
    assert not result.refusal and verdicts(result), result.groundedness_reason


@pytest.mark.parametrize(("answer", "refusal"), [
    ("I'm not a fan of gift cards either.", False), ("I haven't ordered from the outlet store lately.", False),
    ("I'm afraid I can't shed any light on that.", True), ("I can't advise on changing an order once it's placed.", True),
])
def test_the_speakers_story_is_no_refusal(answer: str, refusal: bool) -> None:
    """The speaker with a negation refuses when it speaks of answering, knowing, the sources or an inability; what
    the speaker likes or did is a claim (BEGIN's chit-chat: 12 of its held-out answers were read as refusals)."""
    result = judged("Do gift cards expire?", answer, "Returns are accepted within 30 days of delivery.")
    assert result.refusal is refusal, result.groundedness_reason


@pytest.mark.parametrize("answer", [
    "Dear Customer,\n\nThank you for contacting us regarding gift cards. Unfortunately, I am unable to confirm this "
    "at this time.\n\nKind regards,\nCustomer Care",
    "Thanks for your question about gift cards. I'm sorry, but I don't have details on that. Please refer to our "
    "help pages or speak to an agent.",
    "Sry cant help w/ that one, pls check w the store directly thx",
    "sorry亲，礼品卡这个我这边看不到，你问下客服那边吧",
    "尊敬的客户：\n\n您好！很抱歉目前无法为您提供相关信息。\n\n此致\n敬礼\n客服中心",
    "## Gift cards\n\nYou'd like to know whether gift cards expire. That detail isn't included in the materials I have "
    "access to. If you share your order number, I can forward your question to a colleague.",
    "Regarding gift card expiry — I'm sorry, but I don't know. A member of our support team can look into it.\n\n"
    "Best regards,\nSupport Assistant",
    "关于 SKU GC-100 礼品卡的有效期：\n- 现有资料中未包含相关信息；\n- 为避免误导，我暂不作回答。\n\n若您能提供订单号，我可以帮您转交。",
    "您想了解礼品卡是否会过期。很抱歉，检索到的内容中并未提及，建议提供订单号后由专人为您处理。",
    "**Short answer:** I don't know. I could not locate it in the provided context (ref: doc 1).",
    "Hi there! 👋 Sadly I don't know that. Good question about gift cards, though — best to check with the store!",
    "We're unable to help with that question at the moment, apologies.\n\nKind regards,\nThe Support Team",
    "作为AI助手，我无法回答您的问题，十分抱歉。方便的话可以提供一下订单号。",
    "Tool result: 0 documents. I can't answer that. Here's what you can do: 1. Gather your order number. 2. Contact "
    "customer support.",
    "I searched the knowledge base for 'gift cards' and got no matching results. I'd rather not guess.",
    "抱歉，我目前的資料中沒有禮品卡相關資訊，無法回答您。建議您聯繫客服人員確認。",
    "呢個我真係唔知，冇資料，你問下客服啦。",
    "查詢結果：0 筆資料。無法提供答案，抱歉。",
    "hmm i dont have anything about gift cards sorry want me to look up something else",
    "Sadly, I'm not in a position to say. Our returns team will be happy to look at your case.",
    "歹勢，禮品卡效期這邊無法提供給您，建議直接詢問客服中心的人員。",
    "不好意思，目前查不到禮品卡的相關資訊。",
    "我查询了支付相关文档，但未能确认礼品卡的有效期，暂时无法回答。",
    "For gift card questions I cannot give you an answer. If you'd like, I can put you through to our support team.",
    "Can't give you a figure on that one, sorry. You may wish to ring the store; that's one for the store folks.",
    "礼品卡的事项不在我能解答的范围内。如需帮助，请转接人工服务。",
])
def test_a_refusal_in_a_letter_or_a_text_is_a_refusal(answer: str) -> None:
    """Greetings, thanks for asking about the topic, sign-offs (a team's name), referrals and texting around a refusal
    are no claims (the blind set *-q*'s misses)."""
    result = judged("Do gift cards expire?", answer, "Returns are accepted within 30 days of delivery.")
    assert result.refusal and not result.hallucination, result.groundedness_reason


@pytest.mark.parametrize(("question", "answer", "claim"), [
    ("Can I transfer points, and how many do I earn?",
     "Members earn (sorry, I can't help with transfers) 5 points for each dollar they spend.",
     "5 points for each dollar they spend"),
    ("能用PayPal吗？有没有手续费？", "手续费这个我不清楚～PayPal是可以用的哦。", "PayPal是可以用的哦"),
    ("能寄到台湾吗？要几天？", "抱歉，时效这个我没法确认，不过台湾是可以寄的。", "台湾是可以寄的"),
])
def test_a_claim_beside_a_refusal_in_brackets_after_a_tilde_or_short_is_judged(question: str, answer: str,
                                                                               claim: str) -> None:
    """What follows a refusal in brackets, after a tilde, or in a short clause with a predicate is a claim."""
    result = judged(question, answer, "Members earn 1 point for each dollar they spend. 支持支付宝。")
    assert not result.refusal and claim in [c.claim for c in result.claims], result.groundedness_reason
