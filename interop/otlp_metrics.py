"""The series of /metrics pushed over OTLP on an interval, for shops that run no Prometheus scraper.

A bridge from the Prometheus registry, not a second set of OpenTelemetry instruments: the registry stays
the one source of every series (the fast path updates lock-free children the SDK could not read), and an
export reads it as a scrape does, on the event loop, then hands the OTLP data to the OpenTelemetry SDK's
metric exporter (gRPC or HTTP) on a thread. One export is in flight at a time; a failed one is counted
(cumulative temporality loses nothing by it: the next push carries the totals; delta loses that interval), as
is one cut off at shutdown, whose last push gets what is left of the interop outputs' one deadline.

Names map so that the OpenTelemetry Collector's Prometheus exporter maps them back: `ragpulse_` becomes the
`ragpulse.` namespace, a counter loses `_total`, and a `_seconds` or `_bytes` suffix becomes the unit
(`ragpulse_judgments_total` -> `ragpulse.judgments`; `ragpulse_answer_latency_seconds` ->
`ragpulse.answer_latency`, unit s; see otel_name). docs/metrics.md's table lists every name; a test holds it to this.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from typing import Any

import structlog
from opentelemetry.sdk.metrics.export import (AggregationTemporality, Gauge, Histogram, HistogramDataPoint,
                                              Metric, MetricExportResult, MetricsData,
                                              NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric as PrometheusMetric

from ragpulse import __version__
from ragpulse.collector.telemetry.shared import shared
from ragpulse.config import OtlpMetricsConfig
from ragpulse.interop.otlp_exporters import InteropMetrics, metric_exporter, on_own_thread

log = structlog.get_logger("ragpulse.interop")
OUTPUT = "otlp_metrics"
_UNITS = (("_seconds", "s"), ("_bytes", "By"))
_TO_GAUGE = ("gauge", "info", "stateset", "unknown", "untyped")


def otel_name(family: str, families: set[str] | frozenset[str] = frozenset()) -> tuple[str, str]:
    """The OpenTelemetry name and unit of a Prometheus family (counters named without `_total`, as
    prometheus_client names their families). A unit suffix stays in the name when another of `families`
    has the name without it (ragpulse_otlp_traces_in_flight_bytes beside ragpulse_otlp_traces_in_flight),
    so no two families share a name."""
    unit = ""
    for suffix, symbol in _UNITS:
        if family.endswith(suffix):
            unit = symbol
            if family.removesuffix(suffix) not in families:
                family = family.removesuffix(suffix)
            break
    if family.startswith("ragpulse_"):
        family = "ragpulse." + family.removeprefix("ragpulse_")
    return family, unit


class PrometheusBridge:
    """Reads the registry and makes OTLP metrics data of it, cumulative or delta."""

    def __init__(self, registry: CollectorRegistry, resource: Resource, temporality: str) -> None:
        self._registry = registry
        self._resource = resource
        self._delta = temporality == "delta"
        self._temporality = AggregationTemporality.DELTA if self._delta else AggregationTemporality.CUMULATIVE
        self._scope = InstrumentationScope("ragpulse", __version__)
        self._started = time.time_ns()
        self._last = self._started  # the previous collect: a delta's start
        # Delta: each series' totals at the previous collect; rebuilt every collect, so never more than the
        # registry holds (its label guard bounds it).
        self._previous: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, ...]] = {}

    def collect(self) -> MetricsData:
        now = time.time_ns()
        current: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, ...]] = {}
        collected = list(self._registry.collect())
        names = {family.name for family in collected}
        metrics = [metric for family in collected if (metric := self._metric(family, names, now, current))]
        self._previous, self._last = current, now
        return MetricsData([ResourceMetrics(self._resource, [ScopeMetrics(self._scope, metrics, "")], "")])

    def _start(self, created: float | None) -> int:
        if self._delta:
            return self._last
        return int(created * 1e9) if created else self._started

    def _change(self, key: tuple[str, tuple[tuple[str, str], ...]], totals: tuple[float, ...],
                current: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, ...]]) -> tuple[float, ...]:
        """What to send for a monotonic series: its totals, or for delta what they grew by since the last
        collect (the totals themselves for a new or reset series)."""
        if not self._delta:
            return totals
        current[key] = totals
        before = self._previous.get(key)
        if before is None or totals[0] < before[0]:
            return totals
        return tuple(now - then for now, then in zip(totals, before, strict=False))

    def _metric(self, family: PrometheusMetric, names: set[str], now: int,
                current: dict[Any, tuple[float, ...]]) -> Metric | None:
        name, unit = otel_name(family.name + ("_info" if family.type == "info" else ""), names)
        samples = family.samples
        if family.type == "histogram":
            points: list[Any] = self._histogram_points(family.name, samples, now, current)
            data: Any = Histogram(points, self._temporality)
        elif family.type == "counter":
            created = {_key(s.labels): s.value for s in samples if s.name == family.name + "_created"}
            points = []
            for sample in samples:
                if sample.name.endswith("_created"):
                    continue
                labels = _key(sample.labels)
                (value,) = self._change((family.name, labels), (float(sample.value),), current)
                points.append(NumberDataPoint(dict(labels), self._start(created.get(labels)), now, value))
            data = Sum(points, self._temporality, is_monotonic=True)
        elif family.type in _TO_GAUGE:
            points = [NumberDataPoint(dict(s.labels), 0, now, float(s.value)) for s in samples]
            data = Gauge(points)
        else:  # summary, gaugehistogram: none in ragpulse's registry; skipped rather than misrepresented
            return None
        return Metric(name, family.documentation, unit, data) if points else None

    def _histogram_points(self, family: str, samples: Iterable[Any], now: int,
                          current: dict[Any, tuple[float, ...]]) -> list[HistogramDataPoint]:
        series: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
        for sample in samples:
            labels = dict(sample.labels)
            bound = labels.pop("le", None)
            entry = series.setdefault(_key(labels), {"buckets": []})
            suffix = sample.name.removeprefix(family)
            if suffix == "_bucket":
                entry["buckets"].append((float(bound), float(sample.value)))
            else:
                entry[suffix] = float(sample.value)
        points = []
        for labels, entry in series.items():
            cumulative = sorted(entry["buckets"])
            bounds = [bound for bound, _ in cumulative if bound != float("inf")]
            per_bucket = [count - (cumulative[i - 1][1] if i else 0.0) for i, (_, count) in enumerate(cumulative)]
            totals = self._change((family, labels), (entry.get("_count", 0.0), entry.get("_sum", 0.0), *per_bucket),
                                  current)
            points.append(HistogramDataPoint(
                dict(labels), self._start(entry.get("_created")), now, int(totals[0]), totals[1],
                [int(count) for count in totals[2:]], bounds, None, None))  # type: ignore[arg-type]  # min/max: not kept
        return points


def _key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


class OtlpMetricsPush:
    """Pushes the bridge's data every interval, and once more at shutdown."""

    def __init__(self, options: OtlpMetricsConfig, registry: CollectorRegistry, resource: Resource) -> None:
        metrics = shared(registry, InteropMetrics)
        self._interval = options.interval_seconds
        self._bridge = PrometheusBridge(registry, resource, options.temporality)
        self._exporter = metric_exporter(options)
        self._timeout_ms = options.timeout_seconds * 1000
        self._sent = metrics.sent.labels(output=OUTPUT)
        self._failed = metrics.dropped.labels(output=OUTPUT, reason="export_failed")
        metrics.queued.labels(output=OUTPUT).set(0)  # nothing waits: one export at a time, read when it starts
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="ragpulse-otlp-metrics")

    async def push(self) -> None:
        data = self._bridge.collect()  # on the loop, as a scrape reads the registry
        delivered = False
        try:
            result = await on_own_thread(lambda: self._exporter.export(data, timeout_millis=self._timeout_ms),
                                         "ragpulse-otlp-metrics-push")
            delivered = result is MetricExportResult.SUCCESS
        except Exception as exc:  # an exporter bug costs this push, never the loop
            log.warning("OTLP metrics push failed", error=f"{type(exc).__name__}: {exc}")
        finally:  # a push cut off by shutdown is counted too
            (self._sent if delivered else self._failed).inc()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.push()

    async def shutdown(self, deadline: float) -> None:
        """One last push (the totals at shutdown), waited for until `deadline` (a monotonic time), at most
        timeout_seconds: cut off, it is counted as failed. The exporter is then shut, which ends its retries."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, min(deadline - time.monotonic(), self._timeout_ms / 1000))):
                    await self.push()
        self._exporter.shutdown()  # sets a flag and closes the connections: never waits on the endpoint
