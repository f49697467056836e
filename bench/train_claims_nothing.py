"""Trains the local judge's learned reading of clauses that claim nothing (judging/claims_nothing.py), and measures
its transfer leave-one-set-out over the refusal sets (issue 44).

    python bench/train_claims_nothing.py loso --items /tmp/judge_items.jsonl [--sets q38,q39,...] [--thresholds 0.5,0.9]
                                                                            [--bits 18]
    python bench/train_claims_nothing.py train --items /tmp/judge_items.jsonl [--out judging/model/claims_nothing.v1.json]
    python bench/train_claims_nothing.py cost --items /tmp/judge_items.jsonl

The data: tests/data/refusals_dev.jsonl (never the held-out sets), each answer cut into the clauses the judge reads
(scorers/refusal.py's `read` of the answer as spoken: its claims and its refusals). Every clause of a refusal claims
nothing (positive). A partial refusal holds at least one claim, which clause is not labelled: multiple-instance
learning, the clause of each partial the current fit finds least like nothing is a claim (negative), its others left
out, refitted twice. Claims besides: the sentences of the sets' knowledge base (tests/data/refusals_kb.json) and the
clauses of the development halves' answers of the public benchmarks in --items (bench/judge_benchmarks.py's dump;
never the held-out halves), an English clause a rule reads as declining (scorers/refusal_gate.may_refuse: BEGIN's
hedges "I don't know much about it") left out. Each group's rows weigh as much in all as POSITIVE, PARTIAL,
BENCHMARK and KNOWLEDGE say.

The fit: logistic regression on the hashed features, full-batch Adam with an L2 penalty, EPOCHS passes; the weights
rounded to half precision as the model file holds them. A set is the batch its ids name (en-refusal-q4101: q41;
q302: q3; -g012: g); `loso` fits without each set and measures it with the learned gate in the local judge and
without (the tallies of tests/test_local_judge_refusal_sets.py's `_measure`, plus the model alone: every clause of
the answer at or above the threshold). Its rows are printed per set, for runs over a few sets at a time to be summed.
`cost` times the shipped gate on the answers whose claims it reads (development rows, every benchmark answer).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from prometheus_client import CollectorRegistry

from judge_benchmarks import read_dump
from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.config import Config
from ragpulse.judging.claims_nothing import BITS, MAX_CLAIMS, SHAPES, ClaimsNothing, encoded, indices, shipped
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.scorers.fallback import FallbackDetector
from ragpulse.scorers.refusal import read
from ragpulse.scorers.refusal_gate import CJK, answer_may_refuse, may_refuse
from ragpulse.scorers.speech_markup import spoken

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
VERSION = "claims_nothing.v1"
EPOCHS, RATE, L2 = 80, 0.05, 1e-7
POSITIVE, PARTIAL, BENCHMARK, KNOWLEDGE, NEGATED = 1.0, 0.5, 0.6, 0.15, 0.3
BENCHMARK_CLAUSES = 40_000  # of the development halves' clauses, at most, spread over the benchmarks
MIL_ROUNDS = 2
# A clause claims nothing at or above this probability: chosen on the leave-one-set-out runs with the benchmarks'
# judgments beside them (docs/benchmarks-log.md: 0.5 turned 35 benchmark answers into refusals, 0.9 five)
THRESHOLD = 0.9


def set_of(row_id: str) -> str:
    """The batch a row's id names: en-refusal-q4101 -> q41, zh-partial-q302 -> q3, en-refusal-g012 -> g."""
    tail = row_id.split("-", 2)[2]
    digits = re.match(r"q(\d+)", tail)
    if digits is None:
        return "0" if tail[0].isdigit() else tail[0]
    number = digits.group(1)
    return "q" + (number[:2] if len(number) == 4 else number[:1] if number[0] not in "01" else "")


def clauses(answer: str) -> list[str]:
    reading = read(spoken(answer))
    return [text for text in reading.claims + reading.refusals if text.strip()]


class Corpus:
    """Every development row's clauses as feature indices (2^bits hashed), and the claims from outside the sets."""

    def __init__(self, items: Path, bits: int) -> None:
        self.bits = bits
        self.rows = [json.loads(line) for line in (DATA / "refusals_dev.jsonl").read_text(encoding="utf-8").splitlines()]
        self.knowledge = json.loads((DATA / "refusals_kb.json").read_text(encoding="utf-8"))
        self.texts = {row["id"]: clauses(row["a"]) for row in self.rows}
        self.features = {key: [self.indices(t) for t in texts] for key, texts in self.texts.items()}
        kb = [text for chunk in self.knowledge.values() for text in clauses(chunk)]
        benchmark = _benchmark_clauses(items)
        self.kb = [self.indices(text) for text in kb]
        self.benchmark = [self.indices(t) for t in benchmark]
        self.negated = [self.indices(t) for t in map(negated, kb + benchmark) if t is not None]

    def indices(self, text: str) -> np.ndarray:
        return np.array(indices(text, self.bits), dtype=np.int64)

    def sets(self) -> list[str]:
        return list(dict.fromkeys(set_of(row["id"]) for row in self.rows))


def _benchmark_clauses(items: Path) -> list[str]:
    """Claims of the development halves, spread evenly over the benchmarks (a fixed draw)."""
    loaded = read_dump(items)
    per = BENCHMARK_CLAUSES // len(loaded)
    rng = np.random.default_rng(44)
    found: list[str] = []
    for part in loaded.values():
        texts = [t for item in part if not item.held_out for t in read(item.answer[:2000]).claims[:6]
                 if t.strip() and not (t.isascii() and may_refuse(t))]
        found += [texts[i] for i in rng.permutation(len(texts))[:per]]
    return found


_THERE_IS = re.compile(r"\b(there(?: i|\W)s|there are|there was|there were)\s+(?:a|an|some|any)?\s*", re.IGNORECASE)
_EN_VERB = re.compile(r"\b(is|are|was|were|can|will|could|would|should|must|may|has|have|does|do|did)\b", re.IGNORECASE)
_ZH_VERB = re.compile("是|可以|能|会(?!员)|有|需要|支持|提供|包括")
_SPEAKER = re.compile(r"\b(?:i|me|my|i'm|i've|i'd|i'll)\b|我(?!们)|本助手|小助手", re.IGNORECASE)


def negated(claim: str) -> str | None:
    """The claim with its first verb negated ("There is a 15% fee" -> "There is no 15% fee", "Returns are free" ->
    "Returns are not free", 支持退货 -> 不支持退货): a fact negated is still a claim, and the model learns that a
    negation alone does not make a clause a refusal. None for the speaker's own (a refusal negates the speaker's
    knowing) and a clause without such a verb."""
    if _SPEAKER.search(claim):
        return None
    if CJK.search(claim):
        return _ZH_VERB.sub(lambda verb: "没有" if verb[0] == "有" else "不" + verb[0], claim, count=1) if _ZH_VERB.search(
            claim) else None
    if _THERE_IS.search(claim):
        return _THERE_IS.sub(lambda there: there[1] + " no ", claim, count=1)
    return _EN_VERB.sub(lambda verb: verb[0] + " not", claim, count=1) if _EN_VERB.search(claim) else None


def fit(rows: list[np.ndarray], y: np.ndarray, weight: np.ndarray, width: int) -> np.ndarray:
    """Logistic regression weights by full-batch Adam: the rows' summed weighted log loss plus L2 / 2 |w|^2."""
    lengths = np.array([len(r) for r in rows])
    flat, starts = np.concatenate(rows), np.r_[0, np.cumsum(lengths)[:-1]]
    row_of = np.repeat(np.arange(len(rows)), lengths)
    w, m, v = np.zeros(width), np.zeros(width), np.zeros(width)
    weight = weight / weight.sum()
    for step in range(1, EPOCHS + 1):
        p = 1 / (1 + np.exp(-np.add.reduceat(w[flat], starts)))
        gradient = np.bincount(flat, weights=(weight * (p - y))[row_of], minlength=width) + L2 * w
        m = 0.9 * m + 0.1 * gradient
        v = 0.999 * v + 0.001 * gradient**2
        w -= RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w.astype(np.float16).astype(np.float64)  # as the model file holds them


def _scores(w: np.ndarray, rows: list[np.ndarray]) -> np.ndarray:
    return np.array([w[r].sum() for r in rows])


def train(corpus: Corpus, left_out: str | None = None) -> np.ndarray:
    """Fitted without the rows of set `left_out` (None: on every development set, the shipped model): refusals'
    clauses against claims, each partial's least nothing-like clause a claim, MIL_ROUNDS times."""
    kept = [row for row in corpus.rows if set_of(row["id"]) != left_out]
    positives = [f for row in kept if row["kind"] == "refusal" for f in corpus.features[row["id"]]]
    partials = [row["id"] for row in kept if row["kind"] == "partial" and corpus.features[row["id"]]]
    groups = [(positives, 1.0, POSITIVE), (corpus.benchmark, 0.0, BENCHMARK), (corpus.kb, 0.0, KNOWLEDGE),
              (corpus.negated, 0.0, NEGATED)]
    width = (1 << corpus.bits) + SHAPES
    w = _fit_groups(groups, width)
    for _ in range(MIL_ROUNDS):
        picked = [(key, int(np.argmin(_scores(w, corpus.features[key])))) for key in partials]
        claims = [corpus.features[key][at] for key, at in picked]
        # the claims negated, as the knowledge base's and the benchmarks' are: the sets' own short claims
        negations = [corpus.indices(t) for key, at in picked if (t := negated(corpus.texts[key][at])) is not None]
        w = _fit_groups(groups + [(claims, 0.0, PARTIAL), (negations, 0.0, PARTIAL)], width)
    return w


def _fit_groups(groups: list[tuple[list[np.ndarray], float, float]], width: int) -> np.ndarray:
    rows = [r for group, _, _ in groups for r in group]
    y = np.concatenate([np.full(len(group), label) for group, label, _ in groups])
    weight = np.concatenate([np.full(len(group), share / len(group)) for group, _, share in groups])
    return fit(rows, y, weight, width)


def measure(judge: LocalJudge, rows: Iterable[dict], knowledge: dict[str, str], alone: ClaimsNothing | None,
            texts: dict[str, list[str]]) -> Counter[str]:
    """The tallies the brief asks for: refusals recognised (by the fallback rules or the judge) and judged
    hallucinations; partials whose answer is a hallucination, by the truth of their claim; partials read as whole
    refusals; and, with `alone`, what the model alone reads as refusals (every clause at or above its threshold)."""
    detector = FallbackDetector([(r.name, r.pattern) for r in Config().all_fallback_rules()], empty_retrieval=True)
    tally: Counter[str] = Counter()
    for row in rows:
        event = TraceEvent(trace_id=row["id"], query=row["q"], answer=row["a"],
                           chunks=[Chunk(text=knowledge[key]) for key in row["chunks"]])
        result = judge.judge(event)
        refused = detector.detect(event) is not None or result.refusal
        if row["kind"] == "refusal":
            tally["refusals"] += 1
            tally["recognised"] += refused
            tally["hallucinations"] += result.hallucination
        else:
            tally[f"{row['expect']} partials"] += 1
            tally[f"{row['expect']} flagged"] += result.hallucination
            tally["partials refused"] += refused
        if alone is not None:
            said = bool(texts[row["id"]]) and all(alone.probability(t) >= alone.threshold for t in texts[row["id"]])
            tally["alone recognised" if row["kind"] == "refusal" else "alone partials refused"] += said
    return tally


_COLUMNS = ("recognised", "hallucinations", "hallucination flagged", "grounded flagged", "partials refused")


def _row(tally: Counter[str]) -> str:
    return (f"{tally['recognised']}/{tally['refusals']} | {tally['hallucinations']} | "
            f"{tally['hallucination flagged']}/{tally['hallucination partials']} | "
            f"{tally['grounded flagged']}/{tally['grounded partials']} | {tally['partials refused']}")


def loso(corpus: Corpus, sets: list[str], thresholds: list[float]) -> None:
    """Per left-out set: today's judge (which has seen it) and, per threshold, the judge with the gate fitted without
    it and the model alone; then the sums."""
    sums: dict[str, Counter[str]] = {}
    never = ClaimsNothing([0.0] * ((1 << BITS) + SHAPES), 2.0, "none")  # no probability reaches 2: the rules alone
    today = LocalJudge(CollectorRegistry(), cache_entries=1000, cache_max_bytes=100_000_000, claims_nothing=never)
    print("| set | judge today: recognised | hallucinations | unsupported partials flagged | supported flagged | "
          "partials refused | " + " | ".join(f"gate t={t}: recognised | hallucinations | unsupported flagged | "
                                             f"supported flagged | partials refused | alone: recognised | "
                                             f"partials refused" for t in thresholds) + " |")
    for left_out in sets:
        started = time.perf_counter()
        rows = [row for row in corpus.rows if set_of(row["id"]) == left_out]
        w = train(corpus, left_out)
        cells = [_row(_add(sums, "today", measure(today, rows, corpus.knowledge, None, corpus.texts)))]
        for t in thresholds:
            model = ClaimsNothing(w.tolist(), t, f"{VERSION} without {left_out}")
            judge = LocalJudge(CollectorRegistry(), cache_entries=1000, cache_max_bytes=100_000_000, claims_nothing=model)
            tally = _add(sums, str(t), measure(judge, rows, corpus.knowledge, model, corpus.texts))
            cells.append(f"{_row(tally)} | {tally['alone recognised']} | {tally['alone partials refused']}")
        print(f"| {left_out} | " + " | ".join(cells) + f" |  ({time.perf_counter() - started:.0f} s)", flush=True)
    print("| all | " + " | ".join([_row(sums["today"])] + [
        f"{_row(sums[str(t)])} | {sums[str(t)]['alone recognised']} | {sums[str(t)]['alone partials refused']}"
        for t in thresholds]) + " |")


def _add(sums: dict[str, Counter[str]], key: str, tally: Counter[str]) -> Counter[str]:
    sums.setdefault(key, Counter()).update(tally)
    return tally


class _Timed(ClaimsNothing):
    """The shipped model, timing the gate on the answers it reads past its first conditions (a few claims, not all
    supported, none contradicted), apart those whose claims its model reads (the answer has a cue of declining)."""

    def __init__(self, model: ClaimsNothing) -> None:
        super().__init__(model.weights, model.threshold, model.version)
        self.read: dict[bool, list[float]] = {False: [], True: []}

    def refuses(self, answer: str, claims: Sequence[str], verdicts: Sequence[str], beside_a_refusal: bool) -> bool:
        started = time.perf_counter()
        refused = super().refuses(answer, claims, verdicts, beside_a_refusal)
        spent = time.perf_counter() - started
        if 0 < len(claims) <= MAX_CLAIMS and "contradicted" not in verdicts and verdicts.count("supported") < len(
                verdicts):
            self.read[answer_may_refuse(answer)[0]].append(spent)
        return refused


def cost(corpus: Corpus, items: Path) -> None:
    """The gate's µs on the answers it reads: the development rows and every benchmark answer."""
    timed = _Timed(shipped())
    judge = LocalJudge(CollectorRegistry(), cache_entries=1000, cache_max_bytes=100_000_000, claims_nothing=timed)
    events = [TraceEvent(trace_id=row["id"], query=row["q"], answer=row["a"],
                         chunks=[Chunk(text=corpus.knowledge[key]) for key in row["chunks"]]) for row in corpus.rows]
    events += [item.event() for part in read_dump(items).values() for item in part]
    for event in events:
        judge.judge(event)
    print(f"{len(events)} answers judged")
    for modelled, label in ((False, "no cue of declining (the model not read)"), (True, "the model read")):
        spent = np.array(timed.read[modelled]) * 1e6
        print(f"{label}: {len(spent)} answers, median {np.median(spent):.1f} µs, p90 {np.percentile(spent, 90):.1f} µs, "
              f"p99 {np.percentile(spent, 99):.1f} µs")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("loso", "train", "cost"))
    parser.add_argument("--items", type=Path, required=True)
    parser.add_argument("--sets", default="", help="comma-separated sets to leave out (loso; default every set)")
    parser.add_argument("--bits", type=int, default=BITS, help="hashed features: 2^bits (loso; the shipped model's)")
    parser.add_argument("--thresholds", default=str(THRESHOLD), help="comma-separated thresholds (loso)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD, help="the shipped model's (train)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "judging" / "model" /
                        f"{VERSION}.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    corpus = Corpus(args.items, args.bits if args.command == "loso" else BITS)
    print(f"corpus: {len(corpus.rows)} rows, {sum(map(len, corpus.features.values()))} clauses, "
          f"{len(corpus.benchmark)} benchmark and {len(corpus.kb)} knowledge-base claims "
          f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    if args.command == "loso":
        loso(corpus, args.sets.split(",") if args.sets else corpus.sets(), [float(t) for t in args.thresholds.split(",")])
    elif args.command == "cost":
        cost(corpus, args.items)
    else:
        args.out.write_text(encoded(train(corpus).tolist(), args.threshold, VERSION), encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
