"""Prometheus text scraped from a sidecar, as samples; and every metric ragpulse exports."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


class ScrapeRefused(OSError):
    """A /metrics answer that is not 200: Prometheus records no sample for it and scrapes again."""


class Samples(dict[tuple[str, frozenset[tuple[str, str]]], float]):
    def get_value(self, name: str, **labels: str) -> float:
        """The sample's value, or 0.0 when the series does not exist (yet)."""
        return self.get((name, frozenset(labels.items())), 0.0)

    def total(self, name: str, **labels: str) -> float:
        """Sum over every series of `name` whose labels include `labels`."""
        wanted = set(labels.items())
        return sum(v for (n, lbls), v in self.items() if n == name and wanted <= lbls)


def parse_metrics(text: str) -> Samples:
    samples = Samples()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def exported_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every ragpulse metric, name -> (type, labels): each component declares its own, beside its code."""
    from prometheus_client import CollectorRegistry

    from types import SimpleNamespace

    from ragpulse.app.server import ServerMetrics
    from ragpulse.app.service import process_metrics
    from ragpulse.collector.dedup import DedupMetrics
    from ragpulse.collector.intake import IntakeMetrics
    from ragpulse.collector.pipeline import PipelineMetrics
    from ragpulse.collector.queue import QueueMetrics
    from ragpulse.collector.supervisor import SupervisorMetrics
    from ragpulse.collector.telemetry.fast_metrics import HistogramFamily
    from ragpulse.collector.telemetry.labels import LabelGuard
    from ragpulse.config import Config
    from ragpulse.exporters.forward import ForwardMetrics
    from ragpulse.interop.otlp_exporters import InteropMetrics
    from ragpulse.exporters.prometheus import FastPathMetrics
    from ragpulse.results.writer import ResultMetrics
    from ragpulse.judging.calibration import CalibrationMetrics
    from ragpulse.judging.chunk_analysis import ChunkCache
    from ragpulse.judging.local_judge import LocalJudgeMetrics
    from ragpulse.judging.metrics import JudgeMetrics, JudgmentMetrics
    from ragpulse.judging.sampler import SamplerMetrics
    from ragpulse.probes.marker import ProbeTrafficFilter
    from ragpulse.probes.schedule import ProbeMetrics
    from ragpulse.report.schedule import ReportMetrics
    from ragpulse.judging.utilisation import ContextMetrics
    from ragpulse.scorers.citations import CitationMetrics
    from ragpulse.scorers.embedding import EmbeddingMetrics
    from ragpulse.scorers.fallback import FallbackMetrics
    from ragpulse.feedback.tables import JoinMetrics
    from ragpulse.scorers.lexical import LexicalMetrics
    from ragpulse.feedback.satisfaction import SatisfactionMetrics
    from ragpulse.sources.connections import ConnectionMetrics
    from ragpulse.sources.kafka.metrics import KafkaMetrics
    from ragpulse.sources.otlp.metrics import OtlpMetrics

    registry, labels = CollectorRegistry(), Config().metrics.labels
    guard = LabelGuard(labels, 1, 1, registry)
    pipeline, intake = PipelineMetrics(registry), IntakeMetrics(registry)
    otlp = OtlpMetrics(registry, intake, pipeline.dropped)
    judgment = JudgmentMetrics(registry, guard, judge="llm")  # the judging exit's metrics consumer: the verdict families
    holders = [guard, SimpleNamespace(build_info=process_metrics(registry)), pipeline, intake, otlp, KafkaMetrics(registry, intake, otlp), DedupMetrics(registry), ServerMetrics(registry),
               FastPathMetrics(registry, Config().metrics), LexicalMetrics(registry, list(labels)),
               EmbeddingMetrics(registry, list(labels), pipeline.stage_errors), ResultMetrics(registry),
               JudgeMetrics(registry), SamplerMetrics(registry, labels), judgment, judgment.rates,
               CalibrationMetrics(registry), QueueMetrics(registry), ConnectionMetrics(registry), SupervisorMetrics(registry),
               JoinMetrics(registry), SatisfactionMetrics(registry, labels), LocalJudgeMetrics(registry),
               ChunkCache(registry, max_entries=1, max_bytes=1), ProbeMetrics(registry),
               ProbeTrafficFilter(registry), CitationMetrics(registry, list(labels)), ContextMetrics(registry, labels),
               InteropMetrics(registry), ForwardMetrics(registry), FallbackMetrics(registry), ReportMetrics(registry)]
    found = {}
    for metric in (metric for holder in holders for metric in vars(holder).values()):
        if hasattr(metric, "_labelnames"):  # prometheus_client's own metrics
            kind, name, names = metric._type, metric._name, metric._labelnames
        elif hasattr(metric, "labelnames"):  # fast_metrics families
            kind = "histogram" if isinstance(metric, HistogramFamily) else "counter"
            name, names = metric.name, metric.labelnames
        else:
            continue
        name += "_total" if kind == "counter" and not name.endswith("_total") else ""
        found[name] = (kind, tuple(names))
    return found
