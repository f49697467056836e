"""One report: the store's figures for a period, the release comparison, the weekly review's cases, the probes'
runs and, when given, Prometheus' recorded series; and the short summary that heads the page."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragpulse.config import CalibrationConfig
from ragpulse.report import compare, prometheus, review, store
from ragpulse.results import report_tally


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The lines the summary and plots draw; the defaults are the mixin's (tests/test_report.py)."""

    hallucination: float = 0.15  # Settings.hallucination_threshold
    min_judgments: int = 50  # Settings.min_judgments
    fallback_band: tuple[float, float] = (0.05, 0.15)  # Settings.fallback_band
    fallback_min_traces: int = 200  # Settings.fallback_min_traces
    drift: compare.DriftRule = compare.DriftRule()


@dataclass(frozen=True, slots=True)
class Request:
    db_path: str
    since: float
    until: float
    app: str | None = None
    route: str | None = None
    cases: int = review.DEFAULT_CASES
    probes_path: str | None = None
    prometheus_url: str | None = None
    window: str | None = None  # Prometheus' rate window; None: the one that fits a bin
    fallback_window: str = "1h"
    before: str | None = None  # releases to compare; None: the period's last two
    after: str | None = None


def build(request: Request, calibration: CalibrationConfig, thresholds: Thresholds = Thresholds(),
          now: float | None = None) -> dict[str, Any]:
    with closing(report_tally.connect(request.db_path)) as db:
        figures = store.figures(db, since=request.since, until=request.until, app=request.app, route=request.route,
                                calibration=calibration)
        cases = review.worst_cases(db, since=request.since, until=request.until, app=request.app,
                                   route=request.route, limit=request.cases)
        starts = _release_starts(db, request)
    comparison = compare.compare_releases(figures.by_release, figures.release_order, thresholds.drift,
                                          request.before, request.after)
    found: dict[str, Any] = {
        "generated_at": time.time() if now is None else now, "since": request.since, "until": request.until,
        "app": request.app, "route": request.route, "figures": figures, "comparison": comparison, "cases": cases,
        "release_starts": starts, "probes": _probes(request), "thresholds": thresholds,
        "calibration_threshold": calibration.agreement_threshold, "prometheus": None,
    }
    unread = []
    if request.prometheus_url:
        window = request.window or prometheus.window_for(figures.bin_seconds)
        try:
            found["prometheus"] = prometheus.figures(
                prometheus.Prometheus(request.prometheus_url), since=request.since, until=request.until,
                step=figures.bin_seconds, window=window, fallback_window=request.fallback_window, app=request.app)
        except prometheus.Unread as exc:  # the store's report still stands; the page says what is missing and why
            unread.append(f"Not read from Prometheus, so not reported: {exc}.")
    found["summary"] = summary(found) + unread
    return found


def _release_starts(db: sqlite3.Connection, request: Request) -> list[tuple[float, str]]:
    """Where each release of the period first shows in the tallies (the plots' markers), oldest first."""
    conditions = [("bucket >= ?", request.since), ("bucket < ?", request.until), ("app = ?", request.app),
                  ("route = ?", request.route)]
    given = [(clause, value) for clause, value in conditions if value is not None]
    rows = db.execute(f"SELECT release, min(bucket) FROM report_tally WHERE {' AND '.join(c for c, _ in given)} "
                      "AND release IS NOT NULL GROUP BY release ORDER BY min(bucket)", [v for _, v in given]).fetchall()
    return [(float(at), str(release)) for release, at in rows[1:]]  # the first was there before the period


def _probes(request: Request) -> list[dict[str, Any]]:
    """The probe runs that started in the period, newest first (at most the probes' store's 50 newest)."""
    if request.probes_path is None or not Path(request.probes_path).exists():
        return []
    from ragpulse.probes import store as probe_store  # the probes' runs (and their runner) only when there are some

    with closing(probe_store.connect(request.probes_path)) as db:
        return [run for run in probe_store.runs(db, limit=50) if request.since <= run["started_at"] < request.until]


def _percent(value: float | None) -> str:
    return "not reported" if value is None else f"{100 * value:.1f}%"


def _crossed(shares: dict[str, store.Share], when: str, limits: Thresholds) -> list[str]:
    """The thresholds these shares cross: the hallucination rate's whole interval above its line (with enough
    judgments), the fallback rate outside its healthy band (with enough traces)."""
    found = []
    hallucination = shares["hallucination"]
    interval = hallucination.interval
    if interval is not None and hallucination.n >= limits.min_judgments and interval.low > limits.hallucination:
        found.append(f"{when}, the hallucination rate {_percent(interval.estimate)} (95% interval "
                     f"{_percent(interval.low)} to {_percent(interval.high)}) is above the {limits.hallucination:.0%} "
                     "threshold.")
    fallback = shares["fallback"].interval
    low, high = limits.fallback_band
    if fallback is not None and shares["fallback"].n >= limits.fallback_min_traces and not low <= fallback.estimate <= high:
        found.append(f"{when}, the fallback rate {_percent(fallback.estimate)} is outside its healthy band "
                     f"{low:.0%}-{high:.0%}.")
    return found


def summary(found: dict[str, Any]) -> list[str]:
    """The page's first lines: what changed with the release, what crossed a threshold, in words."""
    figures: store.StoreFigures = found["figures"]
    limits: Thresholds = found["thresholds"]
    lines = []
    if (comparison := found["comparison"]) is not None:
        moved = [row for row in comparison["indicators"] if row["verdict"] in ("worse", "better", "changed")]
        for row in moved:
            lines.append(f"Release {comparison['after']} against {comparison['before']}: {row['indicator'].replace('_', ' ')} "
                         f"{row['verdict']}, {_percent(row['before']['rate'])} → {_percent(row['after']['rate'])} "
                         f"(change {100 * row['change']:+.1f} points, 95% interval {100 * row['change_low']:+.1f} to "
                         f"{100 * row['change_high']:+.1f}; z = {row['z']:.1f}).")
        if not moved:
            lines.append(f"Release {comparison['after']} against {comparison['before']}: no significant change.")
    crossed = _crossed(figures.overall, "Over the period", limits)
    if comparison is not None:  # a rate over the whole period hides a release that crossed a line since
        crossed += _crossed({row["indicator"]: store.Share(row["after"]["successes"], row["after"]["n"])
                             for row in comparison["indicators"]}, f"In release {comparison['after']}", limits)
    for group in figures.calibration:
        if group["below_threshold"]:
            crossed.append(f"Judge {group['judge']} ({group['judge_model']}) agrees with the human reviews on "
                         f"{_percent(group['agreement'])}: below the {found['calibration_threshold']:.0%} line.")
    return lines + (crossed or ["Nothing crossed a threshold."])
