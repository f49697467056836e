"""The Grafana dashboards, built with Grafana's dashboards-as-code SDK (grafana-foundation-sdk) from the
same source as the rules: every sampled rate is read from its recording rule with its interval.

- overview: traffic, failed runs, fallback rate with its healthy band, hallucination rate with its 95% interval as a
  band, judge scores, the satisfaction proxy beside its signals and the joined views, bad cases by stage, the routes that fail most, releases;
- judge: coverage by priority, queue, latency, tokens, cost, errors, breaker, budgets, calibration;
- ingestion: sources, invalid, refused, dropped and duplicate events, Kafka lag, OTLP assembly, agents' tool results.

Every panel has a title, a description and a unit; a panel only an optional component fills (the Kafka
source, an LLM judge, human reviews, scheduled probes) says in its description what fills it, so an empty one
explains itself. Counters are aggregated before they are divided, and a ratio counts a series born inside
its window whole, as the rules do (mixin/promql.py); rates use $__rate_interval. tests/test_dashboards.py checks these on the generated JSON, and that every
metric and recorded series a query names exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from grafana_foundation_sdk.builders import bargauge, dashboard, prometheus, stat, timeseries
from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models.dashboard import (
    DataSourceRef,
    DynamicConfigValue,
    Threshold,
    ThresholdsMode,
    VariableRefresh,
    VariableSort,
)

from ragpulse.mixin.promql import counted
from ragpulse.mixin.settings import Settings

# Where the dashboards are committed, from the repository root (the generating command writes there).
DASHBOARDS_DIR = Path("grafana", "dashboards")
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
LABELS = ("app", "route", "model", "release")
SELECTOR = ",".join(f'{label}=~"${label}"' for label in LABELS)  # every labelled ragpulse series
APP = 'app=~"$app"'  # recorded rates are per app


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True)
class PanelSpec:
    title: str
    description: str
    unit: str
    queries: tuple[Query, ...]
    kind: str = "timeseries"  # timeseries, stat, bargauge
    width: int = 12
    stacked: bool = False
    band: tuple[float, float] | None = None  # a shaded healthy band
    red_line: float | None = None
    interval_band: bool = False  # queries "lower" and "upper" drawn as a band
    repeat_app: bool = False


# What fills the panels of an optional component, in their descriptions (docs/kafka.md, docs/probes.md).
LLM_JUDGE = "Filled by an LLM judge (judge.base_url or an API key)"
KAFKA = "Filled when the Kafka source is configured (kafka.bootstrap_servers); empty otherwise."
PROBES = ("Filled by scheduled probes (probes.schedules, with their probes.targets, inside `ragpulse run`); empty "
          "otherwise: a `ragpulse probe run` from the terminal stores its run (probes.db_path) but exports nothing.")


def _rate(metric: str, selector: str = SELECTOR, by: str = "app") -> str:
    return f"sum by ({by}) (rate({metric}{{{selector}}}[$__rate_interval]))"


def _count(series: str, by: str = "app", window: str = "$__rate_interval") -> str:
    """What `series` counted over the window, summed `by` ("" for all): a ratio's part, born series whole."""
    return f"sum{f' by ({by})' if by else ''} ({counted(series, window)})"


def _share(part: str, whole: str, by: str = "app", window: str = "$__rate_interval") -> str:
    return f"{_count(part, by, window)} / {_count(whole, by, window)}"


def overview(settings: Settings) -> list[PanelSpec]:
    w = settings.hallucination_window
    low, high = settings.fallback_band
    return [
        PanelSpec("Traffic", "Trace events processed per second, by app.", "reqps",
                  (Query(_rate("ragpulse_traces_total"), "{{app}}"),)),
        PanelSpec("Failed runs", "Share of the runs that ended in an error with no answer (a provider's 500, a "
                  f"timeout): counted, never judged; RagpulseFailedRunsHigh warns over {settings.failed_ratio:.0%}.",
                  "percentunit",
                  (Query(_share(f"ragpulse_traces_failed_total{{{SELECTOR}}}", f"ragpulse_traces_total{{{SELECTOR}}}"),
                         "{{app}}"),), red_line=settings.failed_ratio),
        PanelSpec("Fallback rate", f"Share of answers that decline; the band is the healthy {low:.0%}-{high:.0%} "
                  "(mixin setting fallback_band). Every trace, not a sample.", "percentunit",
                  (Query(_share(f"ragpulse_fallbacks_total{{{SELECTOR}}}", f"ragpulse_traces_total{{{SELECTOR}}}"), "{{app}}"),),
                  band=(low, high)),
        PanelSpec("Hallucination rate, $app", f"Stratified estimate over {w} with its 95% interval (the band), and the "
                  f"routine sample's rate; the red line is {settings.hallucination_threshold:.0%}. An estimate from "
                  "the judged sample: docs/rates.md.", "percentunit",
                  (Query(f"app:ragpulse_hallucination_stratified:ratio{w}{{{APP}}}", "stratified"),
                   Query(f"app:ragpulse_hallucination_stratified:lower{w}{{{APP}}}", "lower"),
                   Query(f"app:ragpulse_hallucination_stratified:upper{w}{{{APP}}}", "upper"),
                   Query(f"app:ragpulse_hallucination_routine:ratio{w}{{{APP}}}", "routine")),
                  interval_band=True, red_line=settings.hallucination_threshold, repeat_app=True),
        PanelSpec("Judgments behind the rate", f"Judged answers in the last {w}: the stratified estimate's and the "
                  f"routine sample's (alerts need at least {settings.min_judgments}).", "short",
                  (Query(f"app:ragpulse_hallucination_stratified_judged:increase{w}{{{APP}}}", "{{app}} stratified"),
                   Query(f"app:ragpulse_hallucination_routine_judged:increase{w}{{{APP}}}", "{{app}} routine"))),
        PanelSpec("Judge scores (routine sample)", "Mean groundedness and answer relevancy (1-5) of the routine "
                  "sample's judgments.", "none",
                  tuple(Query(_share(f'ragpulse_judge_score_sum{{sample="routine",metric="{metric}"}}',
                                     f'ragpulse_judge_score_count{{sample="routine",metric="{metric}"}}', ""),
                              metric) for metric in ("groundedness", "answer_relevancy"))),
        PanelSpec("Groundedness scores (routine sample)", "How the routine sample's groundedness scores spread over "
                  "the time range (1: contradicts or invented; 5: only what the chunks say).", "short",
                  (Query('sum by (le) (increase(ragpulse_judge_score_bucket{sample="routine",metric="groundedness"}'
                         '[$__range]))', "{{le}}"),), kind="bargauge"),
        *satisfaction(settings),
        PanelSpec("Bad cases by stage (routine sample)", "Judged bad cases of the routine sample by the layer that "
                  "failed: retrieval, generation, knowledge_gap, over_refusal.", "short",
                  (Query(f'sum by (stage) (increase(ragpulse_badcases_total{{{SELECTOR},sample="routine"}}[$__rate_interval]))',
                         "{{stage}}"),), stacked=True),
        PanelSpec("Routes with the most bad cases", "The ten routes with the most judged bad cases over the time range "
                  "(every sample: where to read first).", "short",
                  (Query(f"topk(10, sum by (route) (increase(ragpulse_badcases_total{{{SELECTOR}}}[$__range])))",
                         "{{route}}"),), kind="bargauge"),
        PanelSpec("Off-question answers and irrelevant retrieval", f"Routine sample, over {w}: answers judged off the "
                  "question (fallbacks apart) and retrievals without a relevant chunk.", "percentunit",
                  (Query(f"app:ragpulse_irrelevant_answer_routine:ratio{w}{{{APP}}}", "{{app}} off-question"),
                   Query(f"app:ragpulse_irrelevant_context_routine:ratio{w}{{{APP}}}", "{{app}} irrelevant context"))),
        *context(settings),
    ]


def context(settings: Settings) -> list[PanelSpec]:
    """What the answers did with their chunks: which they used (judged answers) and whether their citations hold."""
    w = settings.hallucination_window
    used, retrieved = "ragpulse_context_chunks_used_total", "ragpulse_context_chunks_retrieved_total"
    return [
        PanelSpec("Context utilisation", f"Judged answers, over {w}: the share of retrieved chunks that support at "
                  "least one claim, and of their characters. Falling after a top-k or chunking change: the model is "
                  "handed more than it uses (docs/judging.md, Citations and context utilisation).", "percentunit",
                  (Query(f"app:ragpulse_context_utilisation:ratio{w}{{{APP}}}", "{{app}} chunks"),
                   Query(f"app:ragpulse_context_utilisation_chars:ratio{w}{{{APP}}}", "{{app}} characters"))),
        PanelSpec("Which ranks the answers use (time range)", "Of the chunks retrieved at each rank for judged "
                  "answers, the share the answer drew on: does the model use rank 1, or rank 6?", "percentunit",
                  (Query(_share(f"{used}{{{SELECTOR}}}", f"{retrieved}{{{SELECTOR}}}", "rank", "$__range"), "rank {{rank}}"),),
                  kind="bargauge"),
        PanelSpec("Citations", f"Citation precision over {w} (judged cited sentences the cited chunk supports), the "
                  "share of citations naming no retrieved chunk (dangling) and, among answers that cite, the share of "
                  "sentences that carry a citation (coverage). Empty for apps whose answers cite nothing.",
                  "percentunit",
                  (Query(f"app:ragpulse_citation_precision:ratio{w}{{{APP}}}", "{{app}} precision"),
                   Query(_share(f'ragpulse_citations_total{{{SELECTOR},outcome="dangling"}}',
                                f"ragpulse_citations_total{{{SELECTOR}}}"), "{{app}} dangling"),
                   Query(_share(f'ragpulse_citation_sentences_total{{{SELECTOR},kind="cited"}}',
                                f"ragpulse_citation_sentences_total{{{SELECTOR}}}"), "{{app}} coverage"))),
    ]


def satisfaction(settings: Settings) -> list[PanelSpec]:
    """The satisfaction proxy beside its parts, and the joined views that say whether a signal means what we
    think (docs/satisfaction.md)."""
    w = settings.hallucination_window
    signals = "ragpulse_satisfaction_signals_total"
    routine = (f'ragpulse_judgments_total{{{SELECTOR},sample="routine",metric="groundedness",'
               f'verdict=~"hallucination|grounded|uncertain"}}')
    judged_down = f'ragpulse_satisfaction_judged_signals_total{{{APP},sample="routine",signal="thumbs_down"}}'

    def complaints(fallback: str) -> str:
        return _count(f'{signals}{{{SELECTOR},fallback="{fallback}",signal=~"thumbs_down|escalation|abandon|rephrase"}}',
                      "signal")

    traces, fallbacks = _count(f"ragpulse_traces_total{{{SELECTOR}}}", ""), _count(f"ragpulse_fallbacks_total{{{SELECTOR}}}", "")

    return [
        PanelSpec("Satisfaction proxy", f"Positive signals (thumbs up, ratings 4-5, copies, citation clicks, silent "
                  f"accepts) among all signals over {w}, per app. A proxy: read it beside its parts (next panel).",
                  "percentunit", (Query(f"app:ragpulse_satisfaction_proxy:ratio{w}{{{APP}}}", "{{app}}"),)),
        PanelSpec("Satisfaction signals per answer", "Each signal per processed trace: explicit (thumbs, ratings, "
                  "escalation, copy, citation click, regenerate, abandon) and derived (rephrase, repeat, silent accept).",
                  "percentunit",
                  (Query(f"{_count(f'{signals}{{{SELECTOR}}}', 'signal')} / ignoring(signal) group_left {traces}",
                         "{{signal}}"),)),
        PanelSpec("Thumbs down: hallucinated vs grounded answers", "Thumbs down per judged answer of the routine sample, "
                  "by the judge's verdict, over the time range: a signal that means what we think is far more frequent "
                  "on hallucinated answers.", "percentunit",
                  (Query(f"({_count(judged_down, 'verdict', '$__range')} or {_count(routine, 'verdict', '$__range')} * 0)"
                         f" / {_count(routine, 'verdict', '$__range')}", "{{verdict}}"),), kind="bargauge"),
        PanelSpec("Complaints after fallbacks vs after answers", "Thumbs down, escalations, abandons and rephrases per "
                  "fallback and per answer.", "percentunit",
                  (Query(f"{complaints('true')} / scalar({fallbacks})", "after fallbacks: {{signal}}"),
                   Query(f"{complaints('false')} / scalar({traces} - {fallbacks})", "after answers: {{signal}}"))),
        PanelSpec("Signals on bad cases, by stage", "Signals on judged answers over the time range, by the bad-case stage "
                  "of their judgment (none: not a bad case), every sample.", "short",
                  (Query(f'sum by (stage, signal) (increase(ragpulse_satisfaction_judged_signals_total{{{APP},'
                         f'signal!="silent_accept"}}[$__range]))', "{{stage}} {{signal}}"),), kind="bargauge"),
    ]


def judge(settings: Settings) -> list[PanelSpec]:
    return [
        PanelSpec("Coverage by priority", "Judged traces per trace offered to each class's draw.", "percentunit",
                  (Query(_share("ragpulse_judge_judged_total", "ragpulse_judge_candidates_total", "priority"), "{{priority}}"),)),
        PanelSpec("Judged share of traffic", "Judgments per processed trace.", "percentunit",
                  (Query(_share("ragpulse_judge_judged_total", "ragpulse_traces_total", ""), "judged"),)),
        PanelSpec("Skipped, by reason", "Sampled traces not judged: queue_full, evicted, budget, circuit_open, "
                  "trace_unknown, shutdown.", "reqps",
                  (Query("sum by (reason) (rate(ragpulse_judge_skipped_total[$__rate_interval]))", "{{reason}}"),), stacked=True),
        PanelSpec("Judge queue", "Traces waiting for the judge.", "short",
                  (Query("sum by (instance) (ragpulse_judge_queue_depth)", "{{instance}}"),)),
        PanelSpec("Judge latency", f"95th percentile of an LLM judge call, retries included. {LLM_JUDGE}; the local "
                  "judge makes no calls, so it stays empty.", "s",
                  (Query("histogram_quantile(0.95, sum by (le, judge_model) "
                         "(rate(ragpulse_judge_request_duration_seconds_bucket[$__rate_interval])))", "{{judge_model}}"),)),
        PanelSpec("Tokens", f"Tokens spent by the LLM judge per second. {LLM_JUDGE}; the local judge spends none, so it "
                  "stays empty.", "short",
                  (Query("sum by (judge_model, kind) (rate(ragpulse_judge_tokens_total[$__rate_interval]))",
                         "{{judge_model}} {{kind}}"),)),
        PanelSpec("Cost per hour", f"What the LLM judge costs per hour, in the currency of judge.prices. {LLM_JUDGE}; 0 "
                  "without a price for its model in judge.prices; empty with the local judge.", "currencyUSD",
                  (Query("sum by (judge_model) (rate(ragpulse_judge_cost_total[$__rate_interval])) * 3600", "{{judge_model}}"),)),
        PanelSpec("Judge errors", f"LLM judge calls by outcome (ok or the error after retries). {LLM_JUDGE}; empty with "
                  "the local judge, which makes no calls.", "reqps",
                  (Query("sum by (outcome) (rate(ragpulse_judge_requests_total[$__rate_interval]))", "{{outcome}}"),), stacked=True),
        PanelSpec("Circuit breaker", "0 closed, 1 open, 2 half open. It guards the LLM judge's calls: with the "
                  "local judge it stays 0.", "none",
                  (Query("max by (instance) (ragpulse_judge_circuit_state)", "{{instance}}"),), kind="stat", width=6),
        PanelSpec("Budgets left", "What is left of each configured budget.", "short",
                  (Query("min by (budget) (ragpulse_judge_budget_remaining)", "{{budget}}"),), kind="stat", width=6),
        PanelSpec("Judge agreement with human reviews", "Agreement, Cohen's kappa, sensitivity and specificity of the "
                  "hallucination verdicts against the reviews of the audit sample, over 30 days. Filled when human "
                  "reviews (feedback events of kind `review`, e.g. sent by `ragpulse review`) meet judgments of the "
                  "audit sample (calibration.audit_rate); empty until then. Sensitivity needs reviews a human called "
                  "hallucinated, specificity reviews a human called grounded.", "percentunit",
                  tuple(Query(f"judge_model:ragpulse_calibration_{name}:ratio30d", f"{{{{judge_model}}}} {name}")
                        for name in ("agreement", "kappa", "sensitivity", "specificity"))),
        PanelSpec("Reviews", "Human reviews matched to audited judgments over 30 days, and reviews that met none. "
                  "Filled when human reviews arrive (feedback events of kind `review`, e.g. sent by `ragpulse review`) "
                  "and meet judgments of the audit sample (calibration.audit_rate); reviews saved with `ragpulse "
                  "review --offline` go to the store, not here.", "short",
                  (Query("judge_model:ragpulse_calibration_reviews:increase30d", "{{judge_model}}"),
                   Query("sum by (reason) (increase(ragpulse_calibration_reviews_unmatched_total[$__range]))",
                         "unmatched {{reason}} (time range)"))),
        PanelSpec("Golden-set retrieval (time range)", "Hit rate@k, MRR and nDCG@k of each golden set's labelled "
                  f"questions over the dashboard's time range. {PROBES}", "percentunit",
                  tuple(Query(_share(f"ragpulse_probe_{name}_sum", f"ragpulse_probe_{name}_count", "golden_set", "$__range"),
                              f"{{{{golden_set}}}} {title}")
                        for name, title in (("hit", "hit rate"), ("reciprocal_rank", "MRR"), ("ndcg", "nDCG"))),
                  kind="bargauge"),
        PanelSpec("Golden-set answers (time range)", "Mean answer correctness against the expected answers (1-5, by "
                  f"judge) and the probes' hallucination rate. {PROBES}", "short",
                  (Query(_share("ragpulse_probe_correctness_sum", "ragpulse_probe_correctness_count", "golden_set, judge",
                                "$__range"), "{{golden_set}} correctness ({{judge}})"),
                   Query(_share("ragpulse_probe_hallucination_sum", "ragpulse_probe_hallucination_count", "golden_set",
                                "$__range"), "{{golden_set}} hallucination rate")),
                  kind="bargauge"),
        PanelSpec("Last probe run", f"Seconds since each golden set's last scheduled probe run finished. {PROBES}", "s",
                  (Query("time() - max by (golden_set, target) (ragpulse_probe_last_run_timestamp_seconds)",
                         "{{golden_set}} / {{target}}"),), kind="stat"),
    ]


def ingestion(settings: Settings) -> list[PanelSpec]:
    return [
        PanelSpec("Events received", "Valid events accepted per second, by source and type.", "reqps",
                  (Query("sum by (source, type) (rate(ragpulse_events_received_total[$__rate_interval]))", "{{source}} {{type}}"),)),
        PanelSpec("Invalid events", "Events rejected by validation per second, by source and reason.", "reqps",
                  (Query("sum by (source, reason) (rate(ragpulse_events_invalid_total[$__rate_interval]))", "{{source}} {{reason}}"),)),
        PanelSpec("Refused, dropped and duplicate events", "Refused: the queue was full (the client resends); "
                  "dropped: accepted and lost; duplicates: caught by the dedup window.", "reqps",
                  (Query("sum by (reason) (rate(ragpulse_events_refused_total[$__rate_interval]))", "refused {{reason}}"),
                   Query("sum by (reason) (rate(ragpulse_events_dropped_total[$__rate_interval]))", "dropped {{reason}}"),
                   Query("sum by (type) (rate(ragpulse_events_duplicate_total[$__rate_interval]))", "duplicate {{type}}"))),
        PanelSpec("Pipeline queue", "Events waiting in the pipeline queue, against its capacity.", "short",
                  (Query('sum by (instance) (ragpulse_queue_depth_events{queue="pipeline"})', "{{instance}} depth"),
                   Query('sum by (instance) (ragpulse_queue_capacity_events{queue="pipeline"})', "{{instance}} capacity"))),
        PanelSpec("Kafka consumer lag", f"Messages behind the high watermark, by topic. {KAFKA}", "short",
                  (Query("sum by (topic) (ragpulse_kafka_consumer_lag_records)", "{{topic}}"),)),
        PanelSpec("Kafka dead letters and commits", "Malformed messages sent to the dead-letter topic, and offset "
                  f"commits by trigger, per second. {KAFKA}", "reqps",
                  (Query("sum by (topic) (rate(ragpulse_kafka_dead_letters_total[$__rate_interval]))", "dead letters {{topic}}"),
                   Query("sum by (trigger) (rate(ragpulse_kafka_commits_total[$__rate_interval]))", "commits {{trigger}}"))),
        PanelSpec("Partial token usage and retrievals per trace", "Share of traces whose usage is partial (some of "
                  "their LLM calls reported no tokens: the token counts are what was reported, not the whole), and the "
                  "mean number of retrievals per trace (an agent may search several times).", "none",
                  (Query(_share(f"ragpulse_usage_partial_total{{{SELECTOR}}}", f"ragpulse_traces_total{{{SELECTOR}}}"),
                         "{{app}} partial usage"),
                   Query(_share(f"ragpulse_retrievals_sum{{{SELECTOR}}}", f"ragpulse_retrievals_count{{{SELECTOR}}}"),
                         "{{app}} retrievals per trace"))),
        PanelSpec("OTLP traces assembled", "Traces assembled from spans per second, by outcome: complete, "
                  "ttl_expired (no root span came), capacity, shutdown, failed (a run that ended in an error), not_rag, "
                  "unmapped_genai (GenAI spans ragpulse cannot map), content_not_captured, detached_retrieval (a "
                  "retrieval alone in its trace).", "reqps",
                  (Query("sum by (outcome) (rate(ragpulse_otlp_traces_total[$__rate_interval]))", "{{outcome}}"),), stacked=True),
        PanelSpec("Tool results", "Agents' tool call results per second, by kind (documents, text) and what they "
                  "were read as: retrieval, context (judged against, no retrieval: a tool otlp.retrieval_tools does not "
                  "name), ignored (after the answering call, or empty). The log names each tool not read as a "
                  "retrieval.", "reqps",
                  (Query("sum by (kind, read_as) (rate(ragpulse_otlp_tool_results_total[$__rate_interval]))",
                         "{{kind}} {{read_as}}"),), stacked=True),
        PanelSpec("OTLP spans", "Spans received per second, and spans rejected or dropped by the assembler.", "reqps",
                  (Query("sum by (encoding) (rate(ragpulse_otlp_spans_received_total[$__rate_interval]))", "received {{encoding}}"),
                   Query("sum by (reason) (rate(ragpulse_otlp_spans_dropped_total[$__rate_interval]))", "dropped {{reason}}"),
                   Query("sum(rate(ragpulse_otlp_spans_rejected_total[$__rate_interval]))", "rejected"))),
        PanelSpec("Feedback join", "How feedback met its answer per second (joined, joined_after_wait, session, late, "
                  "orphan, pending_full, session_unknown, unreferenced), and what the join evicted, by table.", "reqps",
                  (Query("sum by (outcome) (rate(ragpulse_feedback_joins_total[$__rate_interval]))", "{{outcome}}"),
                   Query("sum by (table) (rate(ragpulse_feedback_join_evicted_total[$__rate_interval]))", "evicted {{table}}"))),
        PanelSpec("HTTP answers", "HTTP requests served per second, by endpoint and status code.", "reqps",
                  (Query("sum by (endpoint, code) (rate(ragpulse_http_requests_total[$__rate_interval]))", "{{endpoint}} {{code}}"),)),
        PanelSpec("Sources up", "1 when a source is running and connected.", "none",
                  (Query("min by (source) (ragpulse_source_up)", "{{source}}"),), kind="stat"),
    ]


DASHBOARDS = {
    "ragpulse-overview": ("ragpulse / overview", "Answer quality of the RAG services ragpulse watches.", overview),
    "ragpulse-judge": ("ragpulse / judge", "The judge: coverage, cost, errors, budgets and its calibration.", judge),
    "ragpulse-ingestion": ("ragpulse / ingestion", "What ragpulse takes in: sources, invalid and lost events, Kafka, OTLP.",
                           ingestion),
}


def _variables(builder: dashboard.Dashboard) -> dashboard.Dashboard:
    builder = builder.with_variable(dashboard.DatasourceVariable("datasource").label("Data source").type("prometheus"))
    for label in LABELS:
        builder = builder.with_variable(
            dashboard.QueryVariable(label).label(label).datasource(DATASOURCE)
            .query(f"label_values(ragpulse_traces_total, {label})")
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.ALPHABETICAL_ASC)
            .multi(True).include_all(True).all_value(".*"))
    return builder


def _panel(spec: PanelSpec) -> dashboard.Panel:
    if spec.kind == "stat":
        panel = stat.Panel()
    elif spec.kind == "bargauge":
        panel = bargauge.Panel()
    else:
        panel = timeseries.Panel().fill_opacity(10 if not spec.stacked else 60)
        if spec.stacked:
            panel = panel.stacking(common_builders.StackingConfig().mode(common.StackingMode.NORMAL))
    panel = panel.title(spec.title).description(spec.description).unit(spec.unit).datasource(DATASOURCE).span(spec.width).height(8)
    for index, query in enumerate(spec.queries):
        target = prometheus.Dataquery().expr(query.expr).legend_format(query.legend).ref_id(chr(ord("A") + index))
        if spec.kind != "timeseries":
            target = target.instant()
        panel = panel.with_target(target)
    if spec.band is not None or spec.red_line is not None:
        steps = ([Threshold(color="red", value=None), Threshold(color="transparent", value=spec.band[0]),
                  Threshold(color="red", value=spec.band[1])] if spec.band is not None
                 else [Threshold(color="transparent", value=None), Threshold(color="red", value=spec.red_line)])
        panel = panel.thresholds(dashboard.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps(steps))
        if spec.kind == "timeseries":
            panel = panel.thresholds_style(common_builders.GraphThresholdsStyleConfig().mode(
                common.GraphTresholdsStyleMode.AREA if spec.band is not None else common.GraphTresholdsStyleMode.DASHED))
    if spec.interval_band:
        panel = panel.override_by_name("upper", [DynamicConfigValue(id_val="custom.fillBelowTo", value="lower"),
                                                 DynamicConfigValue(id_val="custom.lineWidth", value=0)])
        panel = panel.override_by_name("lower", [DynamicConfigValue(id_val="custom.lineWidth", value=0)])
    if spec.repeat_app:
        panel = panel.repeat("app")
    return panel


def build(uid: str, settings: Settings) -> dict[str, object]:
    title, description, panels = DASHBOARDS[uid]
    builder = (dashboard.Dashboard(title).uid(uid).description(description).tags(["ragpulse", "generated"])
               .time("now-6h", "now").refresh("1m").timezone(common.TimeZoneBrowser).editable())
    builder = _variables(builder)
    builder = builder.annotation(
        dashboard.AnnotationQuery().name("Releases").datasource(DATASOURCE).enable(True).icon_color("blue")
        .expr('count by (app, release) (ragpulse_traces_total{app=~"$app"}) unless count by (app, release) '
              '(ragpulse_traces_total{app=~"$app"} offset 10m)'))
    for spec in panels(settings):
        builder = builder.with_panel(_panel(spec))
    built = json.loads(JSONEncoder(sort_keys=True).encode(builder.build()))
    for panel in built["panels"]:
        panel["options"] = panel["options"] or {}  # the SDK leaves them null; Grafana's defaults apply
    return built


def render(settings: Settings) -> dict[str, str]:
    """File name -> JSON text of every dashboard."""
    return {f"{uid}.json": json.dumps(build(uid, settings), indent=2, sort_keys=True) + "\n" for uid in DASHBOARDS}
