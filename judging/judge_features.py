"""The local judge's analysis of one answer as a fixed, named, versioned feature vector, for its model
(judging/judge_model.py).

Nothing here reads the text again: each claim's evidence is what the judge's rules computed while they
decided its verdict (judging/local_judge.py, _verdict). A new or changed feature is a new FEATURES_VERSION: a model
file declares the version and the names it was fitted on, and the judge refuses a file that does not match
(judging/judge_model.py). What was tried and not kept (lengths, the number of claims, the mean share and the
shares of claims under half or without support, the share of a claim in its aligned clause, a contradicted claim's
terms as no support at all or at full weight): docs/judging.md, The local judge's model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

FEATURES_VERSION = "features.v2"  # v2: the fast path's lexical groundedness added

# Which of the judge's rules decided a claim's verdict (judging/local_judge.py, _verdict): in the order they run.
Rule = Literal["quantity", "subject", "polarity", "negated_term", "swap", "missing_quantity", "missing_name",
               "nothing", "addition", "little", "weak", "supported"]


class ClaimEvidence(msgspec.Struct, frozen=True, gc=False):
    """What the judge found for one claim: the share of its terms in the context, its size in terms (scorers/text.py
    size(): English stems, CJK characters, quantities), how many of those are CJK characters, and the rule that
    decided its verdict."""

    share: float
    units: int
    cjk: int
    rule: Rule


# The vector, in this order. A rule's feature is 1 when it faulted a claim, whatever the claims around it: as
# shares of the claims they weighed a tenth as much, and one wrong number is wrong however long the answer.
FEATURE_NAMES = (
    "support_pooled",  # the answer's terms found in the context, over all its claims (a contradicted claim's at half)
    "support_min",  # the weakest claim's share of its terms in the context (a contradicted claim's halved)
    "contradicted_quantity",  # a claim with a number its aligned clause gives otherwise, or gives to another subject
    "contradicted_wording",  # a claim of the opposite polarity, with a term only negated in the context, or a swap
    "missing_quantity",  # a claim with a number the context does not have
    "missing_name",  # a claim with a name the context does not have
    "chinese",  # 1 when most of the answer's terms are CJK characters: bigram support runs lower on a paraphrase
    "support_pooled_chinese",  # support_pooled for a Chinese answer, else 0: its own slope
    # The fast path's lexical groundedness (scorers/lexical.py) of the whole answer, discounted as the claims' shares
    # are for contradicted claims: it ranks answers better than the claims' shares alone on three of the four
    # benchmarks (it reads what the claims set aside as conversation too)
    "lexical_support",
    "lexical_support_chinese",  # lexical_support for a Chinese answer, else 0: its own slope
)


# A contradicted claim's terms are in the context, which says otherwise: they count half as support. At full weight
# a flipped "is not covered" copied from the context reads as supported (the own table's recall fell to 0.589); as
# no support at all every contradiction ranks above answers with nothing in the context, which the public
# benchmarks do not bear out (where an answer is otherwise supported, a contradiction the rules find is hallucinated
# about half the time: FaithBench and OCNLI AUROC -0.02). Chosen among 0, 0.25, 0.4, 0.5, 0.6, 0.75 and 1 on the
# development halves and the own table's development cases (docs/benchmarks-log.md).
_CONTRADICTED: frozenset[Rule] = frozenset(("quantity", "subject", "polarity", "negated_term", "swap"))
_CONTRADICTED_SUPPORT = 0.5


def features(evidence: Sequence[ClaimEvidence], lexical: float | None) -> list[float]:
    """FEATURE_NAMES' values for an answer whose claims have this evidence (one claim at least) and whose lexical
    groundedness is `lexical` (None: no word or number to score, so none unsupported, as the fast path reads it)."""
    # One pass (the answer-level step runs on every judged answer): the sums in the order sum() would take them.
    rules: set[Rule] = set()
    units = cjk = 0
    pooled_units = full_units = 0.0
    weakest = float("inf")
    for e in evidence:  # min() written out: its call was a fifth of the loop
        share = 1.0 if e.share > 1.0 else e.share
        rule, size = e.rule, e.units
        discounted = share * _CONTRADICTED_SUPPORT if rule in _CONTRADICTED else share
        rules.add(rule)
        units += size
        cjk += e.cjk
        pooled_units += discounted * size
        full_units += share * size
        if discounted < weakest:
            weakest = discounted
    pooled = pooled_units / units if units else 1.0
    chinese = 2 * cjk > units
    # The lexical score counts a contradicted claim's words as support, as its claims' share would at full weight:
    # it is discounted as the share is (a flipped "is not free" copied from the context is no support)
    full = full_units / units if units else 1.0
    lexical_support = (1.0 if lexical is None else lexical) * (pooled / full if full > 0 else 1.0)
    return [
        pooled, weakest,
        float("quantity" in rules or "subject" in rules),
        float("polarity" in rules or "negated_term" in rules or "swap" in rules),
        float("missing_quantity" in rules), float("missing_name" in rules),
        float(chinese), pooled if chinese else 0.0,
        lexical_support, lexical_support if chinese else 0.0,
    ]
