"""The local judge on public, human-labelled hallucination benchmarks it was never tuned on.

    python bench/eval_public.py [--mirror /work/.mirror]

Datasets (read from repository snapshots, never committed; fetch them with the `fetch` tool or `git clone`):
- BEGIN (google/BEGIN-dataset, wow/begin_{dev,test}_wow.tsv; its licence is in the repository's wow/LICENSE): a knowledge sentence, a user turn and a
  dialogue model's response, labelled "Fully attributable" (faithful) or "Not fully attributable"; "Generic" dropped.
  Mapped to a trace: the user turn is the question, the knowledge the one chunk, the response the answer.
- FaithBench (vectara/FaithBench, FaithBench.csv; licence in its LICENSE): a news-like source and an LLM's summary; the
  summary is hallucinated when its worst annotation is "Unwanted", faithful when "Consistent" or "Benign";
  "Questionable" is dropped as ambiguous. Mapped to a trace: "Summarize the passage." over the source as the chunk.

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
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import CollectorRegistry

from ragpulse.app.factories import local_judge
from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.config import Config


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    question: str
    answer: str
    context: str
    hallucinated: bool

    @property
    def held_out(self) -> bool:
        return int(hashlib.sha256(self.id.encode()).hexdigest(), 16) % 2 == 1


def snapshot_file(mirror: Path, repo: str, path: str) -> str:
    git_dir = mirror / repo / "repo"
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


def begin(mirror: Path) -> list[Item]:
    items = []
    for split in ("dev", "test"):
        rows = csv.DictReader(io.StringIO(snapshot_file(mirror, "google+BEGIN-dataset", f"wow/begin_{split}_wow.tsv")),
                              delimiter="\t", quoting=csv.QUOTE_NONE)
        for number, row in enumerate(rows):
            label = row["begin_label"].strip()
            if label in ("Fully attributable", "Not fully attributable"):
                items.append(Item(f"begin:{split}:{number}", row["message"], row["response"], row["knowledge"],
                                  label == "Not fully attributable"))
    return items


def faithbench(mirror: Path) -> list[Item]:
    items = []
    for number, row in enumerate(csv.DictReader(io.StringIO(snapshot_file(mirror, "vectara+FaithBench", "FaithBench.csv")))):
        worst = row["worst-label"].strip()
        if worst == "Questionable":
            continue
        items.append(Item(f"faithbench:{number}", "Summarize the passage.", row["summary"].strip(), row["source"].strip(),
                          worst == "Unwanted"))
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


def evaluate(name: str, items: list[Item]) -> list[str]:
    judge = local_judge(Config().judge, CollectorRegistry())
    risks: dict[str, float] = {}
    flags: dict[str, bool] = {}
    for item in items:
        judged = judge.judge(TraceEvent(trace_id=item.id, query=item.question, answer=item.answer,
                                        chunks=[Chunk(text=item.context)]))
        grounded = judged.groundedness if judged.groundedness is not None else 3
        share = judged.supported_share if judged.supported_share is not None else 0.5
        risks[item.id] = (5 - grounded) / 4 + 0.01 * (1 - share)  # the verdict, ties broken by the claims' support
        flags[item.id] = bool(judged.hallucination)
    dev = [i for i in items if not i.held_out]
    median_length = statistics.median(len(i.answer) for i in dev)
    rows = []
    for half, part in (("development", dev), ("held out", [i for i in items if i.held_out])):
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args(argv)
    print("| benchmark | half | n | base rate | flag rate | FPR | precision | recall | F1 | AUROC | flag-all F1 "
          "| length: precision / F1 | length AUROC |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, load in (("BEGIN (WoW)", begin), ("FaithBench", faithbench)):
        for row in evaluate(name, load(args.mirror)):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
