"""The local judge and the lexical score against labelled cases: precision, recall and AUROC for
hallucinations, the confusion by kind of case and by stage (tests/data/judge_cases.yaml, then the
held-out tests/data/judge_cases_holdout.yaml, by default).

    python bench/eval_own_table.py [FILE ...]

Each case goes through what a sidecar does with a judged trace: the shipped fallback rules, the
local judge, attribution. The lexical score is the fast path's (scorers/lexical.py): AUROC of
1 - groundedness, and the sampler's flag (a number not in the chunks, or groundedness under
judge.flag_support_below) as a classifier. tests/test_local_judge.py asserts these numbers exactly.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from prometheus_client import CollectorRegistry

from ragpulse.app.components import fallback_detector, local_judge
from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.judging.attribution import attribute
from ragpulse.scorers.lexical import LexicalScorer

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
TABLES = (DATA / "judge_cases.yaml", DATA / "judge_cases_holdout.yaml")
REFUSALS = ("knowledge_gap", "over_refusal")


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, truth: bool, predicted: bool) -> None:
        if truth:
            self.tp, self.fn = self.tp + predicted, self.fn + (not predicted)
        else:
            self.fp, self.tn = self.fp + predicted, self.tn + (not predicted)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


def auroc(positives: list[float], negatives: list[float]) -> float:
    """The chance that a random hallucination scores above a random grounded answer (ties half)."""
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


@dataclass
class Evaluation:
    cases: int = 0
    judge: Confusion = field(default_factory=Confusion)
    lexical_flag: Confusion = field(default_factory=Confusion)
    judge_auroc: float = 0.0
    lexical_auroc: float = 0.0
    wrong_by_kind: Counter[str] = field(default_factory=Counter)
    stages: Counter[tuple[str, str]] = field(default_factory=Counter)  # (expected, attributed); "none": no bad case
    unexpected_fallbacks: list[str] = field(default_factory=list)


def evaluate(path: Path) -> Evaluation:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    knowledge = data["knowledge_base"]
    config = Config()
    registry = CollectorRegistry()
    lexical = LexicalScorer(registry, LabelGuard(["app"], 10, 10, registry))
    judge, fallback = local_judge(config.judge, CollectorRegistry()), fallback_detector(config)
    result = Evaluation(cases=len(data["cases"]))
    judge_scores: dict[bool, list[float]] = {True: [], False: []}
    lexical_scores: dict[bool, list[float]] = {True: [], False: []}
    for index, case in enumerate(data["cases"]):
        event = TraceEvent(trace_id=str(index), query=case["q"], answer=case["a"],
                           chunks=[Chunk(id=key, text=knowledge[key]) for key in case["chunks"]])
        judgment = judge.judge(event)
        refused = fallback.detect(event) is not None or judgment.refusal  # the rules' fallback or the judge's reading
        stage = attribute(judgment, refused) or "none"
        expect = case["expect"]
        if expect in REFUSALS:
            result.stages[(expect, stage if refused else "answered")] += 1
            result.wrong_by_kind[case["kind"]] += stage != expect
            continue
        if refused:
            result.unexpected_fallbacks.append(case["a"])
            continue
        truth = expect == "hallucination"
        expected_stage = ("retrieval" if case["kind"] == "general_knowledge" else "generation") if truth else "none"
        result.stages[(expected_stage, stage)] += 1
        result.judge.add(truth, judgment.hallucination)
        result.wrong_by_kind[case["kind"]] += judgment.hallucination != truth
        assert judgment.groundedness is not None, case
        judge_scores[truth].append(6 - judgment.groundedness)
        scores = lexical.score(event)
        assert scores is not None and scores.groundedness is not None, case
        lexical_scores[truth].append(1 - scores.groundedness)
        result.lexical_flag.add(truth, scores.number_mismatch or scores.groundedness < config.judge.flag_support_below)
    result.judge_auroc = auroc(judge_scores[True], judge_scores[False])
    result.lexical_auroc = auroc(lexical_scores[True], lexical_scores[False])
    return result


def main(paths: list[Path]) -> None:
    for path in paths:
        result = evaluate(path)
        judge, flag = result.judge, result.lexical_flag
        print(f"{path.name}: {result.cases} cases")
        print(f"  local judge  : precision {judge.precision:.3f} recall {judge.recall:.3f} AUROC {result.judge_auroc:.3f} "
              f"(TP {judge.tp} FP {judge.fp} FN {judge.fn} TN {judge.tn})")
        print(f"  lexical flag : precision {flag.precision:.3f} recall {flag.recall:.3f} AUROC {result.lexical_auroc:.3f} "
              f"(TP {flag.tp} FP {flag.fp} FN {flag.fn} TN {flag.tn})")
        print("  wrong by kind:", dict(sorted((k, v) for k, v in result.wrong_by_kind.items() if v)) or "none")
        print("  stages (expected -> attributed):",
              ", ".join(f"{e}->{a} {n}" for (e, a), n in sorted(result.stages.items())))
        if result.unexpected_fallbacks:
            print("  answers taken for fallbacks:", result.unexpected_fallbacks)


if __name__ == "__main__":
    main([Path(arg) for arg in sys.argv[1:]] or list(TABLES))
