"""The report's plots: matplotlib figures written as SVG text, to be inlined in the page.

matplotlib because its SVG backend writes a static picture with no script and no network, and the same picture
for the same data: the ids it writes come from `svg.hashsalt` (fixed here) and the date metadata is left out.
Text is written as paths (`svg.fonttype: path`), so a page looks the same on a machine without the fonts.
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: the report is written, not shown

import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import PercentFormatter  # noqa: E402

from ragpulse.judging import STAGES  # noqa: E402
from ragpulse.report.store import Share  # noqa: E402

STYLE = {"svg.hashsalt": "ragpulse-report", "svg.fonttype": "path", "font.size": 9, "axes.spines.top": False,
         "axes.spines.right": False, "figure.dpi": 100}
STAGE_COLOURS = {"retrieval": "#d95f02", "generation": "#7570b3", "knowledge_gap": "#1b9e77", "over_refusal": "#e7298a"}
WIDE, HEIGHT = (8.0, 2.6), 2.6


def _svg(figure: Figure) -> str:
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None}, bbox_inches="tight")
    plt.close(figure)
    text = out.getvalue()
    return text[text.index("<svg"):]  # inline: no XML declaration or doctype


def _figure(size: tuple[float, float] = WIDE) -> tuple[Figure, Axes]:
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(figsize=size)
    return figure, axes


def _clock(axes: Axes, starts: Sequence[float], width: float) -> None:
    """Bin starts as UTC times on the x axis, a label every few bins."""
    every = max(1, len(starts) // 8)
    day = starts and starts[-1] - starts[0] >= 86400
    axes.set_xticks([s + width / 2 for s in starts[::every]],
                    [time.strftime("%m-%d %H:%M" if day else "%H:%M", time.gmtime(s)) for s in starts[::every]])
    axes.set_xlabel("UTC")


def _legend(axes: Axes) -> None:
    if axes.get_legend_handles_labels()[0]:  # an empty period draws nothing to name
        axes.legend(loc="upper left", fontsize=7, frameon=False, bbox_to_anchor=(1.0, 1.0))


def rate_over_time(title: str, starts: Sequence[float], width: float, shares: Sequence[Share], *,
                   band: tuple[float, float] | None = None, line: float | None = None,
                   releases: Sequence[tuple[float, str]] = (),
                   extra: dict[str, list[tuple[float, float, float | None, float | None]]] | None = None) -> str:
    """A share a bin with its Wilson band (the store's routine sample); `extra`: named Prometheus series
    (t, estimate, low, high) drawn over it; `band` a healthy band, `line` a threshold, `releases` where each began."""
    with plt.rc_context(STYLE):
        figure, axes = _figure()
        middles = [s + width / 2 for s, share in zip(starts, shares, strict=True) if share.interval is not None]
        found = [share.interval for share in shares if share.interval is not None]
        if found:  # the satisfaction proxy has Prometheus' line only
            axes.plot(middles, [i.estimate for i in found], marker="o", markersize=3, label="store: routine sample")
            axes.fill_between(middles, [i.low for i in found], [i.high for i in found], alpha=0.25, label="95% interval")
        for name, points in (extra or {}).items():
            axes.plot([p[0] for p in points], [p[1] for p in points], marker=".", markersize=3, label=f"Prometheus: {name}")
            bounded = [p for p in points if p[2] is not None and p[3] is not None]
            if bounded:
                axes.fill_between([p[0] for p in bounded], [p[2] for p in bounded], [p[3] for p in bounded], alpha=0.15)
        if band is not None:
            axes.axhspan(*band, color="#2ca02c", alpha=0.12, label=f"healthy band {band[0]:.0%}-{band[1]:.0%}")
        if line is not None:
            axes.axhline(line, color="#d62728", linestyle="--", linewidth=1, label=f"threshold {line:.0%}")
        for at, release in releases:
            axes.axvline(at, color="#555555", linestyle=":", linewidth=1)
            axes.annotate(f"release {release}", (at, 1), xycoords=("data", "axes fraction"), fontsize=8,
                          xytext=(3, -10), textcoords="offset points")
        axes.set_ylim(bottom=0)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
        axes.set_title(title, loc="left")
        _clock(axes, starts, width)
        if not found and not extra:
            axes.text(0.5, 0.5, "not reported: no judgments in the period", transform=axes.transAxes, ha="center",
                      color="#888888")
        _legend(axes)
        return _svg(figure)


def stages_over_time(starts: Sequence[float], width: float, stages: dict[str, list[int]]) -> str:
    with plt.rc_context(STYLE):
        figure, axes = _figure()
        bottom = [0] * len(starts)
        for stage in STAGES:
            counts = stages[stage]
            axes.bar([s + width / 2 for s in starts], counts, width=width * 0.9, bottom=bottom, label=stage.replace("_", " "),
                     color=STAGE_COLOURS[stage])
            bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        axes.set_title("Bad cases by failed stage", loc="left")
        axes.set_ylabel("bad cases")
        _clock(axes, starts, width)
        axes.legend(loc="upper left", fontsize=7, frameon=False, bbox_to_anchor=(1.0, 1.0))
        return _svg(figure)


def by_rank(shares: dict[str, Share]) -> str:
    """Context utilisation by the chunk's rank, each with its interval."""
    with plt.rc_context(STYLE):
        figure, axes = _figure((5.0, HEIGHT))
        ranks = [r for r, share in shares.items() if share.interval is not None]
        found = [shares[r].interval for r in ranks]
        axes.bar(ranks, [i.estimate for i in found], color="#1f77b4",
                 yerr=[[i.estimate - i.low for i in found], [i.high - i.estimate for i in found]], capsize=3)
        axes.set_title("Context utilisation by rank (used / retrieved)", loc="left")
        axes.set_xlabel("rank of the chunk")
        axes.set_ylim(0, 1)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
        return _svg(figure)


def agreement(groups: Sequence[dict[str, Any]], threshold: float) -> str:
    """Each judge's agreement with the human reviews, against the calibration threshold."""
    with plt.rc_context(STYLE):
        figure, axes = _figure((5.0, HEIGHT))
        reviewed = [g for g in groups if g["reviews"]]
        names = [f"{g['judge']}\n{g['judge_model']}" for g in reviewed]
        axes.bar(names, [g["agreement"] for g in reviewed], color="#9467bd")
        for position, group in enumerate(reviewed):
            axes.annotate(f"{group['reviews']} reviews", (position, group["agreement"]), ha="center", fontsize=7,
                          xytext=(0, 3), textcoords="offset points")
        axes.axhline(threshold, color="#d62728", linestyle="--", linewidth=1, label=f"threshold {threshold:.0%}")
        axes.set_ylim(0, 1.1)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
        axes.set_title("Judge agreement with human reviews", loc="left")
        axes.legend(fontsize=7, frameon=False)
        return _svg(figure)


def release_changes(comparison: dict[str, Any]) -> str:
    """Each indicator's change after the release with its interval, coloured by the verdict."""
    colours = {"worse": "#d62728", "better": "#2ca02c", "changed": "#ff7f0e"}
    with plt.rc_context(STYLE):
        figure, axes = _figure((6.0, HEIGHT))
        rows = [row for row in comparison["indicators"] if row["change"] is not None]
        for position, row in enumerate(rows):
            colour = colours.get(row["verdict"], "#7f7f7f")
            axes.errorbar(row["change"], position, xerr=[[row["change"] - row["change_low"]], [row["change_high"] - row["change"]]],
                          fmt="o", color=colour, capsize=3)
            axes.annotate(row["verdict"].replace("_", " "), (row["change_high"], position), fontsize=7, color=colour,
                          xytext=(4, -3), textcoords="offset points")
        axes.set_yticks(range(len(rows)), [row["indicator"].replace("_", " ") for row in rows])
        axes.axvline(0, color="#555555", linewidth=0.8)
        axes.xaxis.set_major_formatter(PercentFormatter(1.0))
        axes.set_title(f"Release {comparison['after']} against {comparison['before']}: change, 95% interval", loc="left")
        return _svg(figure)


def probe_trend(runs: Sequence[dict[str, Any]]) -> str:
    """The golden-set probes' hit rate, MRR and fallback accuracy, run after run (oldest first)."""
    with plt.rc_context(STYLE):
        figure, axes = _figure()
        ordered = sorted(runs, key=lambda run: run["started_at"])
        for metric in ("hit_rate", "mrr", "fallback_accuracy"):
            points = [(run["started_at"], run["summary"]["overall"].get(metric)) for run in ordered]
            points = [(t, v) for t, v in points if v is not None]
            if points:
                axes.plot([t for t, _ in points], [v for _, v in points], marker="o", markersize=3,
                          label=metric.replace("_", " "))
        axes.set_ylim(0, 1.05)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
        axes.set_title("Golden-set probes, run after run", loc="left")
        _clock(axes, [run["started_at"] for run in ordered], 0.0)
        _legend(axes)
        return _svg(figure)


def signal_shares(signals: dict[tuple[str, str], list[tuple[float, float]]], starts: Sequence[float], width: float,
                  shift: float) -> str:
    """Each satisfaction signal's share of all signals over time (Prometheus' recorded counts), drawn at the middle
    of the window each point covers (`shift` back)."""
    with plt.rc_context(STYLE):
        figure, axes = _figure()
        for (app, signal), points in sorted(signals.items()):
            axes.plot([t - shift for t, _ in points], [v for _, v in points], marker=".", markersize=3,
                      label=f"{signal.replace('_', ' ')} ({app})")
        axes.set_yscale("log", nonpositive="mask")  # silent accepts are most signals; an escalation's share is a few percent
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
        axes.set_title("Satisfaction signals: each one's share of all signals (Prometheus)", loc="left")
        _clock(axes, starts, width)
        _legend(axes)
        return _svg(figure)
