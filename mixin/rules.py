"""The recording rules: every sampled rate with its count and its 95% interval, computed from
counters (they add up across replicas; docs/statistics.md has the formulas).

Rules are named level:metric:operations. Per app, for each window:
- the routine sample's hallucination rate (a simple random sample of judgeable answers), its
  judged count and its Wilson score interval; the same for off-question answers and for retrievals
  without a relevant chunk;
- the stratified estimate Σ N_s·p̂_s / Σ N_s over the strata (app, route, stratum) that have
  judgments, with its normal interval from Σ w_s²·p̃_s(1−p̃_s)/(n_s + z²) (Agresti–Coull p̃_s);
- the judge's agreement with human reviews (confusion counts, agreement, sensitivity,
  specificity, Cohen's kappa) per judge, judge model and prompt version, over long windows:
  reviews come by the tens a week.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from ragpulse.feedback.satisfaction import POSITIVE
from ragpulse.judging import JUDGED_VERDICTS
from ragpulse.mixin.alerts import alert_groups, drift_groups
from ragpulse.mixin.runbook import runbook
from ragpulse.mixin.promql import counted
from ragpulse.mixin.settings import Settings

DEFAULTS = Settings()

Z = 1.959964
RULES_FILE = Path(__file__).resolve().parent / "ragpulse.rules.yaml"
# Where the runbook is committed, from the repository root.
RUNBOOK_FILE = Path("docs", "runbook.md")
JUDGED = f'verdict=~"{"|".join(JUDGED_VERDICTS)}"'
JUDGE = "judge, judge_model, prompt_version"
OFFERED = 'ragpulse_judge_stratum_offered_total{fallback="false"}'
STRATUM_JUDGED = f'ragpulse_judge_stratum_judgments_total{{fallback="false",{JUDGED}}}'
STRATUM_HALLUCINATED = 'ragpulse_judge_stratum_judgments_total{fallback="false",verdict="hallucination"}'
REVIEWS = "ragpulse_calibration_reviews_total"


# Every count a ratio divides is `counted(x, w)` (mixin/promql.py), never increase(x[w]) alone:
#
#   (increase(x[w]) and present_over_time(x[1h] offset w)) or (last_over_time(x[w]) unless present_over_time(x[1h] offset w))
#
# increase() takes a series' first sample in the window as its baseline, so a series born inside the window
# (a new app, route or release, a rank or verdict first reached) loses every count it was born with: a new app's
# context utilisation read 0.608 against a true 0.338. The sidecar makes a label set's series at zero when the
# label set is first seen (collector/telemetry/labels.py), but the first events of a new label set, and the
# series of a restarted sidecar, are still born with counts in them.
# - A series with a sample in the hour before the window existed when it began: increase(). Its extrapolation
#   from the first and last samples to the window's edges (all the way when a sample is within 1.1 scrape
#   intervals of the edge, else half an interval) estimates what came between; a reset inside the window (a
#   restart) adds the value after it whole, which is right since the sidecar's counters start at 0.
# - A series without one is new in the window: its last value in the window (last_over_time, so that a series
#   that went away before the window's end, a replaced pod's, still counts) is all it counted, since ragpulse's
#   counters start at 0 when made, in a new process as in a running one.
# Why not the plainer `x offset w` for "existed": one failed scrape writes staleness markers for all of a
# target's series, and `x offset w` is absent after one. A long-lived series would then count its whole
# lifetime for a window whose start fell in the gap. A range ignores staleness markers; an hour bridges failed
# scrapes and a Prometheus restart. What remains, rare and small: a series new in a window that also restarted
# inside it keeps only its count after the restart; a sidecar restarted (same instance) across a window's start
# loses the counts of its first scrape; Prometheus first scraping a long-running sidecar (or after more than an
# hour without scrapes) counts its series' whole values in the windows that begin before that first scrape.


def _rule(record: str, expr: str) -> dict[str, str]:
    return {"record": record, "expr": " ".join(expr.split())}


def wilson_rules(prefix: str, level: str, window: str, successes: str, n: str) -> list[dict[str, str]]:
    """Wilson bounds of successes/n for recorded series `successes` and `n` (n = 0: no series)."""
    z2 = Z * Z
    p = f"({successes} / ({n} > 0))"
    centre = f"(({p} + {z2 / 2!r} / {n}) / (1 + {z2!r} / {n}))"
    half = f"({Z} * sqrt({p} * (1 - {p}) / {n} + {z2 / 4!r} / ({n} ^ 2)) / (1 + {z2!r} / {n}))"
    return [
        _rule(f"{level}:{prefix}:ratio{window}", p),
        _rule(f"{level}:{prefix}:wilson_lower{window}", f"clamp_min({centre} - {half}, 0)"),
        _rule(f"{level}:{prefix}:wilson_upper{window}", f"clamp_max({centre} + {half}, 1)"),
    ]


def routine_share_rules(name: str, metric: str, bad: str, good: str, window: str,
                        recorded: str | None = None) -> list[dict[str, str]]:
    """The share of `bad` verdicts of `metric` in the routine sample, with its count (its record named for
    `recorded`, default `bad`) and Wilson interval. "or ... * 0": an app with judgments but none bad yet
    has no series of bad verdicts; its rate is 0."""
    n = f"app:ragpulse_{name}_routine_judged:increase{window}"
    s = f"app:ragpulse_{name}_routine_{recorded or bad}:increase{window}"
    selector = f'metric="{metric}",sample="routine"'
    judged = f'ragpulse_judgments_total{{{selector},verdict=~"{bad}|{good}"}}'
    judged_bad = f'ragpulse_judgments_total{{{selector},verdict="{bad}"}}'
    return [
        _rule(n, f"sum by (app) ({counted(judged, window)})"),
        _rule(s, f"sum by (app) ({counted(judged_bad, window)}) or ({n} * 0)"),
        *wilson_rules(f"ragpulse_{name}_routine", "app", window, s, n),
    ]


def stratified_rules(window: str) -> list[dict[str, str]]:
    """The stratified estimate over every judge's judgments (what the dashboards show)."""
    z2 = Z * Z
    level, keys = "app_route_stratum", "app, route, stratum"
    offered = f"{level}:ragpulse_judge_stratum_offered:increase{window}"
    judged = f"{level}:ragpulse_judge_stratum_judged:increase{window}"
    bad = f"{level}:ragpulse_judge_stratum_hallucinated:increase{window}"
    ratio = f"{level}:ragpulse_hallucination:ratio{window}"
    name = "ragpulse_hallucination_stratified"
    adjusted = f"(({bad} + {z2 / 2!r}) / ({judged} + {z2!r}))"
    return [
        _rule(offered, f"sum by ({keys}) ({counted(OFFERED, window)})"),
        _rule(judged, f"sum by ({keys}) ({counted(STRATUM_JUDGED, window)})"),
        _rule(bad, f"sum by ({keys}) ({counted(STRATUM_HALLUCINATED, window)}) or ({judged} * 0)"),
        _rule(ratio, f"{bad} / ({judged} > 0)"),
        *_estimate_rules(name, window, offered, judged, ratio, f"({adjusted} * (1 - {adjusted}) / ({judged} + {z2!r}))"),
    ]


def _estimate_rules(name: str, window: str, offered: str, judged: str, ratio: str, stratum_variance: str) -> list[dict[str, str]]:
    """Σ N_s·p̂_s / Σ N_s over the strata with judgments, its count and its normal interval from
    Σ N_s²·Var(p̂_s) / (Σ N_s)²."""
    keys = "app, route, stratum"
    weight = f"({offered} and on ({keys}) {ratio})"
    total = f"app:{name}_offered:increase{window}"
    estimate = f"app:{name}:ratio{window}"
    variance = f"app:{name}:variance{window}"
    return [
        _rule(total, f"sum by (app) {weight}"),
        _rule(f"app:{name}_judged:increase{window}", f"sum by (app) ({judged} and on ({keys}) {ratio})"),
        _rule(estimate, f"sum by (app) ({offered} * on ({keys}) {ratio}) / on (app) ({total} > 0)"),
        _rule(variance, f"sum by (app) ({weight} ^ 2 * on ({keys}) {stratum_variance}) / on (app) ({total} ^ 2)"),
        _rule(f"app:{name}:lower{window}", f"clamp_min({estimate} - {Z} * sqrt({variance}), 0)"),
        _rule(f"app:{name}:upper{window}", f"clamp_max({estimate} + {Z} * sqrt({variance}), 1)"),
    ]


def trusted_stratified_rules(window: str, calibration_window: str) -> list[dict[str, str]]:
    """The estimate the absolute-level page reads: only judgments of trusted judges (trust_rules), each judge's
    rate corrected for its errors where a calibration stands behind it (Rogan–Gladen, π = (p + Sp − 1) / J with
    J = Se + Sp − 1, its variance Var(p) / J²; Se and Sp taken as known, so the interval is a little narrow while
    reviews are few). Within a stratum each judge is a sub-stratum, weighted by its share of the judgments."""
    z2 = Z * Z
    keys, cell = "app, route, stratum", "app, route, stratum, judge"
    offered = f"app_route_stratum:ragpulse_judge_stratum_offered:increase{window}"
    judged = f"app_route_stratum_judge:ragpulse_judge_stratum_judged_trusted:increase{window}"
    bad = f"app_route_stratum_judge:ragpulse_judge_stratum_hallucinated_trusted:increase{window}"
    corrected = f"app_route_stratum_judge:ragpulse_hallucination_trusted_corrected:ratio{window}"
    stratum_judged = f"app_route_stratum:ragpulse_judge_stratum_judged_trusted:increase{window}"
    ratio = f"app_route_stratum:ragpulse_hallucination_trusted:ratio{window}"
    cell_variance = f"app_route_stratum_judge:ragpulse_hallucination_trusted_corrected:variance{window}"
    youden, specificity = (f"judge:ragpulse_calibration_{name}:ratio{calibration_window}" for name in ("youden", "specificity"))
    observed = f"({bad} / ({judged} > 0))"
    adjusted = f"(({bad} + {z2 / 2!r}) / ({judged} + {z2!r}))"
    binomial = f"({adjusted} * (1 - {adjusted}) / ({judged} + {z2!r}))"
    share = f"({judged} / on ({keys}) group_left () ({stratum_judged} > 0))"
    only = " and on (judge) judge:ragpulse_judge_trusted"
    return [
        _rule(judged, f"sum by ({cell}) ({counted(STRATUM_JUDGED, window)}){only}"),
        _rule(bad, f"sum by ({cell}) ({counted(STRATUM_HALLUCINATED, window)}){only} or ({judged} * 0)"),
        _rule(corrected, f"clamp((({observed} + on (judge) group_left () ({specificity} - 1)) / on (judge) group_left () {youden}), 0, 1)"
                         f" or ({observed} unless on (judge) {youden})"),
        _rule(cell_variance, f"({binomial} / on (judge) group_left () ({youden} ^ 2)) or ({binomial} unless on (judge) {youden})"),
        _rule(stratum_judged, f"sum by ({keys}) ({judged})"),
        _rule(ratio, f"sum by ({keys}) ({share} * {corrected})"),
        *_estimate_rules("ragpulse_hallucination_trusted_stratified", window, offered, stratum_judged, ratio,
                         f"sum by ({keys}) ({share} ^ 2 * {cell_variance})"),
    ]


def trust_rules(window: str) -> list[dict[str, str]]:
    """Which judges the absolute-level page relies on, and the correction it applies: a judge whose human reviews
    over `window` reach calibration.min_reviews is calibrated; its sensitivity, specificity and Youden's J = Se + Sp
    − 1 (present only where J > 0: a judge no better than chance corrects nothing) come from those reviews. An LLM
    judge, or a calibrated judge with J > 0, is trusted. An uncalibrated local judge pages on drift only: its bias
    cancels in a two-window comparison, not against a fixed line."""
    calibrated = "judge:ragpulse_judge_calibrated"
    youden = f"judge:ragpulse_calibration_youden:ratio{window}"

    def cells(judge: str, human: str) -> str:
        reviews = f'{REVIEWS}{{judge_verdict="{judge}",human_verdict="{human}"}}'
        return f"(sum by (judge) ({counted(reviews, window)}) or (max by (judge) ({REVIEWS}) * 0))"

    both, judge_only, human_only, neither = (cells("hallucination", "hallucination"), cells("hallucination", "grounded"),
                                             cells("grounded", "hallucination"), cells("grounded", "grounded"))
    sensitivity = f"judge:ragpulse_calibration_sensitivity:ratio{window}"
    specificity = f"judge:ragpulse_calibration_specificity:ratio{window}"
    return [
        # 1 or 0 for every judge that judged (a judge without any review is 0, not absent).
        _rule(calibrated, f"(sum by (judge) ({counted(REVIEWS, window)})"
                          " >= bool on () group_left () max(ragpulse_calibration_min_reviews))"
                          " or max by (judge) (ragpulse_judge_stratum_judgments_total) * 0"),
        _rule(sensitivity, f"{both} / (({both} + {human_only}) > 0)"),
        _rule(specificity, f"{neither} / (({neither} + {judge_only}) > 0)"),
        _rule(youden, f"({sensitivity} + {specificity} - 1 > 0) and on (judge) ({calibrated} == 1)"),
        # Present only for a trusted judge: the trusted estimate keeps the judgments of the judges it lists.
        _rule("judge:ragpulse_judge_trusted",
              f'({calibrated} == 1 and on (judge) {youden})'
              f' or (max by (judge) (ragpulse_judge_stratum_judgments_total{{judge="llm"}}) * 0 + 1)'),
    ]


def calibration_rules(window: str) -> list[dict[str, str]]:
    level = "judge_model"

    def cell(name: str, judge: str, human: str) -> dict[str, str]:
        reviews = f'{REVIEWS}{{judge_verdict="{judge}",human_verdict="{human}"}}'
        return _rule(f"{level}:ragpulse_calibration_{name}:increase{window}", f"sum by ({JUDGE}) ({counted(reviews, window)})")

    a, b, c, d = (f"{level}:ragpulse_calibration_{name}:increase{window}"
                  for name in ("both_hallucination", "judge_only", "human_only", "neither"))
    reviews = f"{level}:ragpulse_calibration_reviews:increase{window}"
    # A cell without reviews has no series: count it as 0 against the total, which always exists.
    cells = {name: f"({series} or ({reviews} * 0))" for name, series in zip("abcd", (a, b, c, d), strict=True)}
    agreement = f"{level}:ragpulse_calibration_agreement:ratio{window}"
    chance = (f"(({cells['a']} + {cells['b']}) * ({cells['a']} + {cells['c']}) + ({cells['c']} + {cells['d']}) * "
              f"({cells['b']} + {cells['d']})) / ({reviews} ^ 2)")
    return [
        cell("both_hallucination", "hallucination", "hallucination"),
        cell("judge_only", "hallucination", "grounded"),
        cell("human_only", "grounded", "hallucination"),
        cell("neither", "grounded", "grounded"),
        _rule(reviews, f"sum by ({JUDGE}) ({counted(REVIEWS, window)})"),
        _rule(agreement, f"({cells['a']} + {cells['d']}) / ({reviews} > 0)"),
        _rule(f"{level}:ragpulse_calibration_sensitivity:ratio{window}", f"{cells['a']} / (({cells['a']} + {cells['c']}) > 0)"),
        _rule(f"{level}:ragpulse_calibration_specificity:ratio{window}", f"{cells['d']} / (({cells['b']} + {cells['d']}) > 0)"),
        _rule(f"{level}:ragpulse_calibration_kappa:ratio{window}",
              f"({agreement} - {chance}) / ((1 - {chance}) > 0)"),
    ]


def operations_rules(window: str) -> list[dict[str, str]]:
    """The judge's side: mean scores, coverage, error rate and cost (labels the judge metrics carry)."""
    def mean(metric: str) -> str:
        selector = f'sample="routine",metric="{metric}"'
        return (f"sum by (judge) ({counted(f'ragpulse_judge_score_sum{{{selector}}}', window)}) / (sum by (judge) "
                f"({counted(f'ragpulse_judge_score_count{{{selector}}}', window)}) > 0)")

    requests = f"sum by (judge_model) ({counted('ragpulse_judge_requests_total', window)})"
    failed = counted('ragpulse_judge_requests_total{outcome!="ok"}', window)
    return [
        _rule(f"judge:ragpulse_judge_groundedness_routine:mean{window}", mean("groundedness")),
        _rule(f"judge:ragpulse_judge_answer_relevancy_routine:mean{window}", mean("answer_relevancy")),
        _rule(f"all:ragpulse_judge_coverage:ratio{window}",
              f"sum({counted('ragpulse_judge_judged_total', window)}) / (sum({counted('ragpulse_traces_total', window)}) > 0)"),
        _rule(f"judge_model:ragpulse_judge_errors:ratio{window}",
              f"(sum by (judge_model) ({failed}) or {requests} * 0)"
              f" / ({requests} > 0)"),
        _rule(f"judge_model:ragpulse_judge_cost_per_hour:rate{window}",
              f"sum by (judge_model) (rate(ragpulse_judge_cost_total[{window}])) * 3600"),
    ]


def satisfaction_rules(window: str) -> list[dict[str, str]]:
    """The satisfaction proxy per app: positive signals among all (docs/satisfaction.md), and each signal's count.
    Recorded beside its parts, which stay counters: the dashboard shows both."""
    signals = "ragpulse_satisfaction_signals_total"
    positives = f'{signals}{{signal=~"{"|".join(POSITIVE)}"}}'
    return [
        _rule(f"app:ragpulse_satisfaction_signals:increase{window}", f"sum by (app) ({counted(signals, window)})"),
        # Each signal's count, for its share of the signals (the report's "satisfaction proxy and its signals").
        _rule(f"app_signal:ragpulse_satisfaction_signals:increase{window}",
              f"sum by (app, signal) ({counted(signals, window)})"),
        _rule(f"app:ragpulse_satisfaction_proxy:ratio{window}",
              f"sum by (app) ({counted(positives, window)}) "
              f"/ (sum by (app) ({counted(signals, window)}) > 0)"),
    ]


def context_rules(window: str) -> list[dict[str, str]]:
    """Context utilisation (chunks the judged answers used among those retrieved, and by characters) and
    citation precision (supported among the cited sentences judged either way) per app (docs/judging.md, Citations and
    context utilisation); and, per app and rank, the share of retrieved chunks used."""
    retrieved, used = "ragpulse_context_chunks_retrieved_total", "ragpulse_context_chunks_used_total"
    chars, verdicts = "ragpulse_context_chars_total", "ragpulse_citation_verdicts_total"
    used, retrieved = counted(used, window), counted(retrieved, window)
    used_chars, retrieved_chars = (counted(f'{chars}{{kind="{kind}"}}', window) for kind in ("used", "retrieved"))
    judged = counted(f'{verdicts}{{verdict=~"supported|unsupported"}}', window)
    supported = counted(f'{verdicts}{{verdict="supported"}}', window)
    return [
        _rule(f"app:ragpulse_context_utilisation:ratio{window}", f"sum by (app) ({used}) / (sum by (app) ({retrieved}) > 0)"),
        _rule(f"app:ragpulse_context_utilisation_chars:ratio{window}",
              f"sum by (app) ({used_chars}) / (sum by (app) ({retrieved_chars}) > 0)"),
        _rule(f"app_rank:ragpulse_context_utilisation:ratio{window}",
              f"sum by (app, rank) ({used}) / (sum by (app, rank) ({retrieved}) > 0)"),
        _rule(f"app:ragpulse_citation_judged:increase{window}", f"sum by (app) ({judged})"),
        _rule(f"app:ragpulse_citation_precision:ratio{window}",
              f"sum by (app) ({supported}) / (app:ragpulse_citation_judged:increase{window} > 0)"),
    ]


def rules(settings: Settings = DEFAULTS) -> dict[str, Any]:
    """Every rule group: the sampled rates with their intervals, calibration, the drift signals, the alerts."""
    groups: list[dict[str, Any]] = [
        {"name": f"ragpulse-hallucination-{window}", "interval": settings.interval,
         "rules": [*routine_share_rules("hallucination", "groundedness", "hallucination", "grounded|uncertain", window,
                                         "hallucinated"),
                   *stratified_rules(window),
                   *trusted_stratified_rules(window, settings.calibration_windows[-1]),
                   *routine_share_rules("irrelevant_answer", "answer_relevancy", "irrelevant", "relevant", window),
                   *routine_share_rules("irrelevant_context", "context_relevance", "irrelevant", "relevant", window),
                   *operations_rules(window),
                   *satisfaction_rules(window),
                   *context_rules(window)]}
        for window in settings.rate_windows
    ]
    groups += [{"name": f"ragpulse-calibration-{window}", "interval": settings.interval, "rules": calibration_rules(window)}
               for window in settings.calibration_windows]
    groups.append({"name": "ragpulse-trust", "interval": settings.interval,
                   "rules": trust_rules(settings.calibration_windows[-1])})
    groups += drift_groups(settings)
    groups += alert_groups(settings)
    return {"groups": groups}


def render(settings: Settings = DEFAULTS) -> str:
    header = "# Generated by `python -m ragpulse.mixin` from mixin/rules.py and mixin/alerts.py: edit those, not this file.\n"
    return header + yaml.safe_dump(rules(settings), sort_keys=False, width=1000, allow_unicode=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragpulse.mixin", description="Write the rules file and the runbook.")
    parser.add_argument("--settings", help="a YAML file of mixin settings (mixin/settings.py); default: the defaults")
    parser.add_argument("--out", help="a directory for ragpulse.rules.yaml, runbook.md, the dashboards and the chart's "
                        "files (default: their places in the ragpulse checkout that is the current directory)")
    parser.add_argument("--rules-only", action="store_true", help="only the rules file (no grafana-foundation-sdk needed)")
    args = parser.parse_args(argv)
    settings = Settings.load(args.settings) if args.settings else DEFAULTS
    out = Path(args.out) if args.out else None
    if out is None and not Path("mixin", "rules.py").is_file():
        # The committed files live in the source tree, not in an installed package: write there only from a checkout.
        print("run from the root of a ragpulse checkout, or pass --out DIR", file=sys.stderr)
        return 2
    rules_file = out / RULES_FILE.name if out else Path("mixin", RULES_FILE.name)
    if args.rules_only:
        rules_file.write_text(render(settings), encoding="utf-8")
        print(f"wrote {rules_file}", file=sys.stderr)
        return 0
    try:
        from ragpulse.mixin import dashboards, helm
    except ImportError:
        print("the dashboards need grafana-foundation-sdk: pip install 'ragpulse[mixin]'", file=sys.stderr)
        return 2
    runbook_file = out / RUNBOOK_FILE.name if out else RUNBOOK_FILE
    dashboards_dir = out / "dashboards" if out else dashboards.DASHBOARDS_DIR
    dashboards_dir.mkdir(parents=True, exist_ok=True)
    rules_file.write_text(render(settings), encoding="utf-8")
    runbook_file.write_text(runbook(settings), encoding="utf-8")
    rendered = dashboards.render(settings)
    for name, text in rendered.items():
        (dashboards_dir / name).write_text(text, encoding="utf-8")
    chart_dir = out / "helm" if out else helm.CHART_DIR
    for name, text in helm.render(render(settings), rendered).items():
        (chart_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (chart_dir / name).write_text(text, encoding="utf-8")
    print(f"wrote {rules_file}, {runbook_file}, the dashboards in {dashboards_dir} and the chart's files in {chart_dir}",
          file=sys.stderr)
    return 0
