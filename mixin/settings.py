"""What an on-call team tunes in the rules and alerts: thresholds, minimum counts, windows.

The committed files are rendered with the defaults; `python -m ragpulse.mixin --settings FILE.yaml
--out DIR` renders them with other values (a YAML mapping of these fields), as the tests do with
windows of seconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Settings:
    # The red line: page when the lower bound of the hallucination rate's 95% interval is above it...
    hallucination_threshold: float = 0.15
    # ...and the window holds at least this many judgments.
    min_judgments: int = 50
    hallucination_window: str = "1h"
    hallucination_for: str = "10m"
    # Drift: a recent window against a baseline before it, a fast pair and a slow pair. Alert when the
    # one-sided two-proportion z is above drift_z and the rise is at least the minimum effect.
    drift_fast: tuple[str, str] = ("5m", "1h")
    drift_fast_for: str = "5m"
    drift_slow: tuple[str, str] = ("1h", "7d")
    drift_slow_for: str = "30m"
    drift_z: float = 3.09  # one-sided 0.1%: the rule tests again every minute
    drift_min_effect: float = 0.05  # hallucination and fallback rates
    drift_min_effect_signals: float = 0.02  # rephrase and escalation rates (smaller base rates)
    drift_min_recent: int = 30  # judgments (or traces) in the recent window
    drift_min_baseline: int = 100
    # The healthy fallback band of a broad knowledge base; product-specific.
    fallback_band: tuple[float, float] = (0.05, 0.15)
    fallback_window: str = "1h"
    fallback_for: str = "30m"
    fallback_min_traces: int = 200
    # Failed runs (an error, no answer: a provider's 500, a timeout) over this share of an app's traces in the
    # window, with at least failed_min_traces traces, warn (RagpulseFailedRunsHigh).
    failed_ratio: float = 0.05
    failed_window: str = "15m"
    failed_min_traces: int = 50
    # Pipeline health.
    judge_error_ratio: float = 0.1
    stalled_window: str = "30m"
    invalid_ratio: float = 0.05
    kafka_lag_records: int = 10_000
    otlp_ttl_ratio: float = 0.1
    health_for: str = "10m"
    # Golden-set probes (probes.schedules): the hit rate@k over the window must not fall under the minimum
    # with at least this many probed questions; a golden set whose last run is older than this is stale.
    probe_hit_rate_min: float = 0.8
    probe_window: str = "6h"
    probe_min_questions: int = 20
    probe_stale_seconds: int = 10_800  # three of the default hour-long intervals
    # Citation precision (supported among judged cited sentences) under this floor over the window, with at
    # least citation_min_judged of them, warns (RagpulseCitationPrecisionLow); None: no such alert.
    citation_precision_min: float | None = None
    citation_window: str = "6h"
    citation_min_judged: int = 30
    # The scrape job(s) of the sidecars, a regular expression on `job`.
    scrape_job: str = ".*ragpulse.*"
    # Where docs/runbook.md is served; alerts link to its sections.
    runbook_url: str = "docs/runbook.md"
    # Windows of the recorded rates and intervals (hallucination_window must be one of them), and of calibration.
    rate_windows: tuple[str, ...] = ("5m", "1h", "6h", "1d")
    calibration_windows: tuple[str, ...] = ("7d", "30d")
    # Evaluation interval of every rule group. One interval for all: a rule reads another group's results
    # up to one interval old, and a slower group would fall out of Prometheus' 5-minute lookback now and
    # then, resetting the `for:` of the alerts that read it.
    interval: str = "1m"

    @classmethod
    def load(cls, path: str | Path) -> Settings:
        data: dict[str, Any] = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{path}: unknown settings {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        for name in ("drift_fast", "drift_slow", "fallback_band", "rate_windows", "calibration_windows"):
            if name in data:
                data[name] = tuple(data[name])
        return cls(**data)
