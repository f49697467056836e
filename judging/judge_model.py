"""The local judge's model: a logistic regression on judging/judge_features.py's vector, giving the probability
that an answer is unsupported by its context; the answer's verdict, its 1-5 groundedness and the reason's
leading features come from it.

Shipped as package data (judging/model/local_judge.v5.json), written by bench/train_local_judge.py from the
development halves of public human-labelled benchmarks; the file names what it was trained on and the command
that trained it. Pure Python at run time: a dozen multiplications and an exponential.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from importlib import resources
from typing import Literal

import msgspec

from ragpulse.errors import RagpulseError
from ragpulse.judging.judge_features import FEATURE_NAMES, FEATURES_VERSION, ClaimEvidence, Rule, features
from ragpulse.judging.verdicts import Claim, Judgment

MODEL_FILE = "model/local_judge.v5.json"

Verdict = Literal["hallucination", "uncertain", "grounded"]


class TrainedOn(msgspec.Struct, frozen=True):
    benchmark: str
    answers: int  # development-half answers with at least one claim
    hallucinated: int


class JudgeModel(msgspec.Struct, frozen=True):
    """A fitted model as its file holds it: p = sigmoid(intercept + sum(coefficient * (x - mean) / scale)); a
    hallucination at p >= threshold + band, uncertain within `band` of the threshold, grounded below."""

    version: str
    features_version: str
    features: list[str]
    mean: list[float]
    scale: list[float]
    coefficients: list[float]
    intercept: float
    threshold: float
    band: float
    trained_on: list[TrainedOn]
    command: str
    l2: float

    def __post_init__(self) -> None:
        if self.features_version != FEATURES_VERSION or tuple(self.features) != FEATURE_NAMES:
            raise RagpulseError(f"the local judge's model {self.version} was fitted on {self.features_version} "
                                f"{self.features}, not {FEATURES_VERSION} {list(FEATURE_NAMES)}")
        if not len(self.mean) == len(self.scale) == len(self.coefficients) == len(self.features):
            raise RagpulseError(f"the local judge's model {self.version} has vectors of different lengths")

    def contributions(self, x: Sequence[float]) -> list[float]:
        """Each feature's term of the log-odds: positive pushes towards unsupported."""
        return [c * (v - m) / s for c, v, m, s in zip(self.coefficients, x, self.mean, self.scale, strict=True)]

    def probability(self, x: Sequence[float]) -> float:
        return _sigmoid(self.intercept + sum(self.contributions(x)))

    def verdict(self, p: float) -> Verdict:
        if p >= self.threshold + self.band:
            return "hallucination"
        return "uncertain" if p > self.threshold - self.band else "grounded"

    def groundedness(self, p: float) -> int:
        """1-5 from the probability: <= 2 a hallucination (1 past half-way from its cut to certainty), 3 uncertain,
        4 or 5 grounded (5 under half its cut)."""
        high, low = self.threshold + self.band, self.threshold - self.band
        if p >= high:
            return 1 if p >= (1 + high) / 2 else 2
        if p > low:
            return 3
        return 4 if p >= low / 2 else 5


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))  # no overflow either way


@functools.cache
def shipped_model() -> JudgeModel:
    """The model shipped with the package."""
    return msgspec.json.decode(resources.files(__package__).joinpath(MODEL_FILE).read_bytes(), type=JudgeModel)


# The features a reason names by the claims they come from: a rule's by the first claim it faulted, the rest by the
# claim with the least of its terms in the context.
_RULES_OF: dict[str, tuple[Rule, ...]] = {
    "contradicted_quantity": ("quantity", "subject"), "contradicted_wording": ("polarity", "negated_term", "swap"),
    "missing_quantity": ("missing_quantity",), "missing_name": ("missing_name",),
}


# Named in a reason: what moved it towards its verdict (either way for an abstention). Not the language, which only
# sets the scale the shares are read on, nor the Chinese slope of an answer that is not Chinese: both move every
# answer of a language alike, from the training set's mix of languages. By whether the answer is Chinese.
_CHINESE = FEATURE_NAMES.index("chinese")
_NAMED = {chinese: tuple(i for i, name in enumerate(FEATURE_NAMES)
                         if name != "chinese" and (chinese or not name.endswith("_chinese"))) for chinese in (False, True)}
_TOWARD: dict[str, float] = {"hallucination": 1.0, "grounded": -1.0}


def _weight(moved: tuple[float, str]) -> float:
    return -abs(moved[0])


def set_groundedness(judgment: Judgment, model: JudgeModel, claims: Sequence[Claim],
                     evidence: Sequence[ClaimEvidence], lexical: float | None) -> None:
    """The answer's verdict, groundedness, confidence (that its verdict is right) and reason from the model's
    probability that it is unsupported; the claims (one at least) keep their own verdicts, the record of what the
    rules found. The reason names the features that moved the probability most, and the claim behind the first."""
    x = features(evidence, lexical)
    contributions = model.contributions(x)
    p = _sigmoid(model.intercept + sum(contributions))
    verdict = model.verdict(p)
    judgment.groundedness = model.groundedness(p)
    judgment.uncertain = verdict == "uncertain"
    judgment.confidence = round(p if verdict == "hallucination" else 1 - p, 3)
    said = [c.verdict for c in claims]  # counted by list.count: a dict's loop cost twice as much
    toward = _TOWARD.get(verdict)
    moved = sorted([(contributions[i], FEATURE_NAMES[i]) for i in _NAMED[x[_CHINESE] > 0]
                    if toward is None or contributions[i] * toward > 0], key=_weight)[:2]
    reason = (f"{said.count('supported')} of {len(claims)} claims supported, {said.count('contradicted')} contradicted, "
              f"{said.count('not_in_context')} not in the context, {said.count('uncertain')} uncertain; "
              f"p(unsupported)={p:.2f}, "
              f"{verdict}" + (": most from " + " and ".join(f"{name} ({value:+.2f})" for value, name in moved)
                              if moved else ""))
    if verdict != "grounded":
        rules = _RULES_OF.get(moved[0][1], ()) if moved else ()
        behind = next((i for i, e in enumerate(evidence) if e.rule in rules), None)
        if behind is None:
            behind = min(range(len(evidence)), key=lambda i: evidence[i].share)
        reason += f"; claim {behind + 1}: {claims[behind].claim!r}: {claims[behind].reason}"
    judgment.groundedness_reason = reason
