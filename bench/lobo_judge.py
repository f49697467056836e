"""Leave-one-benchmark-out: how a hallucination scorer does on a public benchmark it never learned from.

    python bench/lobo_judge.py --items /tmp/judge_items.jsonl [--limit 3000] [--bootstrap 1000]
    python bench/lobo_judge.py --mirror /work/.mirror ...   (loads the benchmarks instead of a dump)

For each benchmark of bench/judge_benchmarks.py in turn, every scorer is fitted on the development halves of the
others that have human labels on both sides (Benchmark.trains), then measured on the left-out benchmark's
held-out half: AUROC of its risk with a bootstrap 95% interval, the false-positive rate among faithful answers
and the recall of hallucinated ones at its shipped threshold, the expected calibration error of its probability
(10 equal bins), and the share it left "uncertain". Benchmarks larger than --limit keep the items lowest by a
second hash of the id (judge_benchmarks.subsample), before the halves.

A scorer is anything with `name`, `fit(train_items)` and `verdict(item) -> Verdict | None` (None: it says nothing
of that item, as a detector a benchmark did not ship); `Model` makes one of a function item -> risk and an optional
fit. `run()` and `table()` take any list of them: a trained model is measured beside the baselines here by calling
them with it. The baselines on the same rows: the current local judge as shipped (no fitting), the same with its
risk calibrated (Platt) on the training benchmarks, the lexical support score alone (its shipped pre-filter flag;
its probability Platt-fitted), the answer's length (Platt-fitted), flag-everything (its probability the training
base rate) and any detector predictions the benchmark ships.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from prometheus_client import CollectorRegistry

from eval_local_judge import Item, risk
from judge_benchmarks import BENCHMARKS, FAITHBENCH_DETECTORS, load_all, read_dump, subsample
from ragpulse.app.components import local_judge
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.scorers.lexical import LexicalScorer


@dataclass(frozen=True, slots=True)
class Verdict:
    risk: float  # orders answers, higher likelier hallucinated (AUROC)
    probability: float  # the chance that it is a hallucination, 0-1 (calibration)
    flagged: bool | None  # at the scorer's shipped threshold; None: it has none
    uncertain: bool | None  # abstained; None: it cannot


class Scorer(Protocol):
    name: str

    def fit(self, train: Sequence[Item]) -> None: ...

    def verdict(self, item: Item) -> Verdict | None: ...


class Model:
    """A function item -> risk (a probability, flagged from `threshold`), fitted by `fit` when it learns."""

    def __init__(self, name: str, score: Callable[[Item], float],
                 fit: Callable[[Sequence[Item]], None] | None = None, threshold: float = 0.5) -> None:
        self.name, self._score, self._fit, self._threshold = name, score, fit, threshold

    def fit(self, train: Sequence[Item]) -> None:
        if self._fit is not None:
            self._fit(train)

    def verdict(self, item: Item) -> Verdict:
        p = self._score(item)
        return Verdict(p, p, p >= self._threshold, None)


class LocalJudge:
    """The local judge as shipped: risk from its verdict and confidence (eval_local_judge.risk), its
    hallucination flag, its "uncertain" abstentions. Judgments are cached by item id: the judge is fixed."""

    name = "local judge (as shipped)"

    def __init__(self) -> None:
        self._judge = local_judge(Config().judge, CollectorRegistry())
        self._cache: dict[str, Verdict] = {}

    def fit(self, train: Sequence[Item]) -> None:
        """Nothing to learn."""

    def verdict(self, item: Item) -> Verdict:
        cached = self._cache.get(item.id)
        if cached is None:
            judged = self._judge.judge(item.event())
            r = risk(judged)
            cached = self._cache[item.id] = Verdict(r, r, judged.hallucination, judged.groundedness_verdict == "uncertain")
        return cached


class Lexical:
    """The lexical support score alone (scorers/lexical.py, the fast path's): risk 1 - groundedness, flagged as
    the sampler's pre-filter flags (a number no chunk has, or support under judge.flag_support_below). An answer
    without a word or number to score ("Yes.") has none unsupported: risk 0, not flagged, as in the fast path."""

    name = "lexical support"

    def __init__(self) -> None:
        registry = CollectorRegistry()
        self._scorer = LexicalScorer(registry, LabelGuard(["app"], 10, 10, registry))
        self._below = Config().judge.flag_support_below
        self._cache: dict[str, Verdict] = {}

    def fit(self, train: Sequence[Item]) -> None:
        """Nothing to learn."""

    def verdict(self, item: Item) -> Verdict:
        cached = self._cache.get(item.id)
        if cached is None:
            scores = self._scorer.score(item.event())
            assert scores is not None, item.id  # every item has chunk texts
            unsupported = 0.0 if scores.groundedness is None else 1 - scores.groundedness
            flagged = scores.number_mismatch or (scores.groundedness is not None and scores.groundedness < self._below)
            cached = self._cache[item.id] = Verdict(unsupported, unsupported, flagged, None)
        return cached


class Length:
    """The answer's length (log characters): longer answers have more to get wrong."""

    name = "answer length"

    def fit(self, train: Sequence[Item]) -> None:
        """Nothing to learn."""

    def verdict(self, item: Item) -> Verdict:
        x = math.log1p(len(item.answer))
        return Verdict(x, x, None, None)


class FlagAll:
    """Flags everything; its probability is the training benchmarks' base rate."""

    name = "flag everything"

    def __init__(self) -> None:
        self._prior = 0.5

    def fit(self, train: Sequence[Item]) -> None:
        self._prior = sum(i.hallucinated for i in train) / len(train) if train else 0.5

    def verdict(self, item: Item) -> Verdict:
        return Verdict(1.0, self._prior, True, None)


class Detector:
    """A detector's prediction as the benchmark ships it (a risk, 0-1), flagged at 0.5."""

    def __init__(self, key: str) -> None:
        self.name, self._key = f"shipped: {key}", key

    def fit(self, train: Sequence[Item]) -> None:
        """Nothing to learn: shipped as is."""

    def verdict(self, item: Item) -> Verdict | None:
        r = item.detectors.get(self._key)
        return None if r is None else Verdict(r, r, r >= 0.5, None)


class Platt:
    """`base` with its risk mapped to a probability by a logistic fit on the training items (Platt scaling):
    its ranking and its flags stay the base's, only its calibration is learned."""

    def __init__(self, base: Scorer, name: str) -> None:
        self.name, self._base = name, base
        self._a, self._b = 0.0, 0.0

    def fit(self, train: Sequence[Item]) -> None:
        pairs = [(v.risk, i.hallucinated) for i in train if (v := self._base.verdict(i)) is not None]
        self._a, self._b = logistic_fit(np.array([x for x, _ in pairs]), np.array([y for _, y in pairs], dtype=float))

    def verdict(self, item: Item) -> Verdict | None:
        v = self._base.verdict(item)
        if v is None:
            return None
        return Verdict(v.risk, 1 / (1 + math.exp(-(self._a * v.risk + self._b))), v.flagged, v.uncertain)


def logistic_fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3) -> tuple[float, float]:
    """p = sigmoid(a x + b) by Newton's method on the log loss, a little L2 on `a` so separable data converges."""
    a = b = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(a * x + b)))
        w = p * (1 - p)
        grad = np.array([np.dot(p - y, x) + l2 * a, np.sum(p - y)])
        hess = np.array([[np.dot(w, x * x) + l2, np.dot(w, x)], [np.dot(w, x), np.sum(w) + 1e-9]])
        step = np.linalg.solve(hess, grad)
        a, b = a - step[0], b - step[1]
        if abs(step).max() < 1e-9:
            break
    return float(a), float(b)


def auroc(scores: np.ndarray, positives: np.ndarray) -> float:
    """Mann–Whitney with ties averaged: the chance a hallucinated answer scores above a faithful one."""
    n_pos = int(positives.sum())
    n_neg = len(positives) - n_pos
    if not n_pos or not n_neg:
        return float("nan")
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[inverse]
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def auroc_interval(scores: np.ndarray, positives: np.ndarray, rounds: int, seed: int) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of AUROC over `rounds` resamples of the rows (with replacement)."""
    rng = np.random.default_rng(seed)
    draws = [auroc(scores[i], positives[i]) for i in (rng.integers(0, len(scores), len(scores)) for _ in range(rounds))]
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return float(low), float(high)


def ece(probabilities: np.ndarray, positives: np.ndarray, bins: int = 10) -> float:
    which = np.minimum((probabilities * bins).astype(int), bins - 1)
    return float(sum(abs(positives[which == b].mean() - probabilities[which == b].mean()) * (which == b).sum()
                     for b in range(bins) if (which == b).any()) / len(probabilities))


def _training(benchmarks: dict[str, list[Item]], left_out: str, trains: set[str]) -> list[Item]:
    """The development halves of the `trains` benchmarks but the one left out: what every scorer is fitted on."""
    return [i for name, part in benchmarks.items() if name != left_out and name in trains for i in part if not i.held_out]


def paired_difference(first: np.ndarray, second: np.ndarray, positives: np.ndarray, rounds: int,
                      seed: int) -> tuple[float, float, float]:
    """AUROC(first) - AUROC(second) on the same rows, with the 2.5th and 97.5th percentiles of that difference over
    `rounds` resamples of the rows (paired: both scorers on each resample)."""
    rng = np.random.default_rng(seed)
    draws = [auroc(first[i], positives[i]) - auroc(second[i], positives[i])
             for i in (rng.integers(0, len(first), len(first)) for _ in range(rounds))]
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return auroc(first, positives) - auroc(second, positives), float(low), float(high)


def compare(benchmarks: dict[str, list[Item]], first: Scorer, second: Scorer, *, trains: set[str], rounds: int = 1000,
            seed: int = 0, held_out: bool = True, keep: Callable[[Item], bool] | None = None, rows: str = "") -> list[str]:
    """A table of first's AUROC minus second's on each left-out benchmark's held-out half, fitted as run() fits them,
    on the rows both score (and `keep` keeps, named by `rows`), with a paired bootstrap interval."""
    lines = [f"| left out | n | AUROC, {first.name} minus {second.name}{rows} [95% CI, paired] |", "|---|---|---|"]
    for left_out, items in benchmarks.items():
        train = _training(benchmarks, left_out, trains)
        first.fit(train)
        second.fit(train)
        pairs = [(i, a, b) for i in items if i.held_out == held_out and (keep is None or keep(i))
                 if (a := first.verdict(i)) is not None and (b := second.verdict(i)) is not None]
        positives = np.array([i.hallucinated for i, _, _ in pairs])
        d, low, high = paired_difference(np.array([a.risk for _, a, _ in pairs]), np.array([b.risk for _, _, b in pairs]),
                                         positives, rounds, seed)
        lines.append(f"| {left_out} | {len(pairs):,} | {d:+.3f} [{low:+.3f}, {high:+.3f}] |")
    return lines


@dataclass(frozen=True, slots=True)
class Row:
    benchmark: str
    scorer: str
    n: int
    base_rate: float
    auroc: float
    interval: tuple[float, float]
    fpr: float | None
    recall: float | None
    ece: float
    uncertain: float | None


def measure(benchmark: str, scorer: str, rows: list[tuple[Item, Verdict]], rounds: int, seed: int) -> Row:
    positives = np.array([i.hallucinated for i, _ in rows])
    scores = np.array([v.risk for _, v in rows])
    flags = [v.flagged for _, v in rows]
    shipped = all(f is not None for f in flags)
    faithful, hallucinated = int((~positives).sum()), int(positives.sum())
    return Row(
        benchmark, scorer, len(rows), hallucinated / len(rows), auroc(scores, positives),
        auroc_interval(scores, positives, rounds, seed),
        sum(bool(f) and not p for f, p in zip(flags, positives, strict=True)) / faithful if shipped and faithful else None,
        sum(bool(f) and p for f, p in zip(flags, positives, strict=True)) / hallucinated if shipped and hallucinated else None,
        ece(np.array([v.probability for _, v in rows]), positives),
        sum(bool(v.uncertain) for _, v in rows) / len(rows) if all(v.uncertain is not None for _, v in rows) else None,
    )


def run(benchmarks: dict[str, list[Item]], scorers: Sequence[Scorer], *, trains: set[str], rounds: int = 1000,
        seed: int = 0, held_out: bool = True) -> list[Row]:
    """Each benchmark left out in turn: every scorer fitted on the development halves of the `trains` benchmarks
    but it, measured on its held-out half (held_out=False: its development half, where features are designed)."""
    rows = []
    for left_out, items in benchmarks.items():
        train = _training(benchmarks, left_out, trains)
        test = [i for i in items if i.held_out == held_out]
        for scorer in scorers:
            scorer.fit(train)
            judged = [(i, v) for i in test if (v := scorer.verdict(i)) is not None]
            if judged:
                rows.append(measure(left_out, scorer.name, judged, rounds, seed))
    return rows


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def table(rows: list[Row], trains: set[str]) -> list[str]:
    lines = ["| left out | scorer | n | base rate | AUROC [95% CI] | FPR | recall | ECE | uncertain |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r.benchmark} | {r.scorer} | {r.n:,} | {r.base_rate:.1%} | {r.auroc:.3f} [{r.interval[0]:.3f}, "
              f"{r.interval[1]:.3f}] | {_share(r.fpr)} | {_share(r.recall)} | {r.ece:.3f} | {_share(r.uncertain)} |"
              for r in rows]
    lines += ["", f"Means over the left-out benchmarks with human labels ({', '.join(sorted(trains))}) where the scorer "
              "has rows:", "", "| scorer | benchmarks | mean AUROC | mean ECE |", "|---|---|---|---|"]
    for name in dict.fromkeys(r.scorer for r in rows):
        own = [r for r in rows if r.scorer == name and r.benchmark in trains]
        if own:
            lines.append(f"| {name} | {len(own)} | {statistics.fmean(r.auroc for r in own):.3f} | "
                         f"{statistics.fmean(r.ece for r in own):.3f} |")
    return lines


def baselines() -> list[Scorer]:
    judge, lexical = LocalJudge(), Lexical()
    return [judge, Platt(judge, "local judge, Platt-calibrated"), Platt(lexical, "lexical support (Platt)"),
            Platt(Length(), "answer length (Platt)"), FlagAll(), *map(Detector, FAITHBENCH_DETECTORS)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=Path, help="a dump of bench/judge_benchmarks.py (else --mirror is read)")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"),
                        help="a folder of bare clones, DIR/<owner>+<name>/repo")
    parser.add_argument("--limit", type=int, default=3000, help="items per benchmark at most (by the id hash)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="resamples for the AUROC interval")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    loaded = read_dump(args.items) if args.items else load_all(args.mirror)
    benchmarks = {name: subsample(items, args.limit) for name, items in loaded.items()}
    trains = {b.name for b in BENCHMARKS if b.trains and b.name in benchmarks}
    print("Held-out halves; items per benchmark: " + ", ".join(
        f"{name} {len(part):,}" + (f" of {len(loaded[name]):,}" if len(part) < len(loaded[name]) else "")
        for name, part in benchmarks.items()) + f". Fitted on the development halves of the others among "
        f"{', '.join(sorted(trains))}. AUROC intervals from {args.bootstrap} resamples.\n")
    print("\n".join(table(run(benchmarks, baselines(), trains=trains, rounds=args.bootstrap), trains)))
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
