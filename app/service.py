"""The service: builds every component from a validated Config and runs their lifecycle.

start: the pipeline and the span intake first, then the HTTP server, the
Kafka source and the OTLP receivers (nothing is accepted that cannot be
processed). shutdown: stop intake (ingest and OTLP answer 503, /readyz fails,
Kafka stops fetching), hand the traces still being assembled to the queue,
drain it within pipeline.shutdown_timeout_seconds, close the server, then let
the Kafka consumer leave its group: it stays until the last scrape has
committed.

Each component declares its own telemetry on the registry it is handed; the
wiring only decides what is built, in what order, and who listens to whom.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import structlog
from aiohttp import web
from prometheus_client import CollectorRegistry, Gauge, GCCollector, PlatformCollector, ProcessCollector

import ragpulse
from ragpulse.app.components import fallback_detector, prober, probe_correctness
from ragpulse.app.interop_wiring import Interop
from ragpulse.app.judging_wiring import Judging
from ragpulse.app.server import build_app
from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.dedup import DedupStage, DedupWindow
from ragpulse.collector.events import Envelope, TraceEvent
from ragpulse.collector.pipeline import Exporter, Pipeline, Stage
from ragpulse.collector.queue import EventQueue
from ragpulse.collector.supervisor import Supervised
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.errors import ConfigError, ConfigProblem, StartupError
from ragpulse.exporters.forward import KafkaForwarder
from ragpulse.exporters.prometheus import FastPathExporter
from ragpulse.feedback.join import FeedbackJoin
from ragpulse.feedback.satisfaction import SignalCounter
from ragpulse.probes import golden
from ragpulse.probes.marker import ProbeTrafficFilter, is_probe
from ragpulse.probes.schedule import ProbeSchedule
from ragpulse.probes.target import HttpTarget, TargetError
from ragpulse.report import http as report_http
from ragpulse.results import badcases_api, calibration_api
from ragpulse.scorers.citations import CitationScorer
from ragpulse.scorers.embedding import EmbeddingScorer, load_model
from ragpulse.scorers.fallback import FallbackDetector
from ragpulse.scorers.lexical import LexicalScorer
from ragpulse.sources.access import OPT_OUT, Scope, access, api_scope
from ragpulse.sources.connections import limit_connections, runner_options
from ragpulse.sources.http import SOURCE as HTTP_SOURCE
from ragpulse.sources.http import HttpIngest
from ragpulse.sources.kafka import SOURCE as KAFKA_SOURCE
from ragpulse.sources.kafka import KafkaSource
from ragpulse.sources.kafka.backends import backend as kafka_backend
from ragpulse.sources.otlp.intake import SOURCE as OTLP_SOURCE
from ragpulse.sources.otlp.intake import SpanIntake
from ragpulse.sources.otlp.receiver import OtlpReceiver

if TYPE_CHECKING:  # the scheduler loads matplotlib: only when report.schedule asks for reports
    from ragpulse.report.schedule import ReportScheduler

log = structlog.get_logger("ragpulse.service")


def _feedback_join(config: Config, registry: CollectorRegistry, guard: LabelGuard) -> FeedbackJoin:
    counter = SignalCounter(registry, guard, max_cached=4 * config.metrics.max_label_sets)
    return FeedbackJoin(config.satisfaction, registry, counter, guard)


def _report_scheduler(config: Config, registry: CollectorRegistry) -> ReportScheduler | None:
    """The scheduled reports (report.schedule), when asked for; matplotlib is loaded only then."""
    schedule, path = config.report.schedule, config.results.sqlite_path
    if not (schedule.daily or schedule.weekly) or path is None:  # config checks: a schedule needs the store
        return None
    from ragpulse.report.schedule import ReportScheduler

    return ReportScheduler(schedule, path, config.calibration, registry, probes_path=config.probes.db_path)


def _probe_schedules(config: Config, registry: CollectorRegistry, judging: bool) -> list[ProbeSchedule]:
    """The golden sets probed on a schedule; a set that does not load or a target that cannot be used is a config error.
    With `judging` on, the probes' LLM correctness calls count their retries with the judge's."""
    options = config.probes
    if not options.schedules:
        return []
    targets = {target.name: target for target in options.targets}
    schedules, problems = [], []
    correctness = probe_correctness(config, registry if judging else None)
    fallback = fallback_detector(config)
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
        schedules.append(ProbeSchedule(loaded, prober(config, target, fallback, correctness), registry, options.db_path,
                                       interval=entry.interval_seconds, jitter=entry.jitter_seconds, target=entry.target))
    if problems:
        raise ConfigError(problems, "probes")
    return schedules


def process_metrics(registry: CollectorRegistry) -> Gauge:
    """The build info (version), and the process, platform and GC collectors; returns the build info gauge."""
    info = Gauge("ragpulse_build_info", "Always 1; the version in a label.", ["version"], registry=registry)
    info.labels(version=ragpulse.__version__).set(1)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return info


class Service:
    def __init__(self, config: Config, registry: CollectorRegistry | None = None) -> None:
        self.config = config
        self.registry = registry = registry if registry is not None else CollectorRegistry()
        process_metrics(registry)
        self.queue = EventQueue("pipeline", config.pipeline.queue_capacity_events, config.pipeline.queue_capacity_bytes,
                                registry)
        dedup = DedupWindow(config.dedup.max_entries, config.dedup.window_seconds, registry)
        options = config.metrics
        guard = LabelGuard(options.labels, options.max_values_per_label, options.max_label_sets, registry)
        self.forwarder: KafkaForwarder | None = None
        self.embeddings: EmbeddingScorer | None = None
        self.join: FeedbackJoin | None = None
        self.judging: Judging | None = None
        self._fallback: FallbackDetector | None = None
        self.interop = Interop(config, registry)
        if config.forward.topic is not None:
            # The forwarding role (docs/scaling-out.md): checked, deduplicated events go to the topic, analysed elsewhere.
            self.forwarder = KafkaForwarder(config.forward, kafka_backend(config.kafka).producer, registry,
                                            max_message_bytes=config.limits.max_event_bytes)
            stages: list[tuple[str, Stage]] = [("dedup", DedupStage(dedup, registry))]
            exporters: list[tuple[str, Exporter]] = [("forward", self.forwarder)]
        else:
            stages = self._analysis_stages(config, registry, guard, dedup)
            exporters = [("prometheus", FastPathExporter(
                registry, options, guard, max_cached=4 * options.max_label_sets,
                fallback_rules=("explicit", "empty_retrieval", *(rule.name for rule in config.all_fallback_rules()))))]
        self.pipeline = Pipeline(self.queue, stages=stages, exporters=exporters, registry=registry,
                                 max_batch_events=config.pipeline.max_batch_events)
        self._sources(config, registry, dedup)
        self._app = build_app(
            self.ingest,
            registry,
            not_ready_reasons=self.not_ready_reasons,
            readiness_notes=self.readiness_notes,
            on_export=[self.kafka.on_export] if self.kafka else [],
            api=self.api,
            max_body_bytes=config.http.max_body_bytes,
            api_routes=[*badcases_api.routes(config.results.sqlite_path),
                        *calibration_api.routes(config.results.sqlite_path, config.calibration),
                        *report_http.routes(config.report.schedule.directory)],
        )
        self.probes = _probe_schedules(config, registry, judging=self.judging is not None)
        self.reports = _report_scheduler(config, registry)
        self._runner: web.AppRunner | None = None
        self._stopping = False
        self._ticker: asyncio.Task[None] | None = None
        self.port: int | None = None

    def _analysis_stages(self, config: Config, registry: CollectorRegistry, guard: LabelGuard,
                         dedup: DedupWindow) -> list[tuple[str, Stage]]:
        """The stages of an analysing replica, in the order every event meets them; builds the join and the judging."""
        options, local = config.metrics, config.local_scorers
        self._fallback = fallback_detector(config, registry)
        self.embeddings = self._embeddings(config, registry, guard)
        self.join = _feedback_join(config, registry, guard) if config.satisfaction.enabled else None
        # config: satisfaction is off only with the judge off, which needs the join
        self.judging = (Judging(config, registry, guard, self.join, self.interop.judgment_consumers())
                        if config.judge.mode != "off" and self.join is not None else None)
        stages: list[tuple[str, Stage | None]] = [
            ("probe_filter", ProbeTrafficFilter(registry)),
            ("dedup", DedupStage(dedup, registry)),
            ("fallback", self._fallback),
            # Citations first: the lexical scorer reads the answer without its markers.
            ("citations", CitationScorer(registry, guard, max_label_sets=options.max_label_sets) if local.enabled else None),
            ("local_scorers", LexicalScorer(registry, guard, local.chunk_cache_entries, local.chunk_cache_max_bytes,
                                            max_label_sets=options.max_label_sets) if local.enabled else None),
            ("embeddings", self.embeddings),
            ("feedback_join", self.join),
            ("judge_sampler", self.judging.sampler if self.judging is not None else None),
        ]
        return [(name, stage) for name, stage in stages if stage is not None]

    @staticmethod
    def _embeddings(config: Config, registry: CollectorRegistry, guard: LabelGuard) -> EmbeddingScorer | None:
        options = config.embeddings
        if not options.enabled:
            return None
        return EmbeddingScorer(
            load_model(options.model, options.device), registry, guard, sample_rate=options.sample_rate, queue_capacity=options.queue_capacity,
            queue_max_bytes=options.queue_max_bytes,
            batch_traces=options.batch_traces, chunk_cache_entries=options.chunk_cache_entries,
        )

    def _sources(self, config: Config, registry: CollectorRegistry, dedup: DedupWindow) -> None:
        self.api = api_scope(config)
        self.http_access = access(config, "http")
        self.ingest = HttpIngest(EventDecoder(config.limits, HTTP_SOURCE), self.queue, registry,
                                 access=self.http_access,
                                 retry_after_seconds=config.http.retry_after_seconds,
                                 body_timeout_seconds=config.http.body_timeout_seconds,
                                 max_body_bytes=config.http.max_body_bytes)
        # One span intake for every carrier of OTLP spans, so a trace's spans meet.
        self.spans = SpanIntake(config.otlp, EventDecoder(config.limits, OTLP_SOURCE), self.queue, registry,
                                max_event_bytes=config.limits.max_event_bytes)
        self.kafka: KafkaSource | None = None
        if config.kafka.bootstrap_servers and config.kafka.topics:  # no topics: the connection is the forwarder's
            self.kafka = KafkaSource(config.kafka, EventDecoder(config.limits, KAFKA_SOURCE), self.queue,
                                     registry, dedup, self.spans,
                                     max_batch_events=config.pipeline.max_batch_events,
                                     on_partitions_lost=self.join.drop_partitions if self.join is not None else None,
                                     on_replay=self._replay if self.join is not None else None,
                                     # What the previous owner has not settled: the last idle_seconds of sessions.
                                     replay_seconds=config.satisfaction.idle_seconds)
            if self.judging is not None:  # the routine floor counts the whole topics' traffic: its partitions' share
                self.kafka.on_share = self.judging.floor.set_partition_share
        self.otlp: OtlpReceiver | None = None
        self.otlp_access = access(config, "otlp")
        if config.otlp.enabled:
            self.otlp = OtlpReceiver(config.otlp, self.spans, self.queue, registry, access=self.otlp_access)

    def _replay(self, envelopes: list[Envelope]) -> None:
        """Events read back from Kafka partitions new to this replica (counted by their previous owner), replayed
        by the join with each trace's fallback as the pipeline's fallback stage decides it."""
        assert self.join is not None and self._fallback is not None
        detect = self._fallback.detect
        self.join.replay([(e, isinstance(e.event, TraceEvent) and detect(e.event) is not None) for e in envelopes
                          if not is_probe(e)])  # as the pipeline's first stage keeps probe traffic out

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
        if self.forwarder is not None and (reason := self.forwarder.not_ready_reason()):
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
        await self.interop.start()
        if self.forwarder is not None:
            await self.forwarder.start()
        if self.judging is not None:
            await self.judging.start()
        if self.embeddings is not None:
            self.embeddings.start()
        for schedule in self.probes:
            schedule.start()
        if self.reports is not None:
            self.reports.start()
        self._runner = web.AppRunner(self._app, **runner_options(self.config.http.idle_timeout_seconds))
        await self._runner.setup()
        limit_connections(self._runner, "http", self.config.http.max_connections, self.registry)
        site = web.TCPSite(self._runner, self.config.http.host, self.config.http.port)
        try:
            await site.start()
        except OSError as exc:
            raise StartupError("HTTP", f"{self.config.http.host}:{self.config.http.port}", "http.port", exc.strerror or str(exc)) from None
        self.port = self._runner.addresses[0][1]  # the bound port, also when http.port is 0
        self.ingest.up.set(1)
        if self.kafka is not None:
            await self.kafka.start()
        if self.otlp is not None:
            await self.otlp.start()
        self._log_started()

    def _log_started(self) -> None:
        config = self.config
        judge = ("off" if config.judge.mode == "off" else f"llm {config.judge.model}" if config.judge.uses_llm
                 else "local (no judge.api_key or judge.base_url)")
        # What a newcomer needs to know of the defaults, in one line (docs/configuration.md, CLI).
        log.info("ragpulse started", version=ragpulse.__version__, host=config.http.host, port=self.port,
                 role=f"forward to kafka topic {config.forward.topic}" if self.forwarder is not None else "analyse",
                 otlp=(f"{config.otlp.host}:{self.otlp.http_port} (HTTP), "
                       + (f":{self.otlp.grpc_port} (gRPC)" if self.otlp.grpc_port is not None else "gRPC off")
                       if self.otlp is not None else "off"),
                 kafka=config.kafka.bootstrap_servers or "off", judge=judge,
                 sample_rate=config.judge.sample_rate if config.judge.mode != "off" else None,
                 badcases=config.results.sqlite_path or "off")
        self._warn_exposed()

    def _warn_exposed(self) -> None:
        """One warning per user-data scope without its token on a non-loopback address: refused there, or (opted
        out) open to the network."""
        http = f"HTTP {self.config.http.host}:{self.port}"
        places = [(self.api, http), (self.http_access.review, http)]
        if self.otlp is not None:  # reviews come over OTLP too (evaluation scores)
            places.append((self.otlp_access.review, f"OTLP {self.config.otlp.host}:{self.otlp.http_port}"))
        exposed: dict[str, tuple[Scope, list[str]]] = {}
        for scope, where in places:
            if scope.exposed:
                exposed.setdefault(scope.name, (scope, []))[1].append(where)
        for name, (scope, listeners) in exposed.items():
            if scope.open:
                log.warning("user data open to the network without a token", scope=name, endpoints=scope.what,
                            listeners=listeners, setting=scope.setting, because=f"{OPT_OUT} is true")
            else:
                log.warning("user data refused (403): no token on a non-loopback address", scope=name,
                            endpoints=scope.what, listeners=listeners, setting=scope.setting,
                            fix=f"set {scope.setting} (or {scope.setting}_file), or listen on 127.0.0.1")

    async def shutdown(self) -> int:
        """Drain and stop; returns the number of accepted events that could not be processed."""
        self._stopping = True
        self.ingest.accepting = False
        self.ingest.up.set(0)
        if self.kafka is not None:
            await self.kafka.stop_intake()
        if self.otlp is not None:
            await self.otlp.stop_intake()
        await self.spans.stop_intake()
        for schedule in self.probes:
            await schedule.stop()
        if self.reports is not None:
            await self.reports.stop()
        lost = await self.pipeline.shutdown(self.config.pipeline.shutdown_timeout_seconds)
        if self._ticker is not None:
            self._ticker.cancel()
        if self.judging is not None:
            await self.judging.shutdown()
        await self.interop.shutdown()
        if self.forwarder is not None:
            await self.forwarder.shutdown()
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
