"""The local judge's cost per answer on real text, and what its chunk cache holds per chunk.

    python bench/bench_local_judge.py --items /tmp/judge_items.jsonl [--rounds 3]
    python bench/bench_local_judge.py --mirror /work/.mirror          (loads FaithBench and UHGEval instead)
    python bench/bench_local_judge.py --items /tmp/judge_items.jsonl --parity /tmp/src_other

Two shapes, both judged by a judge of the default config (its chunk cache caps):
- FaithBench: each ~900-character source the chunk, its LLM summary the answer ("Summarize the passage.");
- short Chinese QA: UHGEval's Xinhua articles cut at sentence ends into chunks of ~300 characters (the knowledge
  base); each trace retrieves three of them, asks about the first (its question the answer's opening clause) and
  answers with one of its sentences, or for every third trace with a sentence of another article.
Warm: every trace judged once, then each timed in the same order (the knowledge base recurring, as a cache meets
it); cold: each trace judged by a new judge (every chunk new). Each answer's figure is its fastest of --rounds;
median and p90 over the answers, in µs. Then the cache's own count of bytes per chunk (its bytes gauge over its
entries) for the FaithBench sources and the Chinese chunks, the process's resident memory growth per chunk held
beside it (the count must not be lower), and how many such chunks the default byte cap holds.

--parity DIR: instead, every item of the dump and every short Chinese QA trace judged by this tree and by the tree
that DIR holds as `ragpulse` (a directory for PYTHONPATH, e.g. a checkout of main linked as DIR/ragpulse), in
another process: each judgment and its model's feature vector compared, the differences counted and the first shown.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import platform
import random
import statistics
import time
from pathlib import Path

import msgspec
from prometheus_client import CollectorRegistry

from eval_local_judge import Item
from judge_benchmarks import load_all, read_dump
from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.config import Config
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.scorers.text import clauses, sentences

CHUNK_CHARS = 300  # a Chinese chunk closes at the first sentence end past this many characters


def new_judge() -> tuple[LocalJudge, CollectorRegistry]:
    config, registry = Config().judge, CollectorRegistry()
    return LocalJudge(registry, cache_entries=config.local_chunk_cache_entries,
                      cache_max_bytes=config.local_chunk_cache_max_bytes), registry


def faithbench(items: list[Item]) -> list[TraceEvent]:
    return [item.event() for item in items]


def chinese_chunks(items: list[Item]) -> list[list[str]]:
    """Each article's chunks of ~CHUNK_CHARS characters (a shorter tail dropped)."""
    articles, seen = [], set()
    for item in items:
        if item.chunks[0] in seen:
            continue
        seen.add(item.chunks[0])
        pieces, current = [], ""
        for sentence in sentences(item.chunks[0]):
            current += sentence + "。"
            if len(current) >= CHUNK_CHARS:
                pieces.append(current)
                current = ""
        if pieces:
            articles.append(pieces)
    return articles


def chinese_qa(items: list[Item], seed: int = 7) -> list[TraceEvent]:
    rnd = random.Random(seed)
    articles = chinese_chunks(items)
    pool = [chunk for article in articles for chunk in article]
    events = []
    for n, article in enumerate(articles):
        for chunk in article:
            source = rnd.choice(articles) if n % 3 == 2 else [chunk]
            answer = rnd.choice(sentences(rnd.choice(source))) + "。"
            question = clauses(answer)[0] + "？"
            texts = [chunk, *rnd.sample(pool, 2)]
            events.append(TraceEvent(trace_id=f"zh-{len(events)}", query=question, answer=answer,
                                     chunks=[Chunk(text=text) for text in texts]))
    return events


def timings(events: list[TraceEvent], rounds: int, *, warm: bool) -> list[float]:
    """Each answer's fastest judgment of the rounds, in µs."""
    best = [float("inf")] * len(events)
    judge, _ = new_judge()
    if warm:
        for event in events:
            judge.judge(event)
    for _ in range(rounds):
        for n, event in enumerate(events):
            if not warm:
                judge, _ = new_judge()
            started = time.perf_counter()
            judge.judge(event)
            best[n] = min(best[n], (time.perf_counter() - started) * 1e6)
    return best


def _resident() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def bytes_per_chunk(texts: list[str]) -> tuple[float, float]:
    """(the cache's count, resident memory growth) per chunk, all of `texts` held by one judge (uncapped)."""
    registry = CollectorRegistry()
    judge = LocalJudge(registry, cache_entries=len(texts), cache_max_bytes=1 << 40)
    gc.collect()
    before = _resident()
    judge.features(TraceEvent(trace_id="fill", query="", answer="", chunks=[Chunk(text=t) for t in texts]))
    gc.collect()
    grown = _resident() - before
    entries = registry.get_sample_value("ragpulse_local_judge_chunk_cache_entries") or 1.0
    counted = registry.get_sample_value("ragpulse_local_judge_chunk_cache_bytes") or 0.0
    return counted / entries, grown / len(texts)


def verdicts(loaded: dict[str, list[Item]]) -> list[str]:
    """Each item's and each Chinese QA trace's judgment and feature vector, one JSON line each."""
    judge = LocalJudge(CollectorRegistry(), cache_entries=100_000, cache_max_bytes=1 << 40)
    events = [item.event() for items in loaded.values() for item in items] + chinese_qa(loaded.get("UHGEval", []))
    return [msgspec.json.encode([judge.judge(event), judge.features(event)]).decode() for event in events]


def parity(items: Path, other: Path) -> int:
    """Differences between this tree's verdicts and those of the tree `other` holds, in a process of its own."""
    mine = verdicts(read_dump(items))
    out = subprocess.run([sys.executable, __file__, "--items", str(items), "--dump-verdicts"], check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": f"{other}{os.pathsep}"
                                                              f"{Path(__file__).parent}"})
    theirs = out.stdout.splitlines()
    differ = [n for n, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b]
    print(f"{len(mine)} judgments and feature vectors compared with {other}: {len(differ)} differ")
    for n in differ[:1]:
        print(f"  first, #{n}:\n  this tree: {mine[n]}\n  the other: {theirs[n]}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=Path, help="a dump of bench/judge_benchmarks.py")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parity", type=Path, help="compare verdicts with the tree this PYTHONPATH directory holds")
    parser.add_argument("--dump-verdicts", action="store_true", help=argparse.SUPPRESS)  # --parity's other process
    args = parser.parse_args()
    if args.parity or args.dump_verdicts:
        if not args.items:
            parser.error("--parity needs --items")
        if args.dump_verdicts:
            print("\n".join(verdicts(read_dump(args.items))))
            return 0
        return parity(args.items, args.parity)
    loaded = read_dump(args.items) if args.items else load_all(args.mirror, ("FaithBench", "UHGEval"))
    shapes = {"FaithBench (~900-character sources, summaries)": faithbench(loaded["FaithBench"]),
              "short Chinese QA (~300-character chunks, 3 a trace)": chinese_qa(loaded["UHGEval"])}
    print(f"python {platform.python_version()} on {platform.machine()}, {time.strftime('%Y-%m-%d')}, "
          f"fastest of {args.rounds} rounds an answer, µs")
    cap = Config().judge.local_chunk_cache_max_bytes  # memory first: later runs leave freed memory to reuse
    english = list(dict.fromkeys(text for item in loaded["FaithBench"] for text in item.chunks))
    chinese = [chunk for article in chinese_chunks(loaded["UHGEval"]) for chunk in article]
    for name, texts in (("English ~900 characters", english), ("Chinese ~300 characters", chinese[:1500])):
        counted, grown = bytes_per_chunk(texts)
        print(f"cache bytes a chunk, {name} ({len(texts)}): counted {counted:,.0f}, resident growth {grown:,.0f}; "
              f"the default {cap / 2**20:.0f} MiB holds {cap / counted:,.0f}")
    for name, events in shapes.items():
        answers = statistics.median(len(e.answer) for e in events)
        chunks = statistics.median(len(c.text or "") for e in events for c in e.chunks or [])
        print(f"{name}: {len(events)} answers (median {answers:.0f} characters), chunks median {chunks:.0f} characters, "
              f"{len({c.text for e in events for c in e.chunks or []})} distinct")
        for warm in (True, False):
            times = sorted(timings(events, args.rounds, warm=warm))
            print(f"  {'warm' if warm else 'cold'}: median {statistics.median(times):7.1f}  "
                  f"p90 {times[int(0.9 * len(times))]:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
