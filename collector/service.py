"""The service: builds every component from a validated Config and runs their lifecycle.

start: the pipeline and the span intake first, then the HTTP server, the
Kafka source and the OTLP receivers (nothing is accepted that cannot be
processed). shutdown: stop intake (ingest and OTLP answer 503, /readyz fails,
Kafka stops fetching), hand the traces still being assembled to the queue,
drain it within pipeline.shutdown_timeout_seconds, close the server, then let
the Kafka consumer leave its group: it stays until the last scrape has
committed.
"""

from __future__ import annotations

import asyncio
import gc
import time
from contextlib import closing
from pathlib import Path

import msgspec
import structlog
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter

import ragpulse
from ragpulse.collector.config import Config, JudgeConfig
from ragpulse.collector.errors import ConfigError, ConfigProblem, RejectReason, StartupError
from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.dedup import DedupStage, DedupWindow
from ragpulse.collector.pipeline import Pipeline, Stage
from ragpulse.collector.queue import EventQueue, QueueMetrics
from ragpulse.collector.server import build_app
from ragpulse.collector.supervisor import Supervised, SupervisorMetrics
from ragpulse.collector.sources.connections import ConnectionMetrics, limit_connections, runner_options
from ragpulse.collector.sources.http import SOURCE as HTTP_SOURCE
from ragpulse.collector.sources.http import HttpIngest
from ragpulse.collector.sources.kafka import SOURCE as KAFKA_SOURCE
from ragpulse.collector.sources.kafka import KafkaSource
from ragpulse.collector.sources.otlp.intake import SOURCE as OTLP_SOURCE
from ragpulse.collector.sources.otlp.intake import SpanIntake
from ragpulse.collector.sources.otlp.receiver import OtlpReceiver
from ragpulse.exporters import badcases_api, calibration_api, review_queue
from ragpulse.exporters.badcases import BadCaseStore
from ragpulse.exporters.jsonl import JsonlSink
from ragpulse.exporters.labels import LabelGuard
from ragpulse.exporters.metrics import Metrics
from ragpulse.exporters.prometheus import FastPathExporter
from ragpulse.scorers.fallback import FallbackDetector
from ragpulse.exporters.records import JudgmentRecord, SignalRecord
from ragpulse.exporters.results import Record, ResultWriter, Sink
from ragpulse.exporters.review_queue import ReviewQueueStore, audit_entry
from ragpulse.scorers.calibration import CalibrationMetrics, Calibrator
from ragpulse.scorers.embedding import EmbeddingScorer, load_model
from ragpulse.scorers.budget import RequestRateLimiter, SpendBudget
from ragpulse.scorers.judge import BUILTIN_PROMPT, LlmJudge, builtin_template
from ragpulse.scorers.lexical import LexicalScorer
from ragpulse.exporters.candidates import CandidateStore
from ragpulse.probes import golden
from ragpulse.probes.candidates import CandidateCollector
from ragpulse.probes.marker import ProbeTrafficFilter
from ragpulse.probes.correctness import LlmCorrectness
from ragpulse.probes.runner import Prober
from ragpulse.probes.schedule import ProbeMetrics, ProbeSchedule
from ragpulse.probes.target import HttpTarget, TargetError
from ragpulse.scorers.local_judge import LocalJudge, LocalJudgeMetrics
from ragpulse.scorers.join import FeedbackJoin, JoinMetrics, Listener
from ragpulse.scorers.sampler import (
    PRIORITIES,
    JudgeQueue,
    JudgeSampler,
    SamplerMetrics,
    SamplingPolicy,
    TraceFilter,
)
from ragpulse.scorers.satisfaction import SatisfactionMetrics, SignalCounter
from ragpulse.scorers.workers import CircuitBreaker, JudgeWorkers, RateMetrics

log = structlog.get_logger("ragpulse.service")


def tune_gc() -> None:
    """Collect the young generation every 50,000 allocations instead of 700: a sidecar that keeps
    windows of recent traces has many long-lived objects, and with the default thresholds the
    collector's passes over them cost a third of the fast path (docs/BENCHMARKS.md). ragpulse
    makes few reference cycles, so garbage is still freed by reference counting at once."""
    gc.set_threshold(50_000, 20, 100)


def llm_judge(config: JudgeConfig, limiter: RequestRateLimiter, retries: Counter | None) -> LlmJudge:
    """The LLM judge of the config (base_url, key, model, prompt), behind `limiter`; retries counted when given."""
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
        on_retry=None if retries is None else lambda error: retries.labels(judge_model=config.model, error=error).inc(),
    )


def _sampling_policy(config: JudgeConfig) -> SamplingPolicy:
    return SamplingPolicy(
        base_rate=config.sample_rate,
        rate_overrides={(o.app, o.route): o.rate for o in config.sample_rate_overrides},
        class_rates=msgspec.structs.asdict(config.priority_rates),
        always=[TraceFilter(**msgspec.structs.asdict(m)).compile() for m in config.always_judge],
        flag_support_below=config.flag_support_below,
        over_refusal_context_at_least=config.over_refusal_context_at_least,
    )


def _result_sinks(config: Config, metrics: Metrics) -> list[tuple[str, Sink]]:
    results, audit = config.results, config.calibration
    sinks: list[tuple[str, Sink]] = []
    if results.sqlite_path:
        sinks.append(("sqlite", BadCaseStore(results.sqlite_path, retention_seconds=results.retention_days * 86400,
                                             max_rows=results.max_rows, dropped=metrics.results_dropped)))
        sinks.append(("review_queue", ReviewQueueStore(results.sqlite_path, retention_seconds=audit.retention_days * 86400,
                                                       max_rows=audit.max_rows, dropped=metrics.results_dropped)))
        sinks.append(("candidates", CandidateStore(results.sqlite_path, retention_seconds=results.retention_days * 86400,
                                                   max_rows=config.probes.candidates_max_rows, dropped=metrics.results_dropped)))
    if results.jsonl_path:
        sinks.append(("jsonl", JsonlSink(results.jsonl_path, results.jsonl_max_bytes)))
    if results.kafka_topic or audit.kafka_topic:
        # kafka-python (24 MB) only for a sidecar that writes to Kafka
        from ragpulse.collector.sources.kafka.kafka_python import client_settings
        from ragpulse.exporters.kafka_results import KafkaResultsSink
    if results.kafka_topic:
        sinks.append(("kafka", KafkaResultsSink(results.kafka_topic, client_settings(config.kafka))))
    if audit.jsonl_path:
        sinks.append(("review_queue_jsonl", JsonlSink(audit.jsonl_path, results.jsonl_max_bytes, select=audited)))
    if audit.kafka_topic:
        sinks.append(("review_queue_kafka", KafkaResultsSink(audit.kafka_topic, client_settings(config.kafka), select=audited)))
    return sinks


def audited(record: Record) -> object | None:
    """The review queue's entries: audited judgments, the judge's verdict apart from the content."""
    return audit_entry(record) if isinstance(record, JudgmentRecord) and record.audit else None


def _feedback_join(config: Config, registry: CollectorRegistry, guard: LabelGuard) -> FeedbackJoin:
    counter = SignalCounter(SatisfactionMetrics(registry, config.metrics.labels), guard,
                            max_cached=4 * config.metrics.max_label_sets)
    return FeedbackJoin(config.satisfaction, JoinMetrics(registry), counter, guard)


class _SignalsToRecords(Listener):
    """A signal on an answer after its judgment is appended to its record (the bad-case store)."""

    def __init__(self, writer: ResultWriter) -> None:
        self._writer = writer

    def signal_after_judgment(self, trace_id: str, signal: str) -> None:
        self._writer.write(SignalRecord(trace_id, signal))


def _calibrator(config: Config, registry: CollectorRegistry, writer: ResultWriter, join: FeedbackJoin) -> Calibrator:
    options = config.calibration
    metrics = CalibrationMetrics(registry)
    metrics.threshold.set(options.agreement_threshold)
    metrics.min_reviews.set(options.min_reviews)
    metrics.waiting_reviews.set_function(lambda: join.pending_reviews)
    calibrator = Calibrator(metrics, writer, review_window=options.review_window_seconds, max_audited=options.max_audited)
    join.listeners.append(calibrator)
    path = config.results.sqlite_path
    if path and Path(path).exists():  # audited judgments of an earlier run still wait for their reviews
        with closing(review_queue.connect(path)) as db:
            entries = review_queue.waiting(db, now=time.time(), window=options.review_window_seconds)
        restored = calibrator.restore(entries[-options.max_audited:])
        if restored:
            log.info("audited judgments restored for the review join", count=restored)
    return calibrator


def precreate_series(metrics: Metrics, config: Config) -> None:
    """Series that rules and dashboards divide by exist at zero from the first scrape: a rate() over a
    series that does not exist yet is no data, and an alert cannot tell no data from zero."""
    sources = [HTTP_SOURCE, OTLP_SOURCE, *([KAFKA_SOURCE] if config.kafka.bootstrap_servers else [])]
    for source in sources:
        for reason in RejectReason:
            metrics.events_invalid.labels(source=source, reason=reason.value)
        metrics.events_refused.labels(source=source, reason="backpressure")
        for kind in ("trace", "feedback"):
            metrics.events_received.labels(source=source, type=kind)
    metrics.events_dropped.labels(reason="shutdown_deadline")
    for kind in ("trace", "feedback"):
        metrics.events_duplicate.labels(type=kind)
    for outcome in ("complete", "ttl_expired", "capacity", "shutdown", "not_rag", "content_not_captured", "mapping_failed"):
        metrics.otlp_traces.labels(outcome=outcome)
    for reason in ("late_span", "duplicate", "too_many_spans", "over_bytes"):
        metrics.otlp_spans_dropped.labels(reason=reason)
    for reason in ("writer_full", "retention", "max_rows", "review_retention", "review_max_rows"):
        metrics.results_dropped.labels(reason=reason)
    if config.judge.mode == "off":
        return
    for priority in PRIORITIES:
        metrics.judge_judged.labels(priority=priority)
        for reason in ("queue_full", "evicted", "budget_tokens", "budget_cost", "circuit_open", "trace_unknown", "shutdown"):
            metrics.judge_skipped.labels(priority=priority, reason=reason)
    if config.judge.uses_llm:
        metrics.judge_requests.labels(judge_model=config.judge.model, outcome="ok")
        metrics.judge_http_requests.labels(judge_model=config.judge.model)
        for kind in ("prompt", "completion"):
            metrics.judge_tokens.labels(judge_model=config.judge.model, kind=kind)
        metrics.judge_cost.labels(judge_model=config.judge.model)


def fallback_detector(config: Config) -> FallbackDetector:
    return FallbackDetector([(rule.name, rule.pattern) for rule in config.all_fallback_rules()],
                            empty_retrieval=config.fallback.empty_retrieval)


def local_judge(config: JudgeConfig, registry: CollectorRegistry) -> LocalJudge:
    return LocalJudge(LocalJudgeMetrics(registry), cache_entries=config.local_chunk_cache_entries,
                      cache_max_bytes=config.local_chunk_cache_max_bytes)


def probe_correctness(config: Config, retries: Counter | None) -> LlmCorrectness | None:
    """Correctness by the LLM judge when one is configured, for every prober alike: one request limiter of its own
    at the judge's rate (the token and cost budgets are the sampled judging's)."""
    if config.judge.mode == "off" or not config.judge.uses_llm:
        return None
    return LlmCorrectness(llm_judge(config.judge, RequestRateLimiter(config.judge.max_requests_per_minute), retries))


def prober(config: Config, target: HttpTarget, fallback: FallbackDetector, correctness: LlmCorrectness | None) -> Prober:
    """A prober of `target` with the probes' options."""
    options = config.probes
    return Prober(target, fallback, local_judge(config.judge, CollectorRegistry()), k=options.k,
                  concurrency=options.concurrency, max_requests_per_second=options.max_requests_per_second,
                  llm_correctness=correctness)


def _probe_schedules(config: Config, registry: CollectorRegistry, fallback: FallbackDetector,
                     retries: Counter) -> list[ProbeSchedule]:
    """The golden sets probed on a schedule; a set that does not load or a target that cannot be used is a config error."""
    options = config.probes
    if not options.schedules:
        return []
    metrics = ProbeMetrics(registry)
    metrics.k.set(options.k)
    targets = {target.name: target for target in options.targets}
    schedules, problems = [], []
    correctness = probe_correctness(config, retries)
    for index, entry in enumerate(options.schedules):
        try:
            loaded = golden.load(entry.golden)
            target = HttpTarget(targets[entry.target], options.probe_header)
        except golden.GoldenError as exc:
            problems += [ConfigProblem(f"probes.schedules[{index}].golden", problem) for problem in exc.problems]
            continue
        except TargetError as exc:
            problems.append(ConfigProblem(f"probes.schedules[{index}].target", str(exc)))
            continue
        schedules.append(ProbeSchedule(loaded, prober(config, target, fallback, correctness), metrics, options.db_path,
                                       interval=entry.interval_seconds, jitter=entry.jitter_seconds, target=entry.target))
    if problems:
        raise ConfigError(problems, "probes")
    return schedules


class Service:
    def __init__(self, config: Config, registry: CollectorRegistry | None = None) -> None:
        self.config = config
        self.registry = registry if registry is not None else CollectorRegistry()
        self.metrics = metrics = Metrics(self.registry, config.metrics, ragpulse.__version__)
        self.queue = EventQueue("pipeline", config.pipeline.queue_capacity_events, config.pipeline.queue_capacity_bytes,
                                QueueMetrics(self.registry))
        self.connections = connections = ConnectionMetrics(self.registry)
        supervisor = SupervisorMetrics(self.registry)
        dedup = DedupWindow(
            config.dedup.max_entries,
            config.dedup.window_seconds,
            entries_gauge=metrics.dedup_entries,
            evicted_counter=metrics.dedup_evicted,
        )
        fallback = fallback_detector(config)
        guard = LabelGuard(
            config.metrics.labels,
            config.metrics.max_values_per_label,
            config.metrics.max_label_sets,
            metrics.label_overflow,
        )
        exporter = FastPathExporter(metrics, guard, max_cached=4 * config.metrics.max_label_sets,
                                    fallback_rules=("explicit", "empty_retrieval",
                                                    *(rule.name for rule in config.all_fallback_rules())))
        precreate_series(metrics, config)
        stages: list[tuple[str, Stage]] = [("probe_filter", ProbeTrafficFilter(self.registry)),
                                           ("dedup", DedupStage(dedup, metrics.events_duplicate)), ("fallback", fallback)]
        lexical = LexicalScorer(metrics, guard, config.local_scorers.chunk_cache_entries,
                                config.local_scorers.chunk_cache_max_bytes, max_label_sets=config.metrics.max_label_sets)
        if config.local_scorers.enabled:
            stages.append(("local_scorers", lexical))
        self.embeddings: EmbeddingScorer | None = None
        if config.embeddings.enabled:
            options = config.embeddings
            self.embeddings = EmbeddingScorer(
                load_model(options.model, options.device), metrics, guard, sample_rate=options.sample_rate,
                queue_capacity=options.queue_capacity, batch_traces=options.batch_traces,
                chunk_cache_entries=options.chunk_cache_entries,
            )
            stages.append(("embeddings", self.embeddings))
        self.join: FeedbackJoin | None = None
        if config.satisfaction.enabled:  # config: off only with the judge off, which needs the join
            self.join = _feedback_join(config, self.registry, guard)
            stages.append(("feedback_join", self.join))
        self.judges: JudgeWorkers | None = None
        judge = config.judge
        if judge.mode != "off" and (join := self.join) is not None:
            judged = JudgeQueue(judge.queue_capacity, judge.queue_max_bytes, metrics.judge_skipped)
            sampler_metrics = SamplerMetrics(self.registry, config.metrics.labels)
            stages.append(("judge_sampler", JudgeSampler(_sampling_policy(judge), judged, sampler_metrics,
                                                         metrics.judge_skipped, guard, join,
                                                         max_label_sets=config.metrics.max_label_sets)))
            writer = ResultWriter(_result_sinks(config, metrics), config.results.queue_capacity,
                                  metrics.results_dropped, metrics.results_sink_errors)
            join.listeners.append(_SignalsToRecords(writer))
            if config.results.sqlite_path:
                join.listeners.append(CandidateCollector(join, writer,
                                                         silent_accept_rate=config.probes.candidate_silent_accept_rate))
            calibrator = _calibrator(config, self.registry, writer, join)
            limiter = RequestRateLimiter(judge.max_requests_per_minute)
            if judge.max_requests_per_minute is not None:
                metrics.judge_budget_remaining.labels(budget="requests_per_minute").set_function(limiter.remaining)
            self.judges = JudgeWorkers(
                judged,
                metrics,
                guard,
                writer,
                llm=llm_judge(judge, limiter, metrics.judge_retries) if judge.uses_llm else None,
                local=local_judge(judge, self.registry),
                concurrency=judge.concurrency,
                breaker=CircuitBreaker(judge.breaker_failures, judge.breaker_cooldown_seconds),
                budget=SpendBudget(
                    tokens_per_hour=judge.max_tokens_per_hour,
                    tokens_per_day=judge.max_tokens_per_day,
                    cost_per_hour=judge.max_cost_per_hour,
                    cost_per_day=judge.max_cost_per_day,
                ),
                reserve_share=judge.budget_reserve_share,
                price=judge.prices.get(judge.model),
                cache_entries=judge.cache_entries,
                rates=RateMetrics(self.registry, config.metrics.labels),
                audit_rate=config.calibration.audit_rate,
                calibrator=calibrator,
                join=join,
            )
        self.pipeline = Pipeline(
            self.queue,
            stages=stages,
            exporters=[("prometheus", exporter)],
            metrics=metrics,
            supervisor=supervisor,
            max_batch_events=config.pipeline.max_batch_events,
        )
        self.ingest = HttpIngest(
            EventDecoder(config.limits, HTTP_SOURCE),
            self.queue,
            metrics,
            connections,
            retry_after_seconds=config.http.retry_after_seconds,
            body_timeout_seconds=config.http.body_timeout_seconds,
        )
        # One span intake for every carrier of OTLP spans, so a trace's spans meet.
        self.spans = SpanIntake(config.otlp, EventDecoder(config.limits, OTLP_SOURCE), self.queue, metrics, supervisor,
                                max_event_bytes=config.limits.max_event_bytes)
        self.kafka: KafkaSource | None = None
        if config.kafka.bootstrap_servers:
            self.kafka = KafkaSource(
                config.kafka, EventDecoder(config.limits, KAFKA_SOURCE), self.queue, metrics, dedup, self.spans,
                max_batch_events=config.pipeline.max_batch_events,
            )
        self.otlp: OtlpReceiver | None = None
        if config.otlp.enabled:
            self.otlp = OtlpReceiver(config.otlp, self.spans, self.queue, metrics, connections)
        self._app = build_app(
            self.ingest,
            self.registry,
            metrics,
            not_ready_reasons=self.not_ready_reasons,
            readiness_notes=self.readiness_notes,
            on_export=[self.kafka.on_export] if self.kafka else [],
            auth_token=config.auth_token(),
            max_body_bytes=config.http.max_body_bytes,
            api_routes=[*badcases_api.routes(config.results.sqlite_path),
                        *calibration_api.routes(config.results.sqlite_path, config.calibration)],
        )
        self.probes = _probe_schedules(config, self.registry, fallback, metrics.judge_retries)
        self._runner: web.AppRunner | None = None
        self._stopping = False
        self._ticker: asyncio.Task[None] | None = None
        self.port: int | None = None

    def not_ready_reasons(self) -> list[str]:
        reasons = []
        if self._stopping:
            reasons.append("shutting down")
        elif self._runner is None:
            reasons.append("starting")
        if self.queue.full:
            reasons.append("pipeline queue is full")
        if self.kafka is not None and (reason := self.kafka.not_ready_reason()):
            reasons.append(reason)
        reasons.extend(reason for task in self._supervised() if (reason := task.down_reason()))
        return reasons

    def readiness_notes(self) -> list[str]:
        """What /readyz reports without failing: components restarted in the last minute."""
        return [note for task in self._supervised() if (note := task.recent_restart())]

    def _supervised(self) -> list[Supervised]:
        return [self.pipeline.supervised, self.spans.supervised]

    @staticmethod
    async def _tick(join: FeedbackJoin) -> None:
        """Ends what is over in the feedback join when no event comes to do it (silent accepts, orphans)."""
        while True:
            await asyncio.sleep(1.0)
            try:
                join.expire()
            except Exception:  # a defect: logged, and the next second tries again
                log.exception("the feedback join's timer failed")

    async def start(self) -> None:
        await self.pipeline.start()
        await self.spans.start()
        if self.join is not None:
            self._ticker = asyncio.create_task(self._tick(self.join), name="ragpulse-feedback-join")
        if self.judges is not None:
            await self.judges.start()
        if self.embeddings is not None:
            self.embeddings.start()
        for schedule in self.probes:
            schedule.start()
        self._runner = web.AppRunner(self._app, **runner_options(self.config.http.idle_timeout_seconds))
        await self._runner.setup()
        limit_connections(self._runner, "http", self.config.http.max_connections, self.connections)
        site = web.TCPSite(self._runner, self.config.http.host, self.config.http.port)
        try:
            await site.start()
        except OSError as exc:
            raise StartupError("HTTP", f"{self.config.http.host}:{self.config.http.port}", "http.port", exc.strerror or str(exc)) from None
        self.port = self._runner.addresses[0][1]  # the bound port, also when http.port is 0
        self.metrics.source_up.labels(source=HTTP_SOURCE).set(1)
        if self.kafka is not None:
            await self.kafka.start()
        if self.otlp is not None:
            await self.otlp.start()
        config = self.config
        judge = ("off" if config.judge.mode == "off" else f"llm {config.judge.model}" if config.judge.uses_llm
                 else "local (no judge.api_key or judge.base_url)")
        # What a newcomer needs to know of the defaults, in one line (README, CLI).
        log.info("ragpulse started", version=ragpulse.__version__, host=config.http.host, port=self.port,
                 otlp=(f"{config.otlp.host}:{self.otlp.http_port} (HTTP), "
                       + (f":{self.otlp.grpc_port} (gRPC)" if self.otlp.grpc_port is not None else "gRPC off")
                       if self.otlp is not None else "off"),
                 kafka=config.kafka.bootstrap_servers or "off", judge=judge,
                 sample_rate=config.judge.sample_rate if config.judge.mode != "off" else None,
                 badcases=config.results.sqlite_path or "off")

    async def shutdown(self) -> int:
        """Drain and stop; returns the number of accepted events that could not be processed."""
        self._stopping = True
        self.ingest.accepting = False
        self.metrics.source_up.labels(source=HTTP_SOURCE).set(0)
        if self.kafka is not None:
            await self.kafka.stop_intake()
        if self.otlp is not None:
            await self.otlp.stop_intake()
        await self.spans.stop_intake()
        for schedule in self.probes:
            await schedule.stop()
        lost = await self.pipeline.shutdown(self.config.pipeline.shutdown_timeout_seconds)
        if self._ticker is not None:
            self._ticker.cancel()
        if self.judges is not None:
            await self.judges.shutdown()
        if self.embeddings is not None:
            await asyncio.to_thread(self.embeddings.close)
        if self._runner is not None:
            await self._runner.cleanup()  # the last scrape (and its offset commit) is behind us
        if self.kafka is not None:
            await self.kafka.close()
        if self.otlp is not None:
            await self.otlp.close()
        processed = {
            kind: int(self.registry.get_sample_value("ragpulse_events_processed_total", {"type": kind}) or 0)
            for kind in ("trace", "feedback")
        }
        log.info("ragpulse stopped", processed=processed, dropped=lost)
        return lost

    async def run(self, stop: asyncio.Event) -> int:
        await self.start()
        await stop.wait()
        log.info("stopping: intake closed, draining", queued=self.queue.depth)
        return await self.shutdown()
