"""The local judge's model (judging/judge_model.py) and its features (judging/judge_features.py)."""

from __future__ import annotations

import math

import msgspec
import pytest
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.errors import RagpulseError
from ragpulse.judging.judge_features import FEATURE_NAMES, FEATURES_VERSION, ClaimEvidence, features
from ragpulse.judging.judge_model import JudgeModel, TrainedOn, shipped_model
from ragpulse.judging.local_judge import LocalJudge


def _model(**changes: object) -> JudgeModel:
    n = len(FEATURE_NAMES)
    fields: dict[str, object] = {
        "version": "test", "features_version": FEATURES_VERSION, "features": list(FEATURE_NAMES), "mean": [0.5] * n,
        "scale": [0.25] * n, "coefficients": [-1.0, -0.5] + [0.0] * (n - 2), "intercept": 0.2, "threshold": 0.6,
        "band": 0.05, "trained_on": [TrainedOn("BEGIN", 10, 5)], "command": "none", "l2": 1.0,
    }
    return JudgeModel(**{**fields, **changes})  # type: ignore[arg-type]


@pytest.mark.unit
def test_the_shipped_model_loads_and_matches_its_declared_features() -> None:
    model = shipped_model()
    assert (model.version, model.features_version, tuple(model.features)) == ("local_judge.v5", FEATURES_VERSION,
                                                                             FEATURE_NAMES)
    assert len(model.mean) == len(model.scale) == len(model.coefficients) == len(FEATURE_NAMES)
    assert [t.benchmark for t in model.trained_on] == ["BEGIN", "FaithBench", "LFQA-Verification", "OCNLI"]
    assert 0 < model.threshold - model.band < model.threshold + model.band < 1
    assert model.command.startswith("python bench/train_local_judge.py train")
    # a fault found never argues for support (bench/train_local_judge.py NONNEGATIVE): contradicted_wording fits
    # below 0 on the public development halves and is held at 0
    rules = ("contradicted_quantity", "contradicted_wording", "missing_quantity", "missing_name")
    assert all(c >= 0 for name, c in zip(model.features, model.coefficients, strict=True) if name in rules)


@pytest.mark.unit
def test_a_model_file_of_other_features_is_refused() -> None:
    with pytest.raises(RagpulseError, match="was fitted on"):
        _model(features=list(reversed(FEATURE_NAMES)))
    with pytest.raises(RagpulseError, match="was fitted on"):
        _model(features_version="features.v0")
    with pytest.raises(RagpulseError, match="different lengths"):
        _model(mean=[0.5])


@pytest.mark.unit
def test_the_features_of_known_evidence() -> None:
    evidence = [ClaimEvidence(1.0, 6, 0, "supported"), ClaimEvidence(0.5, 4, 0, "missing_name")]
    assert features(evidence, 0.75) == [0.8, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.75, 0.0]  # (6 + 2) / 10 supported
    chinese = [ClaimEvidence(0.25, 8, 8, "weak")]
    assert features(chinese, 0.5) == [0.25, 0.25, 0.0, 0.0, 0.0, 0.0, 1.0, 0.25, 0.5, 0.5]
    # no word or number for the lexical score: none unsupported, as the fast path reads it
    assert features(chinese, None)[-2:] == [1.0, 1.0]
    # a contradicted claim's terms count half as support: in the context, which says otherwise; the lexical score,
    # which counts them in full, is discounted as much ((3 + 4) / (6 + 4) of it)
    flipped = [ClaimEvidence(1.0, 6, 0, "polarity"), ClaimEvidence(1.0, 4, 0, "supported")]
    assert features(flipped, 1.0) == pytest.approx([0.7, 0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.7, 0.0])
    assert features([ClaimEvidence(0.8, 5, 0, "subject")], 0.9)[:3] == [0.4, 0.4, 1.0]
    assert features([ClaimEvidence(0.8, 5, 0, "subject")], 0.9)[-2] == pytest.approx(0.45)


@pytest.mark.unit
def test_exact_values_for_one_feature_vector() -> None:
    model = _model()
    x = [0.75, 0.25, 0, 0, 0, 0, 0, 0, 0, 0]  # standardised: +1 and -1
    assert model.contributions(x) == [-1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert model.probability(x) == pytest.approx(1 / (1 + math.exp(0.3)))  # z = 0.2 - 1 + 0.5
    assert model.probability(x) == pytest.approx(0.425557, abs=1e-6)
    assert [model.verdict(p) for p in (0.65, 0.6, 0.56, 0.54)] == ["hallucination", "uncertain", "uncertain", "grounded"]
    assert [model.groundedness(p) for p in (0.9, 0.7, 0.6, 0.3, 0.2)] == [1, 2, 3, 4, 5]


@pytest.mark.unit
def test_the_probability_falls_as_the_support_share_rises() -> None:
    model = shipped_model()
    for cjk in (0, 8):  # an English claim of 8 terms, a Chinese one of 8 characters
        ps = [model.probability(features([ClaimEvidence(share / 20, 8, cjk, "supported" if share >= 10 else "weak"),
                                          ClaimEvidence(1.0, 8, cjk, "supported")], (20 + share) / 40))
              for share in range(21)]
        assert all(later <= earlier for earlier, later in zip(ps, ps[1:])), ps
        assert ps[0] > ps[-1]


@pytest.mark.unit
def test_the_reason_names_the_feature_that_moved_the_probability_most_and_its_claim() -> None:
    judge = LocalJudge(CollectorRegistry(), cache_entries=10, cache_max_bytes=10**6)
    event = TraceEvent(trace_id="t", query="How long did it run?", answer="The series ran for 3 seasons.",
                       chunks=[Chunk(text="The series ran for two seasons on CBS.")])
    judged = judge.judge(event)
    model = shipped_model()
    x = judge.features(event)
    assert x is not None
    contributions = dict(zip(model.features, model.contributions(x), strict=True))
    top = max((name for name in contributions if name != "chinese"), key=lambda name: contributions[name])
    assert top == "missing_quantity"
    assert judged.groundedness_verdict == "hallucination"
    assert f"p(unsupported)={model.probability(x):.2f}, hallucination: most from {top} (" in judged.groundedness_reason
    assert "claim 1: 'The series ran for 3 seasons': 3 (count) is not in the context" in judged.groundedness_reason


@pytest.mark.unit
def test_an_uncertain_answer_is_the_models_not_its_claims() -> None:
    """Judgment.uncertain, set by the local judge from its model's band, decides over the claims' verdicts."""
    judge = LocalJudge(CollectorRegistry(), cache_entries=10, cache_max_bytes=10**6, model=_model(threshold=0.9))
    judged = judge.judge(TraceEvent(trace_id="t", query="q", answer="The warranty lasts 2 years.",
                                    chunks=[Chunk(text="The warranty lasts 2 years.")]))
    assert (judged.uncertain, judged.groundedness_verdict, judged.groundedness) == (False, "grounded", 5)
    assert msgspec.json.decode(msgspec.json.encode(shipped_model()), type=JudgeModel) == shipped_model()
