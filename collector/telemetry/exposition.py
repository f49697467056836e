"""GET /metrics: the Prometheus text format (0.0.4), written at a fraction of prometheus_client's cost.

prometheus_client's writer escapes every label and formats every value on every scrape, about
10 us a series: 91 ms for the 7,600 series of a sidecar watching three apps of eight routes. Here
the fast families (collector/telemetry/fast_metrics.py) write their own lines from label text made once per
child, and every other metric goes through a writer that keeps the text of each label set it has
seen (bounded: cleared when it outgrows MAX_CACHED_LABEL_SETS). The lines are those
prometheus_client would write, in the same order (tests/test_exposition.py compares them).

Prometheus lists the 0.0.4 text format in every scrape's Accept header, so it is what a scrape
gets; a client that accepts only OpenMetrics gets prometheus_client's OpenMetrics writer.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from ragpulse.collector.telemetry.fast_metrics import RenderedMetric, help_text, label_text, number

MAX_CACHED_LABEL_SETS = 50_000
_TEXT_TYPES = ("text/plain", "text/*", "*/*")
# How prometheus_client names and types each kind of metric in the text format.
_RENAMED = {"counter": ("_total", "counter"), "info": ("_info", "gauge"), "stateset": ("", "gauge"),
            "gaugehistogram": ("", "histogram"), "unknown": ("", "untyped")}
_OPENMETRICS_ONLY_SUFFIXES = ("_created", "_gsum", "_gcount")


class TextExposition:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry
        self._labels: dict[tuple[tuple[str, str], ...], str] = {}

    def encoder(self, accept: str) -> tuple[Callable[[CollectorRegistry], bytes], str]:
        """The writer and content type for a scrape's Accept header."""
        media = {part.split(";")[0].strip() for part in accept.split(",")} if accept.strip() else set()
        if not media or media & set(_TEXT_TYPES):
            return lambda _registry: self.render(), CONTENT_TYPE_PLAIN_0_0_4
        return choose_encoder(accept)

    def render(self) -> bytes:
        output: list[str] = []
        for metric in self._registry.collect():
            if isinstance(metric, RenderedMetric):
                output.append(metric.text())
            else:
                self._write(metric, output)
        return "".join(output).encode()

    def _write(self, metric: Metric, output: list[str]) -> None:
        name, typ = metric.name, metric.type
        suffix, typ = _RENAMED.get(typ, ("", typ))
        documentation = help_text(metric.documentation)
        output.append(f"# HELP {name + suffix} {documentation}\n# TYPE {name + suffix} {typ}\n")
        later: dict[str, list[str]] = {}
        for sample in metric.samples:
            for openmetrics_suffix in _OPENMETRICS_ONLY_SUFFIXES:
                if sample.name == name + openmetrics_suffix:  # a gauge of its own after the family, as prometheus_client does
                    later.setdefault(openmetrics_suffix, []).append(self._line(sample))
                    break
            else:
                output.append(self._line(sample))
        for openmetrics_suffix, lines in sorted(later.items()):
            output.append(f"# HELP {name + openmetrics_suffix} {documentation}\n# TYPE {name + openmetrics_suffix} gauge\n")
            output.extend(lines)

    def _line(self, sample: Sample) -> str:
        timestamp = "" if sample.timestamp is None else f" {int(float(sample.timestamp) * 1000):d}"
        if not sample.labels:
            return f"{sample.name} {number(sample.value)}{timestamp}\n"
        key = tuple(sample.labels.items())  # a metric builds its label dicts in one order: sorted only once
        labels = self._labels.get(key)
        if labels is None:
            if len(self._labels) >= MAX_CACHED_LABEL_SETS:
                self._labels.clear()
            ordered = sorted(key)
            labels = self._labels[key] = label_text([k for k, _ in ordered], [v for _, v in ordered])
        return f"{sample.name}{{{labels}}} {number(sample.value)}{timestamp}\n"
