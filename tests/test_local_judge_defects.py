"""The local judge's analysis, issue 44: the named defects (negator characters, years, lead-ins, swaps, "once",
numbers, negations that say the same), each on a minimal example that claims.v4's analysis, or a later one, got
wrong."""

from __future__ import annotations

import pytest
from helpers.local_judging import judged, verdicts

from ragpulse.scorers.refusal import read
from ragpulse.scorers.text import clause

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


# -- the named defects -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["未来三年公司将扩大产能", "这无疑是最划算的选择", "这款经典耳机经久不衰", "我特别推荐这款耳机",
                                  "非洲的订单由当地仓库发货", "无理数的小数部分"])
def test_a_word_that_holds_a_negator_character_does_not_negate(text: str) -> None:
    assert not clause(text).negated


def test_a_chinese_claim_with_such_a_word_is_not_the_context_negated() -> None:
    result = judged("公司有什么计划？", "未来三年公司将扩大产能。", "公司将在三年内扩大产能。")
    assert verdicts(result) == ["supported"], result.groundedness_reason


@pytest.mark.parametrize(("text", "quantities"), [
    ("十分抱歉", set()), ("所有能源都十分充足", set()), ("考了九十分", {("points", 90.0)}), ("等十分钟", {("duration", 10.0)}),
])
def test_shifen_alone_is_very_not_ten_points(text: str, quantities: set[tuple[str, float]]) -> None:
    """十分 is "very" (十分抱歉: "very sorry" was a claim of 10 points beside a refusal); 九十分 and 十分钟 are numbers."""
    assert clause(text).quantities == quantities


def test_a_year_is_a_year_not_a_duration() -> None:
    assert clause("该品牌创立于2023年").quantities == {("count", 2023.0)}
    assert clause("有着1500年历史").quantities == {("duration", 1500 * 525960.0)}  # a history of 1,500 years is one
    # 2015年 was 2,015 years, "contradicted" by 8 years of history; a year the context does not give is missing
    founded = judged("品牌哪年创立？", "该品牌创立于2015年。", "该品牌已有8年历史，总部位于上海。")
    assert founded.claims[0].reason.startswith("2015 (count) is not in the context"), founded.groundedness_reason
    other = judged("品牌哪年创立？", "该品牌创立于2013年。", "该品牌创立于2015年，总部位于上海。")
    assert other.claims[0].reason.startswith("says 2013 (count) where the context says 2015 (count)")


def test_a_lead_in_before_a_colon_is_no_claim() -> None:
    context = "Poseidon grossed $181,674,817 at the worldwide box office on a budget of $160 million."
    for answer in ("Based on the provided passage, here is a concise summary of the key points:\n\nPoseidon grossed "
                   "$181,674,817 worldwide on a budget of $160 million.",
                   "According to the passage, the key facts are:\n\nPoseidon grossed $181,674,817 worldwide."):
        result = judged("Summarize the passage.", answer, context)
        assert verdicts(result) == ["supported"], result.groundedness_reason


@pytest.mark.parametrize(("answer", "context"), [
    ("Although sales rose in March, profits fell sharply.",
     "While sales rose in March, profits fell sharply. Although costs were high, the firm kept its staff."),
    ("The EU imposed new tariffs on steel imports.",
     "The European Union imposed new tariffs on steel imports. EU ministers met in Brussels on Monday."),
    ("Conditions on the northern farms worsened during the spring.",
     "Conditions on the northern farms got worse during the spring. Analysts expect the situation to worsen further."),
])
def test_a_paraphrase_is_no_swap(answer: str, context: str) -> None:
    result = judged("What happened?", answer, context)
    assert verdicts(result) == ["supported"], result.groundedness_reason


def test_a_swap_of_one_thing_for_another_is_still_caught() -> None:
    stores = "Our Berlin store is open Monday to Saturday from 9 am to 8 pm. The Munich store closes at 6 pm on Saturdays."
    result = judged("When is the Munich store open?", "The Munich store is open Monday to Saturday from 9 am to 8 pm.", stores)
    assert result.claims[0].reason.startswith("says munich where the context says berlin")


def test_once_as_a_conjunction_is_no_number() -> None:
    assert clause("Once the parcel arrives, you can return it").quantities == frozenset()
    assert clause("You can change the address once per order").quantities == {("times", 1.0)}
    result = judged("How long do I have?", "Once the parcel arrives, you have 14 days to return it.",
                    "Returns are accepted within 14 days of delivery.")
    assert verdicts(result) == ["supported"], result.groundedness_reason


RETURN_STEPS = ("Returns are accepted within 30 days of delivery if the item is unused and in its original packaging. To "
                "start a return, open the order in your account and choose Return item; a prepaid return label is "
                "emailed to you.")
REFUNDS = "Refunds are issued to the original payment method within 5 business days after the returned item arrives."
SHIPPING = ("Standard shipping takes 3 to 5 business days and is free on orders over $50. Express shipping costs $12.99 "
            "and arrives in 1 to 2 business days.")
INTERNATIONAL = "International orders ship from our warehouse in Rotterdam and may be subject to customs fees."


def test_an_invented_service_and_an_invented_rule_are_hallucinations() -> None:
    pickup = judged("How do I return my blender?", "Open the order in your account and choose Return item to get a "
                    "prepaid label. We also offer free home pickup for returns.", RETURN_STEPS, REFUNDS)
    assert pickup.hallucination and verdicts(pickup) == ["supported", "not_in_context"], pickup.groundedness_reason
    assert pickup.claims[1].reason.startswith("an addition ('also')")
    split = judged("When will my order ship?", "Standard shipping takes 3 to 5 business days. Orders with several items "
                   "are always split into separate parcels.", SHIPPING, INTERNATIONAL)
    assert split.hallucination and verdicts(split) == ["supported", "not_in_context"], split.groundedness_reason


@pytest.mark.parametrize(("answer", "context"), [
    ("Heartbreak Hotel became a number 1 hit in the United States.",
     "Heartbreak Hotel was released in January 1956 and became a number one hit in the United States."),
    ("The band has 13 members.", "The band has thirteen members and was formed in 1998."),
    ("The club won 21 titles.", "Founded in 1902, the club has won twenty-one titles."),
])
def test_a_number_in_digits_is_the_same_number_in_words(answer: str, context: str) -> None:
    """The context's number in words is evidence for the claim's in digits: "number 1" was contradicted by 1956."""
    result = judged("Tell me more.", answer, context)
    assert verdicts(result) == ["supported"], result.groundedness_reason


def test_a_number_in_words_in_the_context_supports_the_claims_in_digits() -> None:
    """"eleven players" is support for "11 players" as "11 players" would be (a third of the claim was unsupported)."""
    result = judged("How many players?", "A team has 11 players.", "The sport is played by two teams of eleven players.")
    assert (verdicts(result), result.hallucination) == (["supported"], False), result.groundedness_reason
    assert result.claims[0].reason.startswith("100% of its terms"), result.claims[0].reason


def test_an_age_range_reads_as_its_ages_however_it_is_hyphenated() -> None:
    """"18-49-year-old" was two durations of 18 and 49 years against the context's "18- to 49-year-old", two ages."""
    assert clause("the most 18-49-year-old viewers").quantities == {("count", 18.0), ("count", 49.0)}
    assert clause("the most 18- to 49-year-old viewers").quantities == {("count", 18.0), ("count", 49.0)}
    assert clause("a 3-5 day delivery").quantities == {("duration", 3 * 1440.0), ("duration", 5 * 1440.0)}


@pytest.mark.parametrize(("answer", "claims"), [
    ("Shipping countries I cannot confirm here.", []),
    ("Sorry for inconvenience, the opening hours of store I am not able to tell.", []),
    ("unopened stuff you've got like sixty days to send back um the in-store exchange part i don't know sorry",
     ["unopened stuff you've got like sixty days to send back    the in-store exchange part"]),  # "um" is no word of it
])
def test_what_the_refusal_takes_as_its_object_put_first_is_no_claim(answer: str, claims: list[str]) -> None:
    """A noun phrase before "I cannot confirm" with nothing after it is what cannot be confirmed (learner English read
    it as a claim); a clause with its own subject before it stays a claim."""
    assert read(answer).claims == claims


def test_a_spoken_chinese_answer_without_stops_keeps_its_claim_before_the_refusal() -> None:
    """A voice transcript with no punctuation: the claim before 然后 (or a particle that ends it) is judged, the point
    the speaker cannot answer after it refuses (it was all one refusal)."""
    result = judged("年费多少？家人能用吗？", "嗯年费的话是一百九十八块然后家里人能不能用这个我这边不太清楚哈", "会员年费为198元，可开通一年。")
    assert [c.claim for c in result.claims] == ["嗯年费的话是一百九十八块"], result.groundedness_reason
    assert not result.refusal


@pytest.mark.parametrize(("answer", "claims"), [
    ("Exactly. The offense attempts to advance down the field.", ["The offense attempts to advance down the field"]),
    ("Definitely.", []),
])
def test_an_interjection_is_no_claim(answer: str, claims: list[str]) -> None:
    """"Exactly" alone was a claim whose capitalised word the context lacked: a missing name (BEGIN's development half)."""
    result = judged("How is it played?", answer, "The offense attempts to advance down the field by running.")
    assert ([c.claim for c in result.claims], result.hallucination) == (claims, False), result.groundedness_reason


@pytest.mark.parametrize(("answer", "claim", "verdict"), [
    ("I had no idea skiing has been around for almost five millennia!",
     "skiing has been around for almost five millennia", "supported"),
    ("I didn't know that skiing was invented in Peru.", "skiing was invented in Peru", "not_in_context"),
])
def test_what_the_speaker_did_not_know_is_said_to_be_so_a_claim(answer: str, claim: str, verdict: str) -> None:
    """"I had no idea X" says X: the claim is X, judged (it was read as a refusal, or as X negated)."""
    result = judged("Do you ski?", answer, "Skiing has a history of almost five millennia.")
    assert [(c.claim, c.verdict) for c in result.claims] == [(claim, verdict)], result.groundedness_reason


@pytest.mark.parametrize(("answer", "refusal"), [
    ("I didn't know that.", False), ("I had no idea where the store is.", True),
    ("I wish I could play, I'm addicted to it.", False), ("I wish I could help with that.", True),
])
def test_ignorance_without_a_claim_and_a_wish_to_help_still_decline(answer: str, refusal: bool) -> None:
    result = judged("Do you ski?", answer, "Skiing has a history of almost five millennia.")
    assert result.refusal is refusal, result.groundedness_reason


def test_numbers_in_words_are_read_to_their_value() -> None:
    assert clause("a number one hit").spelled == {("count", 1.0)}
    assert clause("thirteen members").spelled == {("count", 13.0)}
    assert clause("seventeen years").quantities == {("duration", 17 * 525960.0)}
    assert clause("twenty-one titles").spelled == {("count", 21.0)}
    assert clause("eighty-five percent").quantities == {("percent", 85.0)}


def test_words_left_out_beside_the_name_the_context_gives_are_no_swap() -> None:
    """The context's sentence is cut at its semicolons ("ireland (" and "ulster-scots: ) is an island…"): the claim's
    "ireland" is the context's word right before the aligned clause's "ulster-scots", left out; nothing moved."""
    result = judged("What is Ireland?", "ireland is an island in the north atlantic.",
                    "ireland (; ; ulster-scots: ) is an island in the north atlantic.")
    assert verdicts(result) == ["supported"], result.groundedness_reason


def test_a_swap_from_the_sentence_before_is_still_caught() -> None:
    """The Munich store is said just before the Berlin store's hours, but not beside "Berlin": a swap."""
    stores = ("The Munich store closes at 6 pm on Saturdays. Our Berlin store is open Monday to Saturday from 9 am to "
              "8 pm.")
    result = judged("When is the Munich store open?", "The Munich store is open Monday to Saturday from 9 am to 8 pm.",
                    stores)
    assert result.claims[0].reason.startswith("says munich where the context says berlin"), result.groundedness_reason


# -- negations that say the same, and a negation of something else (found in the partial refusals' true claims) ----

WARRANTY = ("All laptops come with a 1-year limited warranty that covers manufacturing defects. Accidental damage is "
            "not covered by the standard warranty.")
INSTALMENTS = "Orders over $200 can be paid in 4 interest-free installments."


def test_a_term_negated_only_of_another_subject_is_no_contradiction() -> None:
    """"standard" is said only in "Accidental damage is not covered by the standard warranty": that negates nothing
    about a warranty covering manufacturing defects (claims.v8 called it the opposite)."""
    judgment = judged("What does the extended plan cover?", "The extended plan terms aren't available to me, but the "
                      "standard warranty covers manufacturing defects for 1 year.", WARRANTY)
    assert [(c.claim, c.verdict) for c in judgment.claims] == [
        ("but the standard warranty covers manufacturing defects for 1 year", "supported")]


@pytest.mark.parametrize("answer", [
    "Orders above $200 can be spread over four installments with no interest.",
    "Orders above $200 can be spread over four installments without interest.",
])
def test_no_interest_says_what_interest_free_says(answer: str) -> None:
    """"interest-free" and "without interest" read as "no interest" (claims.v8: "with no interest" was the opposite of
    "interest-free installments")."""
    assert verdicts(judged("Can I split a $350 order?", answer, INSTALMENTS)) == ["supported"]


def test_with_interest_is_the_opposite_of_interest_free() -> None:
    judgment = judged("Can I split a $350 order?", "Orders above $200 can be paid in four installments with interest.",
                      INSTALMENTS)
    assert [(c.verdict, c.reason) for c in judgment.claims] == [
        ("contradicted", f'the context says the opposite (context: "{INSTALMENTS[:-1]}")')]


@pytest.mark.parametrize("answer", ["Trade-in credit lands in your account no more than ten days later.",
                                    "Trade-in credit lands in your account no later than ten days after."])
def test_no_more_than_is_no_negation(answer: str) -> None:
    assert verdicts(judged("When is my trade-in credited?", answer,
                           "The trade-in value is credited to your account within 10 days.")) == ["supported"]
