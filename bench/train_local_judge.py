"""Trains the local judge's model (judging/judge_model.py) on public human-labelled benchmarks, and measures it
with each benchmark left out.

    python bench/train_local_judge.py train --items /tmp/judge_items.jsonl [--out judging/model/local_judge.v5.json]
    python bench/train_local_judge.py lobo --items /tmp/judge_items.jsonl [--limit 3000] [--bootstrap 1000]
                                                                     [--half development]
    (or --mirror DIR instead of --items: bench/judge_benchmarks.py loads the benchmarks)

The items are bench/judge_benchmarks.py's; the model learns from the development halves only (Item.held_out is
decided by the id's hash before any model existed) of the benchmarks with human labels on both sides (BEGIN,
FaithBench, LFQA-Verification, OCNLI: Benchmark.trains; XNLI-zh, UHGEval and HaluEval QA are reported only). Each
answer is read by the local judge itself (LocalJudge.features: the claims' evidence as judge() computes it); an
answer without a claim is no training row (the judge calls it grounded without its model).

The fit: standardised features, logistic regression by Newton's method with an L2 penalty of L2 on the
coefficients (not the intercept), each benchmark's answers weighing as much in all as another's (BEGIN's 2,058
answers would otherwise outweigh FaithBench's 327 six to one); a rule's feature (NONNEGATIVE) that would come out
negative is held at 0 and the rest refitted, the most negative first: a fault found never argues for support. The
threshold is the lowest probability at which no training benchmark has more than FALSE_POSITIVES of its faithful
answers at or above it (a pooled share let FaithBench's long summaries, the least supported-looking faithful
answers, reach 22% of theirs, and a benchmark left out as many); the uncertain band around it holds UNCERTAIN of the
training answers, and a hallucination is past it. All were chosen, with the features, on leave-one-benchmark-out
runs over the development halves alone, and on the own table's development cases (docs/judging.md).

`train` writes the model file (every benchmark's development half); `lobo` fits one model per left-out benchmark
on the others' development halves and prints bench/lobo_judge.py's table for it beside the baselines, then
its AUROC minus the lexical score's on each benchmark with a paired bootstrap interval.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec
import numpy as np
from prometheus_client import CollectorRegistry

from eval_local_judge import Item
from judge_benchmarks import BENCHMARKS, load_all, read_dump, subsample
from lobo_judge import Lexical, Scorer, Verdict, baselines, compare, run, table
from ragpulse.judging.judge_features import FEATURE_NAMES, FEATURES_VERSION
from ragpulse.judging.judge_model import JudgeModel, TrainedOn
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.scorers.refusal import read

L2 = 1.0
FALSE_POSITIVES = 0.14  # of each training benchmark's faithful answers, at most, at or above the threshold
UNCERTAIN = 0.10  # of the training answers, in the band around the threshold
VERSION = "local_judge.v5"
NONNEGATIVE = ("contradicted_quantity", "contradicted_wording", "missing_quantity", "missing_name")
COMMAND = "python bench/train_local_judge.py train --items /tmp/judge_items.jsonl --out judging/model/local_judge.v5.json"


class Features:
    """The judge's feature vector of each item, computed once (the chunk cache big enough for every benchmark)."""

    def __init__(self) -> None:
        self._judge = LocalJudge(CollectorRegistry(), cache_entries=100_000, cache_max_bytes=4 << 30)
        self._vectors: dict[str, list[float] | None] = {}

    def __call__(self, item: Item) -> list[float] | None:
        if item.id not in self._vectors:
            self._vectors[item.id] = self._judge.features(item.event())
        return self._vectors[item.id]


def _logistic(z: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Weights (the last the intercept) minimising the log loss, each row's times its `weight`, plus L2 / 2 times the
    squared coefficients."""
    design = np.hstack([z, np.ones((len(z), 1))])
    penalty = np.diag([L2] * z.shape[1] + [0.0])
    w = np.zeros(design.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-design @ w))
        step = np.linalg.solve((design * (weight * p * (1 - p))[:, None]).T @ design + penalty + 1e-9 * np.eye(len(w)),
                               design.T @ (weight * (p - y)) + penalty @ w)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def _constrained(z: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """_logistic's weights with the NONNEGATIVE features' coefficients at 0 or above (an active set)."""
    free = list(range(z.shape[1]))
    while True:
        w = _logistic(z[:, free], y, weight)
        negative = [(c, i) for c, i in zip(w, free) if c < 0 and FEATURE_NAMES[i] in NONNEGATIVE]
        if not negative:
            weights = np.zeros(z.shape[1] + 1)
            weights[free + [-1]] = w
            return weights
        free.remove(min(negative)[1])


def _threshold(p: np.ndarray, y: np.ndarray, benchmark: np.ndarray) -> float:
    """The lowest probability with at most FALSE_POSITIVES of each benchmark's faithful answers at or above it."""
    return max(float(np.quantile(p[(y == 0) & (benchmark == name)], 1 - FALSE_POSITIVES))
               for name in np.unique(benchmark[y == 0]))


def fit(train: Sequence[Item], features: Features) -> JudgeModel:
    rows = [(x, item) for item in train if (x := features(item)) is not None]
    x = np.array([r[0] for r in rows])
    y = np.array([item.hallucinated for _, item in rows], dtype=float)
    benchmark = np.array([item.benchmark for _, item in rows])
    names, index, counts = np.unique(benchmark, return_inverse=True, return_counts=True)
    weight = len(rows) / (len(names) * counts[index])  # each benchmark's rows weigh len(rows) / len(names) in all
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0  # a feature constant in training (no Chinese answer) gets no weight, not a division by 0
    w = _constrained((x - mean) / scale, y, weight)
    p = 1 / (1 + np.exp(-(((x - mean) / scale) @ w[:-1] + w[-1])))
    threshold = _threshold(p, y, benchmark)
    band = float(np.quantile(np.abs(p - threshold), UNCERTAIN))
    trained_on = [TrainedOn(name, sum(i.benchmark == name for _, i in rows), sum(i.benchmark == name and i.hallucinated
                                                                                 for _, i in rows))
                  for name in dict.fromkeys(i.benchmark for _, i in rows)]
    return JudgeModel(VERSION, FEATURES_VERSION, list(FEATURE_NAMES), [round(float(v), 6) for v in mean],
                      [round(float(v), 6) for v in scale], [round(float(v), 6) for v in w[:-1]], round(float(w[-1]), 6),
                      round(threshold, 4), round(band, 4), trained_on, COMMAND, L2)


def declines(item: Item, features: Features) -> bool:
    """Whether the judge reads the answer as declining, wholly or in part: no claim to judge, or a clause that refuses
    or may (scorers/refusal.py's reading, before the judge weighs the maybe-refusals)."""
    reading = read(item.answer)
    return features(item) is None or bool(reading.refusals) or any(reading.maybe)


class TrainedJudge:
    """The local judge with a model fitted on the training items (Scorer of bench/lobo_judge.py): its probability,
    its hallucination verdict and its abstentions, as judge() gives them from the same features."""

    name = "local judge, model (fitted on the others)"

    def __init__(self, features: Features) -> None:
        self._features = features
        self._model: JudgeModel | None = None

    def fit(self, train: Sequence[Item]) -> None:
        self._model = fit(train, self._features)

    def verdict(self, item: Item) -> Verdict:
        assert self._model is not None, "fit first"
        x = self._features(item)
        if x is None:  # no claim: grounded, as judge() says
            return Verdict(0.0, 0.0, False, False)
        p = self._model.probability(x)
        said = self._model.verdict(p)
        return Verdict(p, p, said == "hallucination", said == "uncertain")


def _load(args: argparse.Namespace) -> dict[str, list[Item]]:
    return read_dump(args.items) if args.items else load_all(args.mirror)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("train", "lobo"))
    parser.add_argument("--items", type=Path, help="a dump of bench/judge_benchmarks.py (else --mirror is read)")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"),
                        help="a folder of bare clones, DIR/<owner>+<name>/repo")
    parser.add_argument("--out", type=Path, default=Path("judging/model/local_judge.v5.json"), help="train: the model file")
    parser.add_argument("--limit", type=int, default=3000, help="lobo: items per benchmark at most (by the id hash)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="lobo: resamples for the AUROC interval")
    parser.add_argument("--half", choices=("held-out", "development"), default="held-out",
                        help="lobo: the left-out benchmark's half measured (design on the development halves)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    loaded = _load(args)
    trains = {b.name for b in BENCHMARKS if b.trains and b.name in loaded}
    features = Features()
    if args.command == "train":
        model = fit([i for b in BENCHMARKS if b.name in trains for i in loaded[b.name] if not i.held_out], features)
        args.out.write_bytes(msgspec.json.format(msgspec.json.encode(model), indent=2) + b"\n")
        print(f"{args.out}: " + ", ".join(f"{t.benchmark} {t.answers:,}" for t in model.trained_on)
              + f"; threshold {model.threshold} ± {model.band}")
        print("\n".join(f"{name:24s} {c:+.3f}" for name, c in zip(model.features, model.coefficients, strict=True)))
    else:
        benchmarks = {name: subsample(items, args.limit) for name, items in loaded.items()}
        scorers: list[Scorer] = [TrainedJudge(features), *(s for s in baselines() if not s.name.startswith("local judge"))]
        held_out = args.half == "held-out"
        print("\n".join(table(run(benchmarks, scorers, trains=trains, rounds=args.bootstrap, held_out=held_out), trains)))
        print("\n" + "\n".join(compare(benchmarks, scorers[0], Lexical(), trains=trains, rounds=args.bootstrap,
                                       held_out=held_out)))
        # BEGIN's annotators call a hedge ("i don't really know, but he was a pioneer of rockabilly") not attributable;
        # the judge never calls a refusal a hallucination, and judges a partial refusal's claims alone
        print("\n" + "\n".join(compare(benchmarks, scorers[0], Lexical(), trains=trains, rounds=args.bootstrap,
                                       held_out=held_out, keep=lambda item: not declines(item, features),
                                       rows=", answers the judge does not read as declining")))
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
