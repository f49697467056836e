"""The alerting rules and the drift rules they need; the runbook (mixin/runbook.py) is made from the same entries.

Every alert has a `Ragpulse` CamelCase name, a `severity` (critical, warning, info), a static
summary, a templated description with the current value (and the interval where there is one) and a
runbook_url to its section of docs/runbook.md, which is generated from the same entries.

Sampled rates page on the lower bound of their 95% interval, never on a point estimate, and only with
enough judgments in the window. Drift is a one-sided two-proportion z-test of a recent window against
a baseline window before it (`offset`), computed in PromQL from the counters, with a fast pair and a
slow pair, as multi-window burn-rate alerts do: z > settings.drift_z and a rise of at least the
minimum effect, with minimum counts on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragpulse.mixin.promql import counted
from ragpulse.mixin.settings import Settings


@dataclass(frozen=True)
class Signal:
    """A proportion watched for drift: events / total, summed by `level` (app, or all traffic)."""

    name: str
    title: str
    level: str
    events: str
    total: str
    sampled: bool  # a judged sample (counts are judgments) rather than every trace


SIGNALS = (
    Signal("hallucination", "Hallucination", "app",
           'ragpulse_judgments_total{sample="routine",metric="groundedness",verdict="hallucination"}',
           'ragpulse_judgments_total{sample="routine",metric="groundedness",verdict=~"hallucination|grounded|uncertain"}', True),
    Signal("fallback", "Fallback", "app", "ragpulse_fallbacks_total", "ragpulse_traces_total", False),
    Signal("rephrase", "Rephrase", "app", 'ragpulse_satisfaction_signals_total{signal="rephrase"}', "ragpulse_traces_total", False),
    Signal("escalation", "Escalation", "app", 'ragpulse_satisfaction_signals_total{signal="escalation"}', "ragpulse_traces_total",
           False),
)


@dataclass(frozen=True)
class Alert:
    name: str
    severity: str
    expr: str
    duration: str
    summary: str
    description: str
    meaning: str  # the runbook: what it means...
    first_look: str  # ...what to look at first
    queries: tuple[str, ...] = ()  # PromQL that helps, in the runbook


def _by(level: str) -> str:
    return f"sum by ({level})" if level != "all" else "sum"


def _window_rules(signal: Signal, window: str) -> list[dict[str, str]]:
    level = signal.level
    events = f"{level}:ragpulse_{signal.name}_events:increase{window}"
    total = f"{level}:ragpulse_{signal.name}_total:increase{window}"
    return [
        {"record": total, "expr": f"{_by(level)} ({counted(signal.total, window)})"},
        # "or ... * 0": no event series yet is a count of 0, not no data.
        {"record": events, "expr": f"{_by(level)} ({counted(signal.events, window)}) or ({total} * 0)"},
        {"record": f"{level}:ragpulse_{signal.name}:ratio{window}", "expr": f"{events} / ({total} > 0)"},
    ]


def _pair(recent: str, baseline: str) -> str:
    return f"{recent}_{baseline}"


def _drift_rules(signal: Signal, recent: str, baseline: str) -> list[dict[str, str]]:
    level, name = signal.level, signal.name
    s1, n1 = f"{level}:ragpulse_{name}_events:increase{recent}", f"{level}:ragpulse_{name}_total:increase{recent}"
    s0 = f"({level}:ragpulse_{name}_events:increase{baseline} offset {recent})"
    n0 = f"({level}:ragpulse_{name}_total:increase{baseline} offset {recent})"
    pooled = f"(({s1} + {s0}) / ({n1} + {n0}))"
    pair = _pair(recent, baseline)
    return [
        {"record": f"{level}:ragpulse_{name}:drift_effect_{pair}", "expr": f"{s1} / ({n1} > 0) - {s0} / ({n0} > 0)"},
        {"record": f"{level}:ragpulse_{name}:drift_z_{pair}",
         "expr": f"({s1} / ({n1} > 0) - {s0} / ({n0} > 0)) / sqrt(({pooled} * (1 - {pooled}) * (1 / {n1} + 1 / {n0})) > 0)"},
        {"record": f"{level}:ragpulse_{name}_baseline_total:increase{pair}", "expr": n0},
    ]


def drift_windows(settings: Settings) -> list[str]:
    windows = {*settings.drift_fast, *settings.drift_slow, settings.fallback_window}
    return sorted(windows, key=_seconds)


def _seconds(window: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    return float(window[:-1]) * units[window[-1]]


def drift_groups(settings: Settings) -> list[dict[str, object]]:
    """Recording rules: per signal, each window's counts and ratio, then each pair's effect and z."""
    fast_windows = [w for w in drift_windows(settings) if _seconds(w) < 86400]
    slow_windows = [w for w in drift_windows(settings) if _seconds(w) >= 86400]
    groups: list[dict[str, object]] = [{
        "name": "ragpulse-signals", "interval": settings.interval,
        "rules": [rule for signal in SIGNALS for window in fast_windows for rule in _window_rules(signal, window)],
    }]
    if slow_windows:
        groups.append({"name": "ragpulse-signals-baseline", "interval": settings.interval,
                       "rules": [rule for signal in SIGNALS for window in slow_windows for rule in _window_rules(signal, window)]})
    groups.append({"name": "ragpulse-drift", "interval": settings.interval,
                   "rules": [rule for signal in SIGNALS for pair in (settings.drift_fast, settings.drift_slow)
                             for rule in _drift_rules(signal, *pair)]})
    return groups


def _share_by_instance(part: str, whole: str, window: str) -> str:
    return f"sum by (instance) ({counted(part, window)}) / sum by (instance) ({counted(whole, window)})"


def _value(metric: str, *, by_app: bool = True) -> str:
    """A template printing `metric` (of this alert's app) as a percentage, or - when it has no value."""
    query = f'printf "{metric}{{app=%q}}" $labels.app' if by_app else f'"{metric}"'
    return f"{{{{ with {query} | query }}}}{{{{ . | first | value | humanizePercentage }}}}{{{{ else }}}}-{{{{ end }}}}"


def alerts(settings: Settings) -> list[Alert]:
    s = settings
    w = s.hallucination_window
    found = [
        Alert(
            "RagpulseHallucinationRateHigh", "critical",
            f"app:ragpulse_hallucination_trusted_stratified:lower{w} > {s.hallucination_threshold}"
            f" and on (app) app:ragpulse_hallucination_trusted_stratified_judged:increase{w} >= {s.min_judgments}",
            s.hallucination_for,
            "The hallucination rate is above the red line, beyond sampling noise.",
            f"{{{{ $labels.app }}}}: hallucination rate {_value(f'app:ragpulse_hallucination_trusted_stratified:ratio{w}')} "
            f"over {w}, 95% interval [{{{{ $value | humanizePercentage }}}}, "
            f"{_value(f'app:ragpulse_hallucination_trusted_stratified:upper{w}')}], above "
            f"{s.hallucination_threshold:.0%}.",
            f"More than {s.hallucination_threshold:.0%} of the answers are hallucinated: the lower bound of the stratified "
            f"estimate's 95% interval over {w} is above the line, with at least {s.min_judgments} judgments in the window. "
            "Only judgments of a trusted judge count here: an LLM judge, or a judge whose human reviews reach "
            "calibration.min_reviews and show it better than chance (judge:ragpulse_judge_trusted), its rate corrected "
            "for its errors with the reviews' sensitivity and specificity (Rogan–Gladen); an uncalibrated local judge "
            "pages on drift only.",
            "Which layer: the bad cases by stage tell retrieval (nothing relevant retrieved: the index, the retriever, "
            "top-k, the reranker) from generation (relevant chunks, an answer that adds or contradicts: the prompt, the "
            "model) from a knowledge gap. Then which release and route: a new release label is the usual suspect. Read "
            "a few cases: `ragpulse badcases list --stage generation --since 1h`.",
            (f'sum by (release, stage) (increase(ragpulse_badcases_total{{sample="routine",app="APP"}}[{w}]))',
             f'app:ragpulse_hallucination_routine:ratio{w}{{app="APP"}}',
             f'sum by (route) (increase(ragpulse_judge_stratum_judgments_total{{app="APP",verdict="hallucination"}}[{w}]))'),
        ),
    ]
    for signal in SIGNALS:
        effect = s.drift_min_effect if signal.name in ("hallucination", "fallback") else s.drift_min_effect_signals
        for speed, (recent, baseline), duration, severity in (
                ("Fast", s.drift_fast, s.drift_fast_for, "critical" if signal.name == "hallucination" else "warning"),
                ("Slow", s.drift_slow, s.drift_slow_for, "warning")):
            level, pair = signal.level, _pair(recent, baseline)
            on = f" and on ({level}) " if level != "all" else " and "
            what = "judgments" if signal.sampled else "traces"
            app = "{{ $labels.app }}: " if level == "app" else ""
            effect_now = _value(f"{level}:ragpulse_{signal.name}:drift_effect_{pair}", by_app=level == "app")
            found.append(Alert(
                f"Ragpulse{signal.title}Drift{speed}", severity,
                f"{level}:ragpulse_{signal.name}:drift_z_{pair} > {s.drift_z}"
                f"{on}{level}:ragpulse_{signal.name}:drift_effect_{pair} >= {effect}"
                f"{on}{level}:ragpulse_{signal.name}_total:increase{recent} >= {s.drift_min_recent}"
                f"{on}{level}:ragpulse_{signal.name}_baseline_total:increase{pair} >= {s.drift_min_baseline}",
                duration,
                f"The {signal.name} rate rose against its baseline, beyond chance.",
                f"{app}{signal.name} rate up by {effect_now} in the last {recent} against the {baseline} "
                f"before it (z = {{{{ $value | printf \"%.1f\" }}}}).",
                f"The {signal.name} rate of the last {recent} is higher than in the {baseline} before it: a one-sided "
                f"two-proportion z-test, z = (p1 - p0) / sqrt(p(1-p)(1/n1 + 1/n0)) with the pooled p, above {s.drift_z} "
                f"(one-sided 0.1%, strict because the rule tests again every evaluation), a rise of at least "
                f"{effect:.0%}, and at least {s.drift_min_recent} {what} recent and {s.drift_min_baseline} in the "
                f"baseline. The fast pair ({'/'.join(s.drift_fast)}) pages on a sharp regression within minutes, the "
                f"slow pair ({'/'.join(s.drift_slow)}) on a slow one within hours.",
                _DRIFT_FIRST_LOOK[signal.name],
                (f"{level}:ragpulse_{signal.name}:ratio{recent}", f"{level}:ragpulse_{signal.name}:drift_effect_{pair}"),
            ))
    low, high = s.fallback_band
    fw = s.fallback_window
    found += [
        Alert(
            "RagpulseFallbackRateOutOfBand", "warning",
            f"(app:ragpulse_fallback:ratio{fw} < {low} or app:ragpulse_fallback:ratio{fw} > {high})"
            f" and on (app) app:ragpulse_fallback_total:increase{fw} >= {s.fallback_min_traces}",
            s.fallback_for,
            "The fallback rate left its healthy band.",
            f"{{{{ $labels.app }}}}: {{{{ $value | humanizePercentage }}}} of the answers over {fw} were fallbacks; the "
            f"band is {low:.0%}-{high:.0%}.",
            f"The share of answers that decline ('sorry, I couldn't find that') is outside {low:.0%}-{high:.0%}. Far above: "
            "coverage or retrieval is broken; far below: the model forces answers it should not give.",
            "Above the band: which rule fired (`rule` label; empty_retrieval means the retriever found nothing) and "
            "which route; the over_refusal bad cases tell a retriever that finds the chunks from a model that will not use "
            "them. Below it: the hallucination rate of the same app.",
            (f'sum by (rule) (increase(ragpulse_fallbacks_total{{app="APP"}}[{fw}]))',
             f'sum by (stage) (increase(ragpulse_badcases_total{{app="APP",stage=~"knowledge_gap|over_refusal"}}[{fw}]))'),
        ),
        _failed_runs_alert(s),
        Alert(
            "RagpulseJudgeAgreementLow", "warning",
            "judge_model:ragpulse_calibration_agreement:ratio30d < on () group_left max(ragpulse_calibration_agreement_threshold_ratio)"
            " and judge_model:ragpulse_calibration_reviews:increase30d >= on () group_left max(ragpulse_calibration_min_reviews)",
            "1h",
            "The judge agrees with human reviewers less than it must.",
            "{{ $labels.judge_model }} ({{ $labels.prompt_version }}): agreement with human reviews "
            "{{ $value | humanizePercentage }} over 30 days.",
            "Over the last 30 days the judge's hallucination verdicts matched the human reviews of its audit sample less "
            "often than calibration.agreement_threshold (80% by default), with at least calibration.min_reviews reviews. "
            "The rates it produces are then not to be trusted as they are.",
            "`ragpulse calibration`: sensitivity or specificity, which one fails; the bias cuts (long answers, "
            "self-judging). Change the prompt (judge.prompt_file) or the judge model, and review again.",
            ("judge_model:ragpulse_calibration_sensitivity:ratio30d", "judge_model:ragpulse_calibration_specificity:ratio30d"),
        ),
        Alert(
            "RagpulseJudgeErrors", "warning",
            _share_by_instance('ragpulse_judge_requests_total{outcome!="ok"}', "ragpulse_judge_requests_total", "10m")
            + f" > {s.judge_error_ratio}",
            s.health_for,
            "Judge calls are failing.",
            "{{ $labels.instance }}: {{ $value | humanizePercentage }} of the judge calls failed over 10 minutes.",
            f"More than {s.judge_error_ratio:.0%} of the LLM judge calls end in an error after retries: the sample "
            "thins out and bad cases go unseen.",
            "The `outcome` label names the error (RateLimitError, APITimeoutError, invalid_output...); the provider's "
            "status; judge.timeout_seconds and the budgets.",
            ('sum by (outcome) (rate(ragpulse_judge_requests_total[10m]))',),
        ),
        Alert(
            "RagpulseJudgeCircuitOpen", "warning", "ragpulse_judge_circuit_state == 1", "5m",
            "The judge's circuit breaker is open.",
            "{{ $labels.instance }}: the judge's circuit breaker has been open for 5 minutes; judging is paused.",
            "The provider failed judge.breaker_failures times in a row; ragpulse stops calling it and probes again "
            "every judge.breaker_cooldown_seconds. Sampled traces are skipped (reason circuit_open).",
            "The provider's status and the errors of RagpulseJudgeErrors; the base_url and the key.",
            ('sum by (reason) (rate(ragpulse_judge_skipped_total[10m]))',),
        ),
        Alert(
            "RagpulseJudgeBudgetExhausted", "info",
            'sum by (instance) (increase(ragpulse_judge_skipped_total{reason=~"budget_tokens|budget_cost"}[15m])) > 0',
            "15m",
            "Judging is limited by its budget.",
            "{{ $labels.instance }}: {{ $value | printf \"%.0f\" }} sampled traces skipped for the token or cost budget "
            "in 15 minutes.",
            "A token or cost budget is spent; the routine sample stops first (judge.budget_reserve_share), so the rates' "
            "sample thins out while complaints are still judged.",
            "ragpulse_judge_budget_remaining; raise the budget or lower judge.sample_rate.",
            ("ragpulse_judge_budget_remaining",),
        ),
        Alert(
            "RagpulseJudgmentsStalled", "warning",
            f"sum by (instance) (increase(ragpulse_judge_judged_total[{s.stalled_window}])) == 0"
            f" and on (instance) sum by (instance) (increase(ragpulse_traces_total[{s.stalled_window}])) > 0",
            "5m",
            "Traffic flows but nothing is judged.",
            f"{{{{ $labels.instance }}}}: no judgment in {s.stalled_window} while traces arrive.",
            f"No trace was judged in {s.stalled_window} although traces were processed: the judge workers, the queue or "
            "the budgets are stuck, and the hallucination rate goes blind.",
            "ragpulse_judge_queue_depth, the skipped reasons, the circuit state, the sidecar's log.",
            ("ragpulse_judge_queue_depth", 'sum by (reason) (increase(ragpulse_judge_skipped_total[30m]))'),
        ),
        Alert(
            "RagpulseEventsDropped", "warning",
            "sum by (instance) (increase(ragpulse_events_dropped_total[10m])) > 0", "0m",
            "Accepted events were lost.",
            "{{ $labels.instance }}: {{ $value | printf \"%.0f\" }} accepted events dropped in 10 minutes.",
            "Events that a source had accepted were not processed (the `reason` label: shutdown_deadline).",
            "The sidecar's log around a shutdown; pipeline.shutdown_timeout_seconds.",
            ("sum by (reason) (increase(ragpulse_events_dropped_total[1h]))",),
        ),
        Alert(
            "RagpulseComponentFailing", "warning",
            # `or`, not `+`: stage-error series exist only once a stage has failed.
            "sum by (instance) (increase(ragpulse_component_restarts_total[15m])) > 0 or sum by (instance) "
            "(increase(ragpulse_stage_errors_total[15m])) > 0", "0m",
            "A ragpulse component is failing.",
            "{{ $labels.instance }}: {{ $value | printf \"%.0f\" }} task restarts or stage errors in 15 minutes.",
            "A background task (the pipeline, the span assembler) died and was restarted, or a pipeline stage raised on "
            "events: a bug in ragpulse met an input it did not foresee. Events go on (a failing stage costs its "
            "annotation), but what that component adds is missing while it fails.",
            "The sidecar's log (the traceback names the component); /readyz lists restarts of the last minute. "
            "Report the bug with the log line.",
            ("sum by (component) (increase(ragpulse_component_restarts_total[1h]))",
             "sum by (stage) (increase(ragpulse_stage_errors_total[1h]))"),
        ),
        Alert(
            "RagpulseInvalidEvents", "warning",
            f"sum by (instance) ({counted('ragpulse_events_invalid_total', '15m')}) / (sum by (instance) "
            f"({counted('ragpulse_events_received_total', '15m')}) + sum by (instance) "
            f"({counted('ragpulse_events_invalid_total', '15m')})) > {s.invalid_ratio}",
            s.health_for,
            "Many events are rejected as invalid.",
            "{{ $labels.instance }}: {{ $value | humanizePercentage }} of the events were rejected over 15 minutes.",
            f"More than {s.invalid_ratio:.0%} of the events sent are rejected by validation: a producer changed its "
            "format, and what it sends is not monitored.",
            "The `reason` and `source` labels; the rejections' messages in the answers (HTTP) or the dead-letter topic "
            "(Kafka).",
            ("sum by (source, reason) (rate(ragpulse_events_invalid_total[15m]))",),
        ),
        Alert(
            "RagpulseKafkaLagGrowing", "warning",
            f"sum by (topic) (ragpulse_kafka_consumer_lag_records) > {s.kafka_lag_records}"
            " and on (topic) deriv(sum by (topic) (ragpulse_kafka_consumer_lag_records)[15m:1m]) > 0",
            "15m",
            "The Kafka consumer falls behind.",
            "{{ $labels.topic }}: {{ $value | printf \"%.0f\" }} messages behind, and growing.",
            f"The consumer group is more than {s.kafka_lag_records} messages behind and the lag grows: the sidecar cannot "
            "keep up, and the metrics lag reality.",
            "Replicas against partitions, ragpulse_kafka_backpressure_pauses_total (the pipeline is the limit), CPU.",
            ("sum by (topic, partition) (ragpulse_kafka_consumer_lag_records)", "rate(ragpulse_kafka_backpressure_pauses_total[15m])"),
        ),
        Alert(
            "RagpulseProbeHitRateLow", "warning",
            f"sum by (golden_set, target) ({counted('ragpulse_probe_hit_sum', s.probe_window)})"
            f" / sum by (golden_set, target) ({counted('ragpulse_probe_hit_count', s.probe_window)}) < {s.probe_hit_rate_min}"
            f" and sum by (golden_set, target) ({counted('ragpulse_probe_hit_count', s.probe_window)}) >= {s.probe_min_questions}",
            "15m",
            "Golden-set probes find the relevant chunks less often.",
            "{{ $labels.golden_set }} against {{ $labels.target }}: hit rate@k {{ $value | humanizePercentage }} over "
            f"the last {s.probe_window}.",
            f"Fewer than {s.probe_hit_rate_min:.0%} of the labelled questions of a golden set get a relevant chunk in the "
            "top k: retrieval got worse for questions whose answer is known to be in the knowledge base (an index, an "
            "embedding model, a chunking or a knowledge-base change).",
            "`ragpulse probe list`, then `ragpulse probe compare` of the last good run and the latest (which questions "
            "lost their hit); the hit rate by intent and by release; what was deployed when it fell.",
            ("sum by (intent, release) (increase(ragpulse_probe_hit_sum[6h])) / sum by (intent, release) "
             "(increase(ragpulse_probe_hit_count[6h]))",),
        ),
        Alert(
            "RagpulseProbeStale", "warning",
            f"time() - max by (golden_set, target) (ragpulse_probe_last_run_timestamp_seconds) > {s.probe_stale_seconds}",
            "10m",
            "A golden set has not been probed for hours.",
            "{{ $labels.golden_set }} against {{ $labels.target }}: the last probe run finished "
            "{{ $value | humanizeDuration }} ago.",
            "The scheduled probe of a golden set has not completed a run: the probe metrics are old and a retrieval "
            "regression would not show. Runs fail when the target cannot be reached or the sidecar restarts often.",
            "ragpulse_probe_runs_total{outcome=\"failed\"}, the sidecar's log (probe run failed), the target's health.",
            ('sum by (golden_set, target, outcome) (increase(ragpulse_probe_runs_total[6h]))',),
        ),
        Alert(
            "RagpulseOtlpTracesExpiring", "warning",
            _share_by_instance('ragpulse_otlp_traces_total{outcome="ttl_expired"}', "ragpulse_otlp_traces_total", "15m")
            + f" > {s.otlp_ttl_ratio}",
            s.health_for,
            "OTLP traces are assembled without their root span.",
            "{{ $labels.instance }}: {{ $value | humanizePercentage }} of the OTLP traces expired without a root span.",
            "Traces whose root span never came are assembled from what arrived after otlp.trace_ttl_seconds: the "
            "question or the answer may be missing. Usually a sampler or a collector in front drops root spans, or spans "
            "of one trace go to different replicas.",
            "Load balancing by trace id in front of the replicas; the app's sampler.",
            ("sum by (outcome) (rate(ragpulse_otlp_traces_total[15m]))",),
        ),
        Alert(
            "RagpulseOtlpContentNotCaptured", "warning",
            _share_by_instance('ragpulse_otlp_traces_total{outcome="content_not_captured"}', "ragpulse_otlp_traces_total", "15m")
            + f" > {s.otlp_ttl_ratio}",
            s.health_for,
            "OTLP traces arrive without their content.",
            "{{ $labels.instance }}: {{ $value | humanizePercentage }} of the OTLP traces carry no question or answer text.",
            "The app's instrumentation records spans but not their content, so ragpulse makes no event of them: "
            "nothing of that traffic is monitored (no fallback rate, no groundedness).",
            "The sidecar's log names the service and the setting that turns content capture on ([OTLP](otlp.md): "
            "OTEL_SEMCONV_STABILITY_OPT_IN and OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT for the GenAI "
            "instrumentations, OPENINFERENCE_HIDE_* for OpenInference, TRACELOOP_TRACE_CONTENT for OpenLLMetry).",
            ("sum by (outcome) (rate(ragpulse_otlp_traces_total[15m]))",),
        ),
        Alert(
            "RagpulseDown", "critical",
            f'up{{job=~"{s.scrape_job}"}} == 0 or absent(up{{job=~"{s.scrape_job}"}})', "5m",
            "A ragpulse sidecar is not reporting.",
            "{{ if $labels.instance }}{{ $labels.instance }} (job {{ $labels.job }}) has answered no scrape"
            f"{{{{ else }}}}no scrape target of a job matching {s.scrape_job} exists{{{{ end }}}} for 5 minutes.",
            "Prometheus gets no ragpulse metrics from a sidecar (or finds no sidecar at all): it is down or not scraped, "
            "and no quality alert can fire for what it watches.",
            "The pod's status and restarts, its /healthz and /readyz, the scrape target in Prometheus' targets page "
            "(mixin setting scrape_job names the job).",
            (f'up{{job=~"{s.scrape_job}"}}',),
        ),
    ]
    if s.citation_precision_min is not None:  # off by default: an app that promises citations sets a floor
        found.append(_citation_alert(s))
    return found


def _failed_runs_alert(s: Settings) -> Alert:
    w = s.failed_window
    traces = f"sum by (app) ({counted('ragpulse_traces_total', w)})"
    return Alert(
        "RagpulseFailedRunsHigh", "warning",
        f"sum by (app) ({counted('ragpulse_traces_failed_total', w)}) / {traces} > {s.failed_ratio}"
        f" and on (app) {traces} >= {s.failed_min_traces}",
        s.health_for,
        "Many runs end in an error, with no answer.",
        f"{{{{ $labels.app }}}}: {{{{ $value | humanizePercentage }}}} of the runs over {w} failed (an error, no answer).",
        f"More than {s.failed_ratio:.0%} of the app's runs ended in an error (a provider's HTTP 500 or 429, a timeout, a "
        "tool that broke the run): those users got no answer. The failed runs are counted "
        "(ragpulse_traces_failed_total), never judged: the quality rates describe the answers that came.",
        "The model and release labels of the failed runs (one provider or model failing, a release that broke a "
        "tool); the sidecar's log names each service's error type and failing span once; the provider's status.",
        (f'sum by (model, release) (increase(ragpulse_traces_failed_total{{app="APP"}}[{w}]))',),
    )


def _citation_alert(s: Settings) -> Alert:
    w = s.citation_window
    return Alert(
        "RagpulseCitationPrecisionLow", "warning",
        f"app:ragpulse_citation_precision:ratio{w} < {s.citation_precision_min}"
        f" and app:ragpulse_citation_judged:increase{w} >= {s.citation_min_judged}",
        "15m",
        "Answers cite chunks that do not support them.",
        "{{ $labels.app }}: {{ $value | humanizePercentage }} of the judged cited sentences are supported by the "
        f"chunks they cite, over the last {w}.",
        f"Fewer than {s.citation_precision_min:.0%} of the judged cited sentences are supported by the chunk they cite: "
        "a user who clicks the citation finds nothing that says it. Usually the prompt's citation instructions, a "
        "model change, or chunk numbering that no longer matches what the model was shown.",
        "Bad cases at stage generation with an unsupported citation (`ragpulse badcases show`); the release and model "
        "labels of ragpulse_citation_verdicts_total; the dangling share (ragpulse_citations_total).",
        ('sum by (release, model) (increase(ragpulse_citation_verdicts_total{verdict="unsupported"}[6h]))',
         'sum by (app) (increase(ragpulse_citations_total{outcome="dangling"}[6h])) / sum by (app) '
         '(increase(ragpulse_citations_total[6h]))'),
    )


_DRIFT_FIRST_LOOK = {
    "hallucination": "The release label first: a new release against the baseline. Then the stage of the new bad cases "
                     "(retrieval: the index or retriever changed; generation: the prompt or the model).",
    "fallback": "Which fallback rule and route rose; empty_retrieval points at the retriever or the index (a failed "
                "re-index), a phrase rule at the prompt or the model.",
    "rephrase": "Users ask again: read the sessions behind the rephrase judgments (`ragpulse badcases list`); the "
                "hallucination and fallback rates of the same period.",
    "escalation": "Users ask for a human: the fallback rate and the routes of the escalated traces.",
}


def _anchor(name: str) -> str:
    return name.lower()


def alert_groups(settings: Settings) -> list[dict[str, object]]:
    rules = []
    for alert in alerts(settings):
        rules.append({
            "alert": alert.name,
            "expr": alert.expr,
            "for": alert.duration,
            "labels": {"severity": alert.severity},
            "annotations": {"summary": alert.summary, "description": alert.description,
                            "runbook_url": f"{settings.runbook_url}#{_anchor(alert.name)}"},
        })
    return [{"name": "ragpulse-alerts", "interval": settings.interval, "rules": rules}]
