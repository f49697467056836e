"""The report as one HTML file: inline CSS and inline SVG plots, no script, nothing fetched, so it opens offline
and can be mailed or attached. Each figure the page states carries `data-figure` (the indicator) and
`data-value` (the exact number), so a test reads the page's figures back and holds them against the store."""

from __future__ import annotations

import time
from html import escape
from typing import Any

from ragpulse.report import plots, prometheus
from ragpulse.report.store import INDICATORS, Share, StoreFigures

CSS = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
h1 { font-size: 22px; margin-bottom: 2px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.meta { color: #666; font-size: 13px; } .summary { background: #f6f8fa; border-left: 4px solid #0969da; padding: 8px 14px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; } td, th { border: 1px solid #ddd; padding: 3px 8px; }
th { background: #f6f8fa; text-align: left; } .plot svg { max-width: 100%; height: auto; }
.worse { color: #c62828; font-weight: 600; } .better { color: #2e7d32; font-weight: 600; }
.case { border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px; margin: 10px 0; font-size: 13px; }
.case pre { white-space: pre-wrap; background: #fafafa; padding: 6px; margin: 4px 0; }
.none { color: #888; font-style: italic; }
"""
NOT_REPORTED = '<span class="none">not reported</span>'
NAMES = {"hallucination": "hallucination rate", "fallback": "fallback rate", "citation_precision": "citation precision",
         "context_utilisation": "context utilisation"}


def _utc(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def _figure(name: str, share: Share) -> str:
    interval = share.interval
    if interval is None:
        return f"<td>{NOT_REPORTED}</td><td></td><td>0</td>"
    return (f'<td data-figure="{name}" data-value="{interval.estimate!r}">{100 * interval.estimate:.1f}%</td>'
            f'<td data-figure="{name}.interval" data-value="{interval.low!r} {interval.high!r}">'
            f"{100 * interval.low:.1f}% – {100 * interval.high:.1f}%</td>"
            f'<td data-figure="{name}.n" data-value="{share.n}">{share.successes} of {share.n}</td>')


def _plot(name: str, svg: str) -> str:
    return f'<div class="plot" data-plot="{name}">{svg}</div>'


def render(report: dict[str, Any]) -> str:
    figures: StoreFigures = report["figures"]
    scope = " · ".join(f"{k} {escape(v)}" for k, v in (("app", report["app"]), ("route", report["route"])) if v)
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>ragpulse report {_utc(report['since'])} – {_utc(report['until'])}</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>RAG quality report</h1>",
        f'<p class="meta">{_utc(report["since"])} – {_utc(report["until"])}{" · " + scope if scope else ""} · '
        f"generated {_utc(report['generated_at'])} by ragpulse from its result store"
        f"{' and Prometheus' if report['prometheus'] else ''}</p>",
        '<div class="summary" id="summary"><ul>',
        *(f"<li>{escape(line)}</li>" for line in report["summary"]), "</ul></div>",
        *_indicators(figures, report),
        *_over_time(figures, report),
        *_comparison(report["comparison"]),
        *_judges(figures, report),
        *_probes(report["probes"]),
        *_cases(report["cases"]),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _indicators(figures: StoreFigures, report: dict[str, Any]) -> list[str]:
    rows = "".join(f"<tr><th>{NAMES[name]}</th>{_figure(name, figures.overall[name])}</tr>" for name in INDICATORS)
    promql = report["prometheus"]
    return [
        "<h2>The period's indicators</h2>",
        "<p>The routine sample's rates (a simple random sample of the traffic) with their 95% Wilson intervals, from "
        "the result store. The stratified estimate and the satisfaction proxy come from the sidecar's counters: "
        + ("read from Prometheus' recording rules, their value at the period's end.</p>" if promql else
           "not reported without <code>--prometheus</code>.</p>"),
        f"<table><tr><th>indicator</th><th>rate</th><th>95% interval</th><th>of</th></tr>{rows}"
        f"{_recorded(promql) if promql else ''}</table>",
        *_scopes(figures),
    ]


def _scopes(figures: StoreFigures) -> list[str]:
    """Each app and route's indicators (the busiest MAX_SCOPES), to see where a change is."""
    if len(figures.by_scope) < 2:
        return []
    head = "".join(f"<th>{NAMES[name]}</th>" for name in INDICATORS)
    rows = []
    for (app, route), shares in figures.by_scope.items():
        cells = "".join(f"<td>{_short(shares[name])}</td>" for name in INDICATORS)
        rows.append(f'<tr data-scope="{escape(app or "")}/{escape(route or "")}"><th>{escape(app or "not reported")}'
                    f"</th><th>{escape(route or 'not reported')}</th>{cells}</tr>")
    more = figures.scopes - len(figures.by_scope)
    return ["<p>By app and route (rate, 95% interval, count), the busiest first"
            + (f"; {more} more not shown (<code>--app</code>, <code>--route</code>)" if more else "") + ":</p>",
            f"<table><tr><th>app</th><th>route</th>{head}</tr>{''.join(rows)}</table>"]


def _short(share: Share) -> str:
    interval = share.interval
    if interval is None:
        return NOT_REPORTED
    return f"{100 * interval.estimate:.1f}% [{100 * interval.low:.1f}–{100 * interval.high:.1f}] of {share.n}"


def _recorded(promql: dict[str, Any]) -> str:
    """Each app's recorded series at the period's end (data-figure prometheus.<series>.<app>)."""
    rows = []
    for name, by_app in promql["at_end"].items():
        window = promql["fallback_window" if name == "fallback" else "window"]
        for app, (value, low, high) in sorted(by_app.items()):
            bounds = "" if low is None or high is None else f"{100 * low:.1f}% – {100 * high:.1f}%"
            rows.append(f"<tr><th>{escape(name.replace('_', ' '))} ({escape(app)}, Prometheus {window})</th>"
                        f'<td data-figure="prometheus.{name}.{escape(app)}" data-value="{value!r}">{100 * value:.1f}%</td>'
                        f"<td>{bounds}</td><td></td></tr>")
    return "".join(rows)


def _over_time(figures: StoreFigures, report: dict[str, Any]) -> list[str]:
    promql, limits = report["prometheus"], report["thresholds"]
    starts, width, releases = figures.bins, figures.bin_seconds, report["release_starts"]

    def extra(*names: str) -> dict[str, Any]:
        """Prometheus' series, each point drawn at the middle of the window it covers (a rule's value at t is over
        the window before t), as the store's bins are drawn at theirs."""
        if promql is None:
            return {}
        found = {}
        for name in names:
            window = promql["fallback_window" if name == "fallback" else "window"]
            shift = prometheus.seconds(window) / 2
            for app, points in promql[name].items():
                found[f"{name} ({app or 'all'}, {window})"] = [(t - shift, *rest) for t, *rest in points]
        return found

    def over_time(name: str, title: str, **options: Any) -> str:
        return _plot(name, plots.rate_over_time(title, starts, width, figures.series.get(name, empty), **options))

    empty = [Share(0, 0)] * len(starts)  # an indicator the store does not hold: Prometheus' line only
    judges = ", ".join(f"{j['judge']} ({j['judge_model']}, {j['prompt_version']})" for j in figures.judges) or "none"
    out = ["<h2>Over time</h2>",
           f"<p>Judged by: {escape(judges)}. Calibration: {escape(_standing(figures))}</p>",
           over_time("hallucination", "Hallucination rate (routine sample), 95% interval", line=limits.hallucination,
                     releases=releases, extra=extra("hallucination_routine", "hallucination_stratified")),
           over_time("fallback", "Fallback rate against its healthy band", band=limits.fallback_band, releases=releases,
                     extra=extra("fallback")),
           over_time("citation_precision", "Citation precision (supported among judged cited sentences)",
                     releases=releases, extra=extra("citation_precision")),
           _plot("context_utilisation_by_rank", plots.by_rank(figures.by_rank)),
           _plot("stages", plots.stages_over_time(starts, width, figures.stages))]
    if promql is not None and promql["satisfaction"]:
        out.append(over_time("satisfaction", "Satisfaction proxy (Prometheus)", extra=extra("satisfaction")))
        if promql["signals"]:
            shift = prometheus.seconds(promql["window"]) / 2
            out.append(_plot("satisfaction_signals", plots.signal_shares(promql["signals"], starts, width, shift)))
    else:
        out.append(f"<p>Satisfaction proxy and its signals: {NOT_REPORTED} (the store keeps signals on bad cases "
                   "only; give <code>--prometheus</code>).</p>")
    return out


def _standing(figures: StoreFigures) -> str:
    if not figures.calibration:
        return "no human reviews in the period: every judge uncalibrated."
    return "; ".join(f"{g['judge']} ({g['judge_model']}): {g['reviews']} reviews, agreement "
                     + ("n/a" if g["agreement"] is None else f"{100 * g['agreement']:.0f}%")
                     + {None: " (too few reviews to judge it)", True: " BELOW threshold", False: " above threshold"}[g["below_threshold"]]
                     for g in figures.calibration) + "."


def _comparison(comparison: dict[str, Any] | None) -> list[str]:
    if comparison is None:
        return ["<h2>Release comparison</h2>", f"<p>{NOT_REPORTED}: fewer than two releases in the period.</p>"]
    rows = []
    for row in comparison["indicators"]:
        before, after = row["before"], row["after"]
        change = (NOT_REPORTED if row["change"] is None else
                  f"{100 * row['change']:+.1f} pts [{100 * row['change_low']:+.1f}, {100 * row['change_high']:+.1f}]")
        z = "" if row["z"] is None else f"{row['z']:.2f}"
        rows.append(f'<tr data-indicator="{row["indicator"]}" data-verdict="{row["verdict"]}"><th>{NAMES[row["indicator"]]}</th>'
                    f"<td>{_rate(before)}</td><td>{_rate(after)}</td><td>{change}</td>"
                    f"<td>{z}</td>"
                    f'<td class="{row["verdict"]}">{row["verdict"].replace("_", " ")}</td></tr>')
    return ["<h2>Release comparison</h2>",
            f"<p>Release <b>{escape(comparison['after'])}</b> against <b>{escape(comparison['before'])}</b>: each change "
            "with its 95% interval (Newcombe), significant as the drift alerts judge it (two-proportion z and a "
            "minimum change).</p>",
            _plot("release_comparison", plots.release_changes(comparison)),
            "<table><tr><th>indicator</th><th>before</th><th>after</th><th>change</th><th>z</th><th>verdict</th></tr>",
            *rows, "</table>"]


def _rate(share: dict[str, Any]) -> str:
    return NOT_REPORTED if share["rate"] is None else f"{100 * share['rate']:.1f}% of {share['n']}"


def _judges(figures: StoreFigures, report: dict[str, Any]) -> list[str]:
    out = ["<h2>Judge agreement with human reviews</h2>"]
    if not any(g["reviews"] for g in figures.calibration):
        return [*out, f"<p>{NOT_REPORTED}: no human reviews in the period (<code>ragpulse review</code>).</p>"]
    return [*out, _plot("judge_agreement", plots.agreement(figures.calibration, report["calibration_threshold"]))]


def _probes(runs: list[dict[str, Any]]) -> list[str]:
    out = ["<h2>Golden-set probes</h2>"]
    if not runs:
        return [*out, f"<p>{NOT_REPORTED}: no probe runs (<code>ragpulse probe run</code>, probes.schedules).</p>"]
    latest = runs[0]["summary"]["overall"]

    def cell(metric: str) -> str:
        value = latest.get(metric)
        shown = (NOT_REPORTED if value is None else f"{value:.2f}/5" if metric == "correctness" else
                 f"{value:.2f}" if metric == "mrr" else f"{100 * value:.1f}%")
        return f'<td data-figure="probes.{metric}" data-value="{value!r}">{shown}</td>'

    cells = "".join(cell(m) for m in ("hit_rate", "mrr", "correctness", "fallback_accuracy"))
    return [*out, f"<p>Latest run {escape(runs[0]['run_id'])} of {escape(runs[0]['golden_set'])} at {_utc(runs[0]['started_at'])}, "
            f"{latest['questions']} questions:</p>",
            f"<table><tr><th>hit rate</th><th>MRR</th><th>correctness</th><th>fallback accuracy</th></tr><tr>{cells}</tr></table>",
            _plot("probes", plots.probe_trend(runs))]


def _cases(cases: list[dict[str, Any]]) -> list[str]:
    out = ["<h2>Weekly review: the worst cases</h2>",
           "<p>Chosen to cover the stages, the worst of each first. Record the human verdict as each case says: "
           "<code>ragpulse review</code> for the audit queue, else a review feedback event.</p>"]
    if not cases:
        return [*out, "<p>No bad cases in the period.</p>"]
    for case in cases:
        chunks = "".join(f"<li>[{i}] relevance {c['relevance'] if c['relevance'] is not None else 'not reported'}/3: "
                         f"{escape((c['text'] or '')[:400])}</li>" for i, c in enumerate(case["chunks"], start=1))
        human = case["human"]
        out.append(
            f'<div class="case" data-stage="{case["stage"]}" data-trace="{escape(case["trace_id"])}">'
            f"<b>{case['stage'].replace('_', ' ')}</b> · trace <code>{escape(case['trace_id'])}</code> · "
            f"{escape(case['app'] or 'not reported')}/{escape(case['route'] or 'not reported')} · release "
            f"{escape(case['release'] or 'not reported')} · {_utc(case['judged_at'])}"
            f"<div>question:</div><pre>{escape(case['question'])}</pre><div>answer:</div><pre>{escape(case['answer'])}</pre>"
            f"<div>chunks:</div><ol>{chunks or '<li>none retrieved</li>'}</ol>"
            f"<div>judge {escape(case['judge'])}: groundedness {case['groundedness'] or 'n/a'}/5, relevancy "
            f"{case['answer_relevancy'] or 'n/a'}/5 — {escape(case['reason'])}</div>"
            f"<div>user signals: {escape(', '.join(case['signals']) or 'none')}</div>"
            + (f"<div>human review: {escape(str(human))}</div>" if human else
               f"<div>record the verdict: <code>{escape(case['record_verdict'])}</code></div>")
            + "</div>")
    return out
