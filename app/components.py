"""Components built from validated config: what the service's wiring, the CLI and the benchmarks share.

Each factory takes the config sections it needs and returns a ready component; none starts anything.
"""

from __future__ import annotations

import gc
from pathlib import Path

import msgspec
from prometheus_client import CollectorRegistry

from ragpulse.config import Config, JudgeConfig
from ragpulse.judging import RequestRateLimiter
from ragpulse.judging import BUILTIN_PROMPT, LlmJudge, builtin_template
from ragpulse.judging import LocalJudge, count_retries
from ragpulse.judging import SamplingPolicy, TraceFilter
from ragpulse.probes.correctness import LlmCorrectness
from ragpulse.probes.runner import Prober
from ragpulse.probes.target import HttpTarget
from ragpulse.scorers.fallback import FallbackDetector, FallbackMetrics


def tune_gc() -> None:
    """Collect the young generation every 50,000 allocations instead of 700: a sidecar that keeps
    windows of recent traces has many long-lived objects, and with the default thresholds the
    collector's passes over them cost a third of the fast path (docs/benchmarks-log.md). ragpulse
    makes few reference cycles, so garbage is still freed by reference counting at once."""
    gc.set_threshold(50_000, 20, 100)


def fallback_detector(config: Config, registry: CollectorRegistry | None = None) -> FallbackDetector:
    """With a `registry` (the pipeline's), its memo of matched answers' decisions is on and counted there."""
    return FallbackDetector([(rule.name, rule.pattern) for rule in config.all_fallback_rules()],
                            empty_retrieval=config.fallback.empty_retrieval,
                            metrics=None if registry is None else FallbackMetrics(registry))


def local_judge(config: JudgeConfig, registry: CollectorRegistry) -> LocalJudge:
    return LocalJudge(registry, cache_entries=config.local_chunk_cache_entries,
                      cache_max_bytes=config.local_chunk_cache_max_bytes)


def llm_judge(config: JudgeConfig, limiter: RequestRateLimiter, registry: CollectorRegistry | None) -> LlmJudge:
    """The LLM judge of the config (base_url, key, model, prompt), behind `limiter`; its retries counted on
    `registry`'s judge families when one is given."""
    from openai import AsyncOpenAI  # 50 MB and half a second: loaded only for an LLM judge

    client = AsyncOpenAI(
        api_key=config.key() or "not-needed",  # local servers (vLLM, Ollama) take any key
        base_url=config.base_url,
        timeout=config.timeout_seconds,
        max_retries=0,  # ragpulse retries itself, so that every request passes the rate limiter
    )
    if config.prompt_file:
        template, version = Path(config.prompt_file).read_text(encoding="utf-8"), Path(config.prompt_file).stem
    else:
        template, version = builtin_template(), BUILTIN_PROMPT
    return LlmJudge(
        client, config.model, template, version,
        limiter=limiter,
        max_retries=config.max_retries,
        max_completion_tokens=config.max_completion_tokens,
        on_retry=None if registry is None else count_retries(registry, config.model),
    )


def sampling_policy(config: JudgeConfig) -> SamplingPolicy:
    return SamplingPolicy(
        base_rate=config.sample_rate,
        rate_overrides={(o.app, o.route): o.rate for o in config.sample_rate_overrides},
        class_rates=msgspec.structs.asdict(config.priority_rates),
        always=[TraceFilter(**msgspec.structs.asdict(m)).compile() for m in config.always_judge],
        flag_support_below=config.flag_support_below,
        over_refusal_context_at_least=config.over_refusal_context_at_least,
    )


def probe_correctness(config: Config, registry: CollectorRegistry | None) -> LlmCorrectness | None:
    """Correctness by the LLM judge when one is configured, for every prober alike: one request limiter of its own
    at the judge's rate (the token and cost budgets are the sampled judging's); retries counted on `registry`'s
    judge families when one is given (the sidecar judges)."""
    if config.judge.mode == "off" or not config.judge.uses_llm:
        return None
    return LlmCorrectness(llm_judge(config.judge, RequestRateLimiter(config.judge.max_requests_per_minute), registry))


def prober(config: Config, target: HttpTarget, fallback: FallbackDetector, correctness: LlmCorrectness | None) -> Prober:
    """A prober of `target` with the probes' options."""
    options = config.probes
    return Prober(target, fallback, local_judge(config.judge, CollectorRegistry()), k=options.k,
                  concurrency=options.concurrency, max_requests_per_second=options.max_requests_per_second,
                  llm_correctness=correctness)
