"""The local judge on public, human-labelled hallucination benchmarks it was never tuned on.

    python bench/eval_local_judge.py [--mirror /work/.mirror]

Datasets (read from repository snapshots, never committed; fetch them with the `fetch` tool or `git clone`):
- BEGIN (google/BEGIN-dataset, wow/begin_{dev,test}_wow.tsv; its licence is in the repository's wow/LICENSE): a knowledge sentence, a user turn and a
  dialogue model's response, labelled "Fully attributable" (faithful) or "Not fully attributable"; "Generic" dropped.
  Mapped to a trace: the user turn is the question, the knowledge the one chunk, the response the answer.
- FaithBench (vectara/FaithBench, FaithBench.csv; licence in its LICENSE): a news-like source and an LLM's summary; the
  summary is hallucinated when its worst annotation is "Unwanted", faithful when "Consistent" or "Benign";
  "Questionable" is dropped as ambiguous. Mapped to a trace: "Summarize the passage." over the source as the chunk.
  FaithBench's "Benign" is a hallucination in its taxonomy (true, but not in the source: what a groundedness judge
  exists to flag), so a second row drops those summaries as ambiguous too.

bench/judge_benchmarks.py adds more benchmarks to these two (its `dump` writes them all as one table) and
bench/lobo_judge.py measures a scorer on each with the others as its training data.

Tuning reads `--development` only. tests/data/begin_wow_sample.tsv is a small sample of BEGIN (CC BY 4.0) that
tests/test_local_judge.py evaluates with exact numbers.

Each item goes to the development or the held-out half by a hash of its id (fixed, decided before any tuning):
tuning may read the development half only. For each half: base rate, flag rate, the false-positive rate (flags
among faithful answers), precision, recall, F1, and AUROC of the judge's continuous risk; beside them a
flag-everything baseline and an answer-length baseline (AUROC of the length; flags above the development
half's median length).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client import CollectorRegistry

from ragpulse.app.components import local_judge
from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.config import Config
from ragpulse.judging.verdicts import Judgment


@dataclass(frozen=True, slots=True)
class Item:
    """One labelled answer: its question, its retrieved chunks and whether humans found it hallucinated;
    `detectors`: what detectors the benchmark ships said of it, each as a risk in 0-1 (1: hallucinated)."""

    id: str
    question: str
    answer: str
    chunks: tuple[str, ...]
    hallucinated: bool
    benchmark: str = ""
    language: str = "en"
    detectors: Mapping[str, float] = field(default_factory=dict)

    def event(self) -> TraceEvent:
        return TraceEvent(trace_id=self.id, query=self.question, answer=self.answer,
                          chunks=[Chunk(text=text) for text in self.chunks])

    @property
    def held_out(self) -> bool:
        return int(hashlib.sha256(self.id.encode()).hexdigest(), 16) % 2 == 1


def snapshot_file(mirror: Path, repo: str, path: str) -> str:
    git_dir = mirror / repo / "repo"
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


def begin_items(tsv: str, split: str) -> list[Item]:
    """BEGIN's rows (a TSV of its own columns; a sample adds `item`, the row's id in the full set)."""
    items = []
    for number, row in enumerate(csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE)):
        label = row["begin_label"].strip()
        if label in ("Fully attributable", "Not fully attributable"):
            items.append(Item(row.get("item") or f"begin:{split}:{number}", row["message"], row["response"],
                              (row["knowledge"],), label == "Not fully attributable"))
    return items


def begin(mirror: Path) -> list[Item]:
    return [item for split in ("dev", "test")
            for item in begin_items(snapshot_file(mirror, "google+BEGIN-dataset", f"wow/begin_{split}_wow.tsv"), split)]


def faithbench(mirror: Path, *, benign: bool | None = False) -> list[Item]:
    """`benign`: what a "Benign" summary is (FaithBench's hallucination that is not bad: true, but not in the
    source): faithful (False, as the issue measured), hallucinated (True), or dropped (None)."""
    items = []
    for number, row in enumerate(csv.DictReader(io.StringIO(snapshot_file(mirror, "vectara+FaithBench", "FaithBench.csv")))):
        worst = row["worst-label"].strip()
        if worst == "Questionable" or (worst == "Benign" and benign is None):
            continue
        items.append(Item(f"faithbench:{number}", "Summarize the passage.", row["summary"].strip(), (row["source"].strip(),),
                          worst == "Unwanted" or (worst == "Benign" and bool(benign))))
    return items


def auroc(scores: list[float], positives: list[bool]) -> float:
    """Mann–Whitney: the chance a hallucinated answer scores above a faithful one, ties counting half."""
    ranked = sorted(zip(scores, positives, strict=True), key=lambda pair: pair[0])
    rank_sum, position, n_pos = 0.0, 0, sum(positives)
    while position < len(ranked):
        end = position
        while end < len(ranked) and ranked[end][0] == ranked[position][0]:
            end += 1
        mean_rank = (position + 1 + end) / 2
        rank_sum += mean_rank * sum(1 for _, positive in ranked[position:end] if positive)
        position = end
    n_neg = len(ranked) - n_pos
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg) if n_pos and n_neg else float("nan")


def scores_of(flags: list[bool], positives: list[bool]) -> dict[str, float]:
    tp = sum(f and p for f, p in zip(flags, positives, strict=True))
    fp = sum(f and not p for f, p in zip(flags, positives, strict=True))
    fn = sum(p and not f for f, p in zip(flags, positives, strict=True))
    negatives = len(positives) - sum(positives)
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    return {"flag_rate": sum(flags) / len(flags), "fpr": fp / negatives if negatives else float("nan"),
            "precision": precision, "recall": recall,
            "f1": 2 * precision * recall / (precision + recall) if tp else 0.0}


def risk(judged: Judgment) -> float:
    """The judge's probability that the answer is unsupported (judging/judge_model.py): its confidence is that its
    verdict is right, so a hallucination's is that probability and any other verdict's its complement."""
    confidence = judged.confidence if judged.confidence is not None else 0.0
    return confidence if judged.hallucination else 1 - confidence


def evaluate(name: str, items: list[Item], *, development_only: bool = False) -> list[str]:
    judge = local_judge(Config().judge, CollectorRegistry())
    risks: dict[str, float] = {}
    flags: dict[str, bool] = {}
    for item in items:
        judged = judge.judge(item.event())
        risks[item.id] = risk(judged)
        flags[item.id] = bool(judged.hallucination)
    dev = [i for i in items if not i.held_out]
    median_length = statistics.median(len(i.answer) for i in dev)
    rows = []
    halves = [("development", dev)] + ([] if development_only else [("held out", [i for i in items if i.held_out])])
    for half, part in halves:
        positives = [i.hallucinated for i in part]
        judge_scores = scores_of([flags[i.id] for i in part], positives)
        everything = scores_of([True] * len(part), positives)
        length = scores_of([len(i.answer) > median_length for i in part], positives)
        base = sum(positives) / len(part)
        cells = [
            f"{judge_scores['flag_rate']:.1%}", f"{judge_scores['fpr']:.1%}", f"{judge_scores['precision']:.3f}",
            f"{judge_scores['recall']:.3f}", f"{judge_scores['f1']:.3f}", f"{auroc([risks[i.id] for i in part], positives):.3f}",
            f"{everything['f1']:.3f}", f"{length['precision']:.3f} / {length['f1']:.3f}",
            f"{auroc([float(len(i.answer)) for i in part], positives):.3f}",
        ]
        rows.append(f"| {name} | {half} | {len(part)} | {base:.1%} | " + " | ".join(cells) + " |")
    return rows


def cost(items: list[Item], rounds: int = 3) -> tuple[float, float]:
    """Median and 90th percentile, in µs, of one judged trace with its chunk cached (the chunk analysed once
    before the clock runs, as a knowledge base's chunks recur): the best of `rounds` rounds per item."""
    judge = local_judge(Config().judge, CollectorRegistry())
    events = [i.event() for i in items]
    timings = []
    for event in events:
        judge.judge(event)
        best = float("inf")
        for _ in range(rounds):
            started = time.perf_counter()
            judge.judge(event)
            best = min(best, time.perf_counter() - started)
        timings.append(best * 1e6)
    timings.sort()
    return statistics.median(timings), timings[int(0.9 * (len(timings) - 1))]


BENCHMARKS = (
    ("BEGIN (WoW)", begin),
    ("FaithBench", faithbench),
    ("FaithBench, Benign dropped", lambda mirror: faithbench(mirror, benign=None)),
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"),
                        help="a folder of bare clones, DIR/<owner>+<name>/repo")
    parser.add_argument("--development", action="store_true", help="the development halves only (for tuning)")
    parser.add_argument("--cost", action="store_true", help="the judge's time per trace on each benchmark, chunks cached")
    args = parser.parse_args(argv)
    if args.cost:
        for name, load in BENCHMARKS[:2]:
            items = load(args.mirror)
            for low, high in ((0, 10**9), (700, 1100)):
                part = [i for i in items if low <= sum(map(len, i.chunks)) < high]
                if part:
                    median, p90 = cost(part)
                    print(f"{name}, sources of {low}-{min(high, 10**6) - 1} characters: {len(part)} traces, median source "
                          f"{statistics.median(sum(map(len, i.chunks)) for i in part):.0f} characters, answer "
                          f"{statistics.median(len(i.answer) for i in part):.0f}: median {median:.0f} µs, p90 {p90:.0f} µs")
        return 0
    print("| benchmark | half | n | base rate | flag rate | FPR | precision | recall | F1 | AUROC | flag-all F1 "
          "| length: precision / F1 | length AUROC |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, load in BENCHMARKS:
        for row in evaluate(name, load(args.mirror), development_only=args.development):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
