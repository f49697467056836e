"""Public human-labelled hallucination benchmarks as one table of judge items, for the local judge's models.

    python bench/judge_benchmarks.py summary [--mirror /work/.mirror]
    python bench/judge_benchmarks.py dump [--mirror /work/.mirror] --out /tmp/judge_items.jsonl

Every benchmark is read from a repository snapshot under --mirror (DIR/<owner>+<name>/repo, a bare clone; fetch
them with the search tool's `fetch` or `git clone --bare`), never committed. Each answer becomes an Item of
eval_local_judge.py: question, answer, the chunks it should rest on, hallucinated or not (what humans said,
unless `labels` says otherwise), the benchmark, its language and the predictions of any detector the benchmark
ships (as a risk, 1: hallucinated). Held-out or development by the hash of its id (Item.held_out): decided
before any model exists, so a model may be fitted and tuned on the development halves only.

`summary` prints, per benchmark, its size, base rate, licence and what was dropped; `dump` writes every item as a
JSON line (with its benchmark, language and held_out flag) for quick iteration: bench/lobo_judge.py reads it back
with --items.

The Chinese rows: UHGEval's faithful answers are copies of their chunk, so it is reported, never learned from;
OCNLI (human NLI, not model answers) is the Chinese set a model learns from; XNLI's Chinese pairs (the same kind)
are reported only: learning from both was tried and moved Chinese probabilities into the band (OCNLI's recall
85% -> 6%).

Not here, and why: RAGTruth (ParticleMedia/RAGTruth, MIT): its dataset/*.jsonl are over the 4 MiB a snapshot
keeps, so no snapshot has its data; DelucionQA (boschresearch/DelucionQA, CC BY 4.0): its contexts ship as ids
into a car manual that must be crawled; ANAH (open-compass/ANAH): its data is not in the repository. Chinese sets
checked and not here: WebCiteS (HarlynDN/WebCiteS, Chinese attributed summaries) and mFACE's human judgements
(google-research/google-research, mface/) are downloaded from outside the repository; CHEF (THU-BPM/CHEF) keeps its
claims off the repository and its preprocessed ones are over 4 MiB; CFEVER (IKMLab/CFEVER-data) gives evidence as
ids into a Wikipedia dump that is not in the repository.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from eval_local_judge import Item, begin, faithbench, snapshot_file

# The detectors FaithBench ships in data_for_release/batch_*.json (metadata): scores of consistency, 1 consistent.
FAITHBENCH_DETECTORS = ("hhem-2.1-english", "hhem-2.1", "hhemv1", "trueteacher", "true_nli", "gpt-3.5-turbo",
                        "gpt-4-turbo", "gpt_4o")
# LFQA-Verification's answers judged against the WebGPT documents (src/Automatic/input_file.json): WebGPT's own,
# GPT-3 and Alpaca given those documents, and both without documents (judged against the same ones).
LFQA_ANSWERS = ("webgpt", "gpt3_wdoc", "alpaca_wdoc", "gpt3", "alpaca")
UHGEVAL_QUESTION = "续写这篇新闻。"  # "Continue this news article": UHGEval's task, as the trace's question
OCNLI_QUESTION = "这段话说明了什么？"  # "What does this passage say?": NLI has no question
# XNLI's Chinese dev and test pairs, as Baidu's ERNIE fine-tuning data ships them (premise, hypothesis, label);
# facebookresearch/XNLI links its zip from outside the repository, this copy is the one a snapshot holds
XNLI_REPO, XNLI_SPLITS = "zhang45258+ERNIE01", ("dev", "test")


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str
    repo: str  # the snapshot's folder under --mirror
    language: str
    licence: str
    labels: str  # what makes an answer hallucinated
    dropped: str
    trains: bool  # human labels on both sides: a model may learn from its development half
    load: Callable[[Path], list[Item]]


def _git_paths(mirror: Path, repo: str, folder: str) -> list[str]:
    listing = subprocess.run(["git", "--git-dir", str(mirror / repo / "repo"), "ls-tree", "-r", "--name-only", "HEAD",
                              folder], check=True, capture_output=True, text=True).stdout
    return listing.split()


def _begin(mirror: Path) -> list[Item]:
    return [replace(item, benchmark="BEGIN", language="en") for item in begin(mirror)]


def _faithbench(mirror: Path) -> list[Item]:
    """FaithBench.csv's labels ("Benign" and "Questionable" dropped), with the detectors' scores of the same
    summary of the same source from the per-batch release files."""
    scores: dict[tuple[str, str], dict[str, float]] = {}
    for path in _git_paths(mirror, "vectara+FaithBench", "data_for_release"):
        for sample in json.loads(snapshot_file(mirror, "vectara+FaithBench", path))["samples"]:
            metadata = sample["metadata"]
            scores[(sample["source"].strip(), sample["summary"].strip())] = {
                name: 1.0 - float(metadata[name]) for name in FAITHBENCH_DETECTORS if metadata.get(name) is not None}
    return [replace(item, benchmark="FaithBench", language="en", detectors=scores.get((item.chunks[0], item.answer), {}))
            for item in faithbench(mirror, benign=None)]


def _lfqa(mirror: Path) -> list[Item]:
    """Each answer sentence labelled supported, partially or not supported by three annotators; an answer is
    hallucinated when any sentence lacks a majority for "supported" (partial support is not support)."""
    repo = "timchen0618+LFQA-Verification"
    documents = {entry["question_id"]: tuple(doc["text"] for doc in entry["docs"])
                 for entry in json.loads(snapshot_file(mirror, repo, "data/docs/docs-webgpt.json"))}
    items = []
    for system in LFQA_ANSWERS:
        for entry in json.loads(snapshot_file(mirror, repo, f"data/annotations/annotations-{system}.json")):
            unsupported = any(2 * sum(label == "supported" for label in sentence["labels"]) <= len(sentence["labels"])
                              for sentence in entry["annotations"])
            items.append(Item(f"lfqa:{system}:{entry['question_id']}", entry["question"],
                              " ".join(sentence.strip() for sentence in entry["answers"]),
                              documents[entry["question_id"]], unsupported, "LFQA-Verification", "en"))
    return items


def _uhgeval(mirror: Path) -> list[Item]:
    """Xinhua news: a model's continuation whose keywords annotators marked reasonable or not against the real
    article, and the article's real continuation. The chunk is the whole article (its beginning and the rest,
    which opens with the real continuation): so the faithful answers are copies of their chunk."""
    lines = snapshot_file(mirror, "IAAR-Shanghai+UHGEval",
                          "src/eval_suite/benchs/uhgeval/dataset_uhgeval_concise.jsonl").splitlines()
    items = []
    for entry in map(json.loads, lines):
        article = (entry["newsBeginning"].strip() + "\n" + entry["newsRemainder"].strip(),)
        if any(not note.split("<sep>", 1)[-1].startswith("合理") for note in entry["annotations"]):
            items.append(Item(f"uhgeval:{entry['id']}:generated", UHGEVAL_QUESTION,
                              entry["hallucinatedContinuation"].strip(), article, True, "UHGEval", "zh"))
        items.append(Item(f"uhgeval:{entry['id']}:real", UHGEVAL_QUESTION, entry["realContinuation"].strip(), article,
                          False, "UHGEval", "zh"))
    return items


def _ocnli(mirror: Path) -> list[Item]:
    """Chinese NLI written and labelled by people (5 labels, the majority's): the premise is the chunk, the
    hypothesis the answer; only an entailed one is grounded, a neutral or contradicted one is not."""
    items = []
    for entry in map(json.loads, snapshot_file(mirror, "CLUEbenchmark+OCNLI", "data/ocnli/dev.json").splitlines()):
        if entry["label"] in ("entailment", "neutral", "contradiction"):
            items.append(Item(f"ocnli:dev:{entry['id']}", OCNLI_QUESTION, entry["sentence2"].strip(),
                              (entry["sentence1"].strip(),), entry["label"] != "entailment", "OCNLI", "zh"))
    return items


def _xnli_zh(mirror: Path) -> list[Item]:
    """XNLI: English MultiNLI-style pairs written and labelled by crowd workers (5 labels, the majority's), then
    translated into Chinese by professional translators, the English gold label kept; the premise is the chunk, the
    hypothesis the answer, and only an entailed one is grounded."""
    items = []
    for split in XNLI_SPLITS:
        rows = csv.reader(io.StringIO(snapshot_file(mirror, XNLI_REPO, f"data/xnli/{split}.tsv")), delimiter="\t",
                          quoting=csv.QUOTE_NONE)
        for number, (premise, hypothesis, label) in enumerate(rows):
            if label in ("entailment", "neutral", "contradiction"):  # the header's "label" is no pair
                items.append(Item(f"xnli_zh:{split}:{number}", OCNLI_QUESTION, hypothesis.strip(), (premise.strip(),),
                                  label != "entailment", "XNLI-zh", "zh"))
    return items


def _halueval_qa(mirror: Path) -> list[Item]:
    """HotpotQA knowledge with its right answer and one ChatGPT was asked to make up: labels by construction."""
    lines = snapshot_file(mirror, "RUCAIBox+HaluEval", "generation/qa/qa_one-turn_data.json").splitlines()
    items = []
    for number, entry in enumerate(map(json.loads, lines)):
        for kind, hallucinated in (("right_answer", False), ("hallucinated_answer", True)):
            items.append(Item(f"halueval_qa:{number}:{kind}", entry["question"], entry[kind].strip(),
                              (entry["knowledge"].strip(),), hallucinated, "HaluEval QA", "en"))
    return items


BENCHMARKS = (
    Benchmark("BEGIN", "google+BEGIN-dataset", "en", "CC BY 4.0 (wow/LICENSE)",
              "human: \"Not fully attributable\" to the knowledge sentence (WoW dialogue, dev and test)",
              "6 \"Generic\" responses (no claim to attribute)", True, _begin),
    Benchmark("FaithBench", "vectara+FaithBench", "en", "CC BY-NC-SA 4.0 (LICENSE)",
              "human: a summary's worst annotation is \"Unwanted\"; \"Consistent\" is faithful",
              "77 \"Questionable\" and 64 \"Benign\" (true but not in the source) summaries, ambiguous for "
              "groundedness; 46 of the rest have no detector scores (not in the release files)",
              True, _faithbench),
    Benchmark("LFQA-Verification", "timchen0618+LFQA-Verification", "en", "none stated in the repository",
              "human: a sentence of the long-form answer without a majority of 3 annotators for \"supported\" by the "
              "WebGPT documents", "gpt3_whudoc's 100 (answered from other documents than those its annotation names)",
              True, _lfqa),
    Benchmark("UHGEval", "IAAR-Shanghai+UHGEval", "zh", "Apache-2.0 (repository LICENSE)",
              "human: a keyword of the generated continuation marked unreasonable; the real continuation faithful "
              "by construction (and a copy of its chunk: an upper bound)", "none (the 1,000-item concise set; the "
              "full set is over the snapshot's 4 MiB)", False, _uhgeval),
    Benchmark("OCNLI", "CLUEbenchmark+OCNLI", "zh", "CC BY-NC 2.0 (README)",
              "human (majority of 5): the hypothesis is neutral to or contradicts the premise; a proxy: NLI "
              "pairs written by people, not a model's answers", "50 dev pairs without a majority label (\"-\"); the "
              "training sets (not all 5-way labelled; the 30k and 50k are over the snapshot's 4 MiB)", True, _ocnli),
    Benchmark("XNLI-zh", XNLI_REPO, "zh", "CC BY-NC 4.0 (XNLI's, facebookresearch/XNLI LICENSE; the copy's "
              "repository states none for its data)",
              "human (majority of 5, given to the English pair): the hypothesis is neutral to or contradicts the "
              "premise; a proxy: NLI pairs written by people, translated by professionals, not a model's answers",
              "none of the 7,500 dev and test pairs; the training set (XNLI's is machine-translated, and over the "
              "snapshot's 4 MiB)", False, _xnli_zh),
    Benchmark("HaluEval QA", "RUCAIBox+HaluEval", "en", "MIT (LICENSE)",
              "by construction: the right answer faithful, the made-up one hallucinated",
              "all but the 500 one-turn samples (data/qa_data.json is over the snapshot's 4 MiB)", False, _halueval_qa),
)


def sample_rank(item: Item) -> int:
    """A second hash of the id, unrelated to the halves: a benchmark too large to judge whole keeps its lowest."""
    return int(hashlib.sha256(f"sample:{item.id}".encode()).hexdigest(), 16)


def subsample(items: list[Item], limit: int) -> list[Item]:
    return items if len(items) <= limit else sorted(items, key=sample_rank)[:limit]


def load_all(mirror: Path, names: Iterable[str] | None = None) -> dict[str, list[Item]]:
    wanted = set(names) if names is not None else None
    return {b.name: b.load(mirror) for b in BENCHMARKS if wanted is None or b.name in wanted}


def to_json(item: Item) -> str:
    return json.dumps({"id": item.id, "benchmark": item.benchmark, "language": item.language, "question": item.question,
                       "answer": item.answer, "chunks": list(item.chunks), "hallucinated": item.hallucinated,
                       "held_out": item.held_out, "detectors": dict(item.detectors)}, ensure_ascii=False)


def from_json(line: str) -> Item:
    row = json.loads(line)
    return Item(row["id"], row["question"], row["answer"], tuple(row["chunks"]), row["hallucinated"], row["benchmark"],
                row["language"], row["detectors"])


def read_dump(path: Path) -> dict[str, list[Item]]:
    """A dump's items by benchmark, in the order of BENCHMARKS."""
    items = [from_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {b.name: part for b in BENCHMARKS if (part := [i for i in items if i.benchmark == b.name])}


def summary(loaded: dict[str, list[Item]]) -> list[str]:
    rows = ["| benchmark | language | answers | base rate | held out | detectors shipped | labels | licence | dropped |",
            "|---|---|---|---|---|---|---|---|---|"]
    for b in BENCHMARKS:
        items = loaded.get(b.name)
        if not items:
            continue
        detectors = sorted({name for i in items for name in i.detectors})
        rows.append(f"| {b.name} | {b.language} | {len(items):,} | {sum(i.hallucinated for i in items) / len(items):.1%} | "
                    f"{sum(i.held_out for i in items):,} | {', '.join(detectors) or 'none'} | {b.labels} | {b.licence} | "
                    f"{b.dropped} |")
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("summary", "dump"))
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"),
                        help="a folder of bare clones, DIR/<owner>+<name>/repo")
    parser.add_argument("--out", type=Path, help="dump: the JSON-lines file to write")
    args = parser.parse_args(argv)
    loaded = load_all(args.mirror)
    if args.command == "summary":
        print("\n".join(summary(loaded)))
        return 0
    if args.out is None:
        parser.error("dump needs --out")
    with args.out.open("w", encoding="utf-8") as out:
        for items in loaded.values():
            out.writelines(to_json(item) + "\n" for item in items)
    print(f"{sum(map(len, loaded.values())):,} items of {len(loaded)} benchmarks in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
