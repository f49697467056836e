"""The README's reference tables name exactly what the code has."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import CollectorRegistry

from ragpulse.collector.config import Config
from ragpulse.collector.errors import RejectReason
from ragpulse.collector.events import FEEDBACK_KINDS
from ragpulse.exporters.fast_metrics import HistogramFamily
from ragpulse.exporters.metrics import Metrics
from ragpulse.scorers.calibration import CalibrationMetrics
from ragpulse.scorers.sampler import SamplerMetrics
from ragpulse.scorers.workers import RateMetrics

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_metrics_table_lists_every_metric_with_its_type_and_labels() -> None:
    documented = {
        name: (kind, tuple(label.strip() for label in labels.split(",") if label.strip()))
        for name, kind, labels in re.findall(r"^\| `(ragpulse_\w+)` \| (\w+) \|([^|]*)\|", README, re.M)
    }
    registry, labels = CollectorRegistry(), Config().metrics.labels
    # The hub's metrics, and those that components declare beside their code.
    holders = [Metrics(registry, Config().metrics, "test"), SamplerMetrics(registry, labels), RateMetrics(registry, labels),
               CalibrationMetrics(registry)]
    actual = {}
    for metric in (metric for holder in holders for metric in vars(holder).values()):
        if hasattr(metric, "_labelnames"):  # prometheus_client's own metrics
            kind, name, labels = metric._type, metric._name, metric._labelnames
        elif hasattr(metric, "labelnames"):  # fast_metrics families
            kind = "histogram" if isinstance(metric, HistogramFamily) else "counter"
            name, labels = metric.name, metric.labelnames
        else:
            continue
        name += "_total" if kind == "counter" and not name.endswith("_total") else ""
        actual[name] = (kind, tuple(labels))
    assert documented == actual


def test_rejection_reasons_and_feedback_kinds_are_documented() -> None:
    for reason in RejectReason:
        assert f"`{reason.value}`" in README
    for kind in FEEDBACK_KINDS:
        assert f"`{kind}`" in README
