"""The config's schema: one msgspec Struct per section, and the checks msgspec cannot express.

Each section with such checks has `validate()`, as an OpenTelemetry Collector component's
config has `Validate()`; `Config.validate()` runs them all, then the checks that span sections.
Problems carry full dotted paths and are all reported at once. The Kafka and OTLP sections are
in sources.py, the probes' in probes.py, the report's in report.py.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Annotated, Literal

import msgspec
import re2
import yaml

from ragpulse.config.base import (
    LabelName,
    NonNegativeFloat,
    Port,
    Positive,
    PositiveFloat,
    Rate,
    RuleName,
    _Section,
    given_twice,
    missing_files,
    read_secret,
)
from ragpulse.config.interop import InteropConfig
from ragpulse.config.probes import ProbesConfig
from ragpulse.config.report import ReportConfig
from ragpulse.config.sources import ForwardConfig, KafkaConfig, OtlpConfig
from ragpulse.errors import ConfigProblem

TOKENS = ("auth_token", "api_token", "review_token")  # http's tokens, each also as <option>_file


class HttpConfig(_Section):
    host: str = "0.0.0.0"
    port: Port = 8080
    max_body_bytes: Positive = 8 * 1024 * 1024
    # The bearer tokens of the three scopes (docs/configuration.md#tokens-and-scopes): ingest (POST /v1/*, and
    # OTLP while otlp.auth_token is unset), the API (GET /api/*: users' questions and answers) and reviews
    # (feedback of kind review: it steers calibration). Without its token a user-data scope (API, reviews) is
    # open on a loopback http.host only, and refused (403) on any other unless allow_unauthenticated_user_data.
    auth_token: str | None = None
    auth_token_file: str | None = None
    api_token: str | None = None
    api_token_file: str | None = None
    review_token: str | None = None
    review_token_file: str | None = None
    allow_unauthenticated_user_data: bool = False
    retry_after_seconds: PositiveFloat = 1.0
    # A connection that sends no complete request head this long after connecting or after its
    # last answer is closed (idle clients and slowloris heads alike)...
    idle_timeout_seconds: PositiveFloat = 30.0
    # ...a body must arrive within this (else 408)...
    body_timeout_seconds: PositiveFloat = 30.0
    # ...and at most this many connections are open at once (one more is closed at accept).
    max_connections: Positive = 256

    def validate(self) -> list[ConfigProblem]:
        problems: list[ConfigProblem] = []
        for option in TOKENS:
            problems += given_twice("http", self, option)
            if getattr(self, option) is not None and not getattr(self, option).strip():
                unset = ("to turn auth off" if option == "auth_token"
                         else "for no token (its scope is then open on a loopback http.host only)")
                problems.append(ConfigProblem(f"http.{option}", f"must not be empty; leave it unset {unset}"))
        return problems + missing_files("http", self, *(f"{option}_file" for option in TOKENS))


class PipelineConfig(_Section):
    queue_capacity_events: Positive = 20_000
    # ...and in bytes (the encoded size of the events): events near max_event_bytes fill it first.
    queue_capacity_bytes: Positive = 48 * 1024 * 1024
    max_batch_events: Positive = 512
    shutdown_timeout_seconds: NonNegativeFloat = 10.0

    def validate(self) -> list[ConfigProblem]:
        if self.max_batch_events > self.queue_capacity_events:
            return [ConfigProblem("pipeline.max_batch_events", "must not exceed pipeline.queue_capacity_events")]
        return []


class LimitsConfig(_Section):
    max_event_bytes: Positive = 512 * 1024
    max_query_chars: Positive = 8_192
    max_answer_chars: Positive = 32_768
    max_chunk_chars: Positive = 16_384
    max_chunks: Positive = 100
    max_comment_chars: Positive = 4_096
    max_attributes: Positive = 64
    # Nesting levels of the attributes tree (an event nested deeper is rejected, reason too_deep).
    max_attribute_depth: Annotated[int, msgspec.Meta(ge=1, le=64)] = 16
    on_oversize: Literal["truncate", "reject"] = "truncate"


class DedupConfig(_Section):
    max_entries: Positive = 100_000
    window_seconds: PositiveFloat = 600.0


class FallbackRule(_Section):
    name: RuleName
    pattern: str


@functools.cache
def _phrase_catalogue() -> tuple[tuple[str, str], ...]:
    """The fallback scorer's built-in phrase rules: package data of this package (fallback_phrases.yaml)."""
    text = resources.files(__package__).joinpath("fallback_phrases.yaml").read_text(encoding="utf-8")
    return tuple((rule["name"], rule["pattern"]) for rule in yaml.safe_load(text)["rules"])


def _default_rules() -> list[FallbackRule]:
    return [FallbackRule(name=name, pattern=pattern) for name, pattern in _phrase_catalogue()]


class FallbackConfig(_Section):
    empty_retrieval: bool = True  # an explicit empty `chunks: []` counts as a fallback
    rules: list[FallbackRule] = msgspec.field(default_factory=_default_rules)
    extra_rules: list[FallbackRule] = []  # appended to `rules`, to add without repeating the defaults

    def validate(self) -> list[ConfigProblem]:
        problems: list[ConfigProblem] = []
        seen: set[str] = set()
        for option, rules in (("rules", self.rules), ("extra_rules", self.extra_rules)):
            for index, rule in enumerate(rules):
                where = f"fallback.{option}[{index}]"
                if rule.name in seen:
                    problems.append(ConfigProblem(f"{where}.name", f"duplicate rule name {rule.name!r}"))
                seen.add(rule.name)
                if rule.name in ("explicit", "empty_retrieval"):
                    problems.append(ConfigProblem(f"{where}.name", f"{rule.name!r} is reserved for built-in signals"))
                problems += _pattern_problems(f"{where}.pattern", rule.pattern)
        return problems


class MetricsConfig(_Section):
    labels: list[LabelName] = msgspec.field(default_factory=lambda: ["app", "route", "model", "release"])
    max_values_per_label: Positive = 50
    max_label_sets: Positive = 2_000
    latency_buckets_seconds: list[float] = msgspec.field(
        default_factory=lambda: [0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0]
    )
    # Retriever scores: cosine similarity in [0, 1] is common; BM25 and rerankers go higher.
    score_buckets: list[float] = msgspec.field(
        default_factory=lambda: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0, 5.0, 10.0, 20.0]
    )
    chunk_buckets: list[float] = msgspec.field(
        default_factory=lambda: [0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 20.0, 50.0]
    )
    # 1 hour, 6 hours, 1 day, 1 week, 30, 90, 180, 365 and 730 days.
    chunk_age_buckets_seconds: list[float] = msgspec.field(
        default_factory=lambda: [3600.0, 21600.0, 86400.0, 604800.0, 2592000.0, 7776000.0, 15552000.0, 31536000.0, 63072000.0]
    )

    def validate(self) -> list[ConfigProblem]:
        problems: list[ConfigProblem] = []
        if len(set(self.labels)) != len(self.labels):
            problems.append(ConfigProblem("metrics.labels", "lists a label twice"))
        for name in ("latency_buckets_seconds", "score_buckets", "chunk_buckets", "chunk_age_buckets_seconds"):
            buckets = getattr(self, name)
            if not buckets or sorted(set(buckets)) != buckets:
                problems.append(ConfigProblem(f"metrics.{name}", "must be a non-empty, strictly increasing list"))
        return problems


class LocalScorersConfig(_Section):
    # Lexical groundedness, relevancy and number checks on every trace with chunks (no LLM).
    enabled: bool = True
    # Chunk texts recur across traces, questions may: the units of this many of each are kept, in at most this
    # many bytes each (the texts and an upper estimate of their units); a question's from its second time.
    chunk_cache_entries: Positive = 10_000
    chunk_cache_max_bytes: Positive = 64 * 1024 * 1024  # 10,000 English chunks of ~900 characters fit


class EmbeddingsConfig(_Section):
    # Cosine similarities from a sentence-transformers model; needs `pip install 'ragpulse[embeddings]'`.
    enabled: bool = False
    # A model name (downloaded once by sentence-transformers) or a local directory.
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    device: str = "cpu"
    # Share of traces with chunks embedded, chosen by trace id (a CPU embeds tens of traces a second).
    sample_rate: Rate = 0.1
    # Traces waiting for the embedding thread, in at most this many bytes (the events' sizes); past either they
    # are dropped and counted.
    queue_capacity: Positive = 1_000
    queue_max_bytes: Positive = 16 * 1024 * 1024
    # Traces embedded together in one model call.
    batch_traces: Positive = 32
    # Chunk vectors kept, by a digest of the text (a fixed size each: ~1.8 kB for a 384-dimension model).
    chunk_cache_entries: Positive = 10_000


class RateOverride(_Section, kw_only=True):
    # The base rate for traces of this app and/or route (at least one of them).
    app: str | None = None
    route: str | None = None
    rate: Rate


class AlwaysJudge(_Section):
    # Matches a trace when every field given matches: labels by equality, the question by an
    # RE2 search.
    app: str | None = None
    route: str | None = None
    model: str | None = None
    release: str | None = None
    query_pattern: str | None = None


class PriorityRates(_Section):
    negative_feedback: Rate = 1.0
    escalation: Rate = 1.0
    rephrase: Rate = 1.0
    always: Rate = 1.0
    scorer_flag: Rate = 0.5
    over_refusal: Rate = 0.5


class Price(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A judge model's price per million tokens (judge.prices in the config)."""

    prompt_per_million: Annotated[float, msgspec.Meta(ge=0)]
    completion_per_million: Annotated[float, msgspec.Meta(ge=0)]

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt_per_million + completion_tokens * self.completion_per_million) / 1e6


class JudgeConfig(_Section):
    # auto: the LLM judge when base_url or an API key is set, else the local (claim-level) judge;
    # llm, local, or off.
    mode: Literal["auto", "llm", "local", "off"] = "auto"
    # Any OpenAI-compatible API (OpenAI, Azure OpenAI, vLLM, Ollama...). Prefer api_key_file or
    # RAGPULSE_JUDGE__API_KEY.
    base_url: str | None = None
    api_key: str | None = None
    api_key_file: str | None = None
    model: str = "gpt-4o-mini"
    timeout_seconds: PositiveFloat = 30.0
    # Retries with exponential backoff and jitter on 408, 409, 429, 5xx, timeouts and connection
    # errors, honouring Retry-After.
    max_retries: Annotated[int, msgspec.Meta(ge=0, le=10)] = 3
    concurrency: Positive = 4
    max_completion_tokens: Positive = 1_024
    # The routine sample: share of traces judged, chosen by trace id (the same on every replica).
    sample_rate: Rate = 0.05
    sample_rate_overrides: list[RateOverride] = []
    # A floor under the routine sample, per app: when the base rate would give fewer routine judgments a
    # minute, the app's rate rises to give this many (0: no floor), within the budgets. 40 a minute lets the
    # default drift test (5m against 1h) see 5% become 15% within 30 minutes in 99% of simulated runs
    # (bench/sim_drift.py, docs/benchmarks-log.md); at 20 it was 71%.
    min_routine_per_minute: Annotated[int, msgspec.Meta(ge=0)] = 40
    # Replicas that share the traffic behind a load balancer (OTLP, HTTP): the floor counts each trace this many
    # times, so that together they judge the floor's number, not N times it. A Kafka consumer takes its partitions' share.
    replicas: Positive = 1
    # Rates of the classes that jump the queue (see docs/judging.md).
    priority_rates: PriorityRates = PriorityRates()
    always_judge: list[AlwaysJudge] = []
    # Local-scorer flags: lexical support under this, or a number not in the chunks...
    flag_support_below: Rate = 0.3
    # ...and a fallback whose question terms are this much in the chunks (possible over-refusal).
    over_refusal_context_at_least: Rate = 0.5
    queue_capacity: Positive = 1_000
    # ...and its bytes (the events' encoded size); over either, less urgent traces give way.
    queue_max_bytes: Positive = 16 * 1024 * 1024
    # Budgets (null: no limit). Requests count every HTTP request, retries included.
    max_requests_per_minute: Positive | None = 60
    max_tokens_per_hour: Positive | None = 200_000
    max_tokens_per_day: Positive | None = 2_000_000
    max_cost_per_hour: PositiveFloat | None = None
    max_cost_per_day: PositiveFloat | None = None
    # Per judge model, for the cost metric and the cost budgets.
    prices: dict[str, Price] = {}
    # The routine sample stops when less than this share of a token or cost budget is left,
    # flagged traces at half of it; feedback and always-judge traces may spend it all.
    budget_reserve_share: Rate = 0.2
    # Identical (question, chunks, answer) are judged once: this many judgments are kept (0: no cache), in at
    # most this many bytes (an upper estimate of what they hold: a few kB a judgment, its claims and reasons).
    cache_entries: Annotated[int, msgspec.Meta(ge=0)] = 10_000
    cache_max_bytes: Positive = 32 * 1024 * 1024
    # The local judge's analyses of chunk texts (clauses, terms, quantities, the lexical units its model reads), kept
    # for the chunks that recur: at most this many, in at most this many bytes (what they hold, counted by
    # allocation): 10,000 ~300-character Chinese chunks take ~216 MB (docs/benchmarks-log.md).
    local_chunk_cache_entries: Positive = 12_000
    local_chunk_cache_max_bytes: Positive = 256 * 1024 * 1024
    breaker_failures: Positive = 5
    breaker_cooldown_seconds: PositiveFloat = 30.0
    # A prompt template replacing the built-in one; placeholders {question}, {context}, {answer}.
    prompt_file: str | None = None

    @property
    def uses_llm(self) -> bool:
        configured = self.base_url is not None or self.api_key is not None or self.api_key_file is not None
        return self.mode == "llm" or (self.mode == "auto" and configured)

    def key(self) -> str | None:
        return read_secret(self.api_key, self.api_key_file)

    def validate(self) -> list[ConfigProblem]:
        problems = missing_files("judge", self, "api_key_file", "prompt_file") + given_twice("judge", self, "api_key")
        if self.mode == "llm" and self.base_url is None and self.api_key is None and self.api_key_file is None:
            problems.append(ConfigProblem("judge.mode", "llm needs judge.base_url or an API key (api_key, api_key_file)"))
        for index, override in enumerate(self.sample_rate_overrides):
            if override.app is None and override.route is None:
                problems.append(ConfigProblem(f"judge.sample_rate_overrides[{index}]", "give an app, a route or both"))
        for index, matcher in enumerate(self.always_judge):
            if all(getattr(matcher, name) is None for name in ("app", "route", "model", "release", "query_pattern")):
                problems.append(ConfigProblem(f"judge.always_judge[{index}]", "give at least one field, or it matches every trace"))
            if matcher.query_pattern is not None:
                problems += _pattern_problems(f"judge.always_judge[{index}].query_pattern", matcher.query_pattern)
        if (self.max_cost_per_hour is not None or self.max_cost_per_day is not None) and self.model not in self.prices:
            problems.append(ConfigProblem("judge.prices", f"a cost budget needs the price of the judge model {self.model!r}"))
        return problems


class ResultsConfig(_Section):
    # Judged bad cases in an SQLite file (`ragpulse badcases`, GET /api/badcases). null: none.
    sqlite_path: str | None = "ragpulse-badcases.sqlite3"
    retention_days: PositiveFloat = 7.0
    max_rows: Positive = 100_000
    # Every judgment as a JSON line; renamed to <path>.1 past jsonl_max_bytes. null: no file.
    jsonl_path: str | None = None
    jsonl_max_bytes: Positive = 100 * 1024 * 1024
    # Every judgment as a JSON message on this topic of kafka.bootstrap_servers. null: none.
    kafka_topic: str | None = None
    # Records waiting for the sinks, in at most this many bytes (an estimate of what they hold: their texts);
    # past either they are dropped and counted.
    queue_capacity: Positive = 10_000
    queue_max_bytes: Positive = 64 * 1024 * 1024


class CalibrationConfig(_Section):
    # Share of the routine sample's judged answers queued for human review, random by trace id.
    audit_rate: Rate = 0.05
    # The review queue: a table in results.sqlite_path; also JSON lines here and messages on this topic.
    jsonl_path: str | None = None
    kafka_topic: str | None = None
    retention_days: PositiveFloat = 90.0
    max_rows: Positive = 100_000
    agreement_threshold: Rate = 0.8
    min_reviews: Positive = 20
    review_window_seconds: PositiveFloat = 14 * 86400.0
    max_audited: Positive = 20_000


class SatisfactionConfig(_Section):
    # false: no feedback join and no satisfaction signals (the cheapest fast path; needs judge.mode off).
    enabled: bool = True
    # The feedback join: traces are held this long for their feedback (at most max_traces of them,
    # in max_bytes with the events kept for late judging); feedback after it is counted late.
    window_seconds: PositiveFloat = 900.0
    max_traces: Positive = 50_000
    max_bytes: Positive = 48 * 1024 * 1024
    # Feedback (and reviews) that came before their trace (or judgment) wait this long, then are orphans.
    pending_window_seconds: PositiveFloat = 600.0
    max_pending: Positive = 10_000
    max_pending_bytes: Positive = 8 * 1024 * 1024
    # Sessions: a similar question (Dice coefficient of terms) within the rephrase window is a rephrase of
    # the previous one; a session idle this long settles its answers (no signal: silent accept).
    rephrase_window_seconds: PositiveFloat = 120.0
    rephrase_similarity: Rate = 0.5
    idle_seconds: PositiveFloat = 300.0
    max_sessions: Positive = 20_000
    max_sessions_bytes: Positive = 8 * 1024 * 1024
    # Analysed questions (normalised text and terms) kept for the next time one is asked.
    question_cache_entries: Positive = 10_000
    question_cache_max_bytes: Positive = 8 * 1024 * 1024
    # A trace on one of these routes (or intents) is a handoff to a human: an escalation of the
    # session's previous answer.
    escalation_routes: list[str] = msgspec.field(default_factory=lambda: ["human_handoff"])
    # A session's turns are classified in the order of their own timestamps: each waits this long (0: not at all)
    # for earlier ones still on their way (two forwarding replicas: docs/scaling-out.md), at most so many, in so many bytes.
    reorder_seconds: Annotated[float, msgspec.Meta(ge=0, le=60)] = 5.0
    reorder_max_entries: Positive = 10_000
    reorder_max_bytes: Positive = 4 * 1024 * 1024


class LoggingConfig(_Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "json", "console"] = "auto"  # auto: console on a TTY, JSON otherwise


class Config(_Section):
    http: HttpConfig = HttpConfig()
    pipeline: PipelineConfig = PipelineConfig()
    limits: LimitsConfig = LimitsConfig()
    dedup: DedupConfig = DedupConfig()
    fallback: FallbackConfig = FallbackConfig()
    metrics: MetricsConfig = MetricsConfig()
    kafka: KafkaConfig = KafkaConfig()
    forward: ForwardConfig = ForwardConfig()
    otlp: OtlpConfig = OtlpConfig()
    local_scorers: LocalScorersConfig = LocalScorersConfig()
    embeddings: EmbeddingsConfig = EmbeddingsConfig()
    judge: JudgeConfig = JudgeConfig()
    results: ResultsConfig = ResultsConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    satisfaction: SatisfactionConfig = SatisfactionConfig()
    probes: ProbesConfig = ProbesConfig()
    interop: InteropConfig = InteropConfig()
    report: ReportConfig = ReportConfig()
    logging: LoggingConfig = LoggingConfig()


    def all_fallback_rules(self) -> list[FallbackRule]:
        return [*self.fallback.rules, *self.fallback.extra_rules]

    def auth_token(self) -> str | None:
        """The ingest bearer token, read from the file when one is configured."""
        return read_secret(self.http.auth_token, self.http.auth_token_file)

    def api_token(self) -> str | None:
        """The token of GET /api/* (bad cases, calibration), read from the file when one is configured."""
        return read_secret(self.http.api_token, self.http.api_token_file)

    def review_token(self) -> str | None:
        """The token of review feedback, read from the file when one is configured."""
        return read_secret(self.http.review_token, self.http.review_token_file)

    def _forwarding_problems(self) -> list[ConfigProblem]:
        """A forwarding replica analyses nothing: what only analysis feeds cannot be asked of it."""
        if self.forward.topic is None:
            return []
        asked = [("interop.evaluation_events.enabled", self.interop.evaluation_events.enabled),
                 ("interop.otlp_metrics.enabled", self.interop.otlp_metrics.enabled),
                 ("interop.phoenix.enabled", self.interop.phoenix.enabled),
                 ("embeddings.enabled", self.embeddings.enabled),
                 ("probes.schedules", bool(self.probes.schedules)),
                 ("results.kafka_topic", self.results.kafka_topic is not None),
                 ("calibration.kafka_topic", self.calibration.kafka_topic is not None)]
        return [ConfigProblem(option, "is for the analysing replicas: a forwarding one (forward.topic) judges and "
                              "exports nothing of its own") for option, on in asked if on]

    def validate(self) -> list[ConfigProblem]:
        """Every section's problems, then those across sections, in the order they have always been listed."""
        problems = [*self.http.validate(), *self.pipeline.validate(), *self.fallback.validate(),
                    *self.kafka.validate(forwarding=self.forward.topic is not None), *self.forward.validate(self.kafka),
                    *self._forwarding_problems(), *self.judge.validate()]
        for option, topic in (("results.kafka_topic", self.results.kafka_topic),
                              ("calibration.kafka_topic", self.calibration.kafka_topic)):
            if topic is not None and self.kafka.bootstrap_servers is None:
                problems.append(ConfigProblem(option, "needs kafka.bootstrap_servers"))
            if topic is not None and topic in [t.name for t in self.kafka.topics]:
                problems.append(ConfigProblem(option, "must not be one of the consumed topics"))
        problems += self.probes.validate()
        if (self.report.schedule.daily or self.report.schedule.weekly) and self.results.sqlite_path is None:
            problems.append(ConfigProblem("report.schedule", "a scheduled report reads the result store: "
                                          "results.sqlite_path must not be null"))
        if self.judge.replicas > 1 and self.kafka.bootstrap_servers and self.kafka.topics:
            problems.append(ConfigProblem("judge.replicas", "is for replicas behind a load balancer: a Kafka consumer's "
                                          "share of the traffic is its share of the topics' partitions (leave it at 1)"))
        if not self.satisfaction.enabled and self.judge.mode != "off":
            problems.append(ConfigProblem("satisfaction.enabled", "false needs judge.mode: off: the judge's late feedback "
                                          "and calibration's reviews go through the feedback join"))
        otlp = self.otlp.validate()
        if self.otlp.enabled and self.otlp.http_port and self.otlp.http_port == self.http.port:
            # Listed after otlp's token problems and before its TLS ones, as it always was.
            at = sum(problem.path == "otlp.auth_token_file" for problem in otlp)
            otlp.insert(at, ConfigProblem("otlp.http_port", f"is the same as http.port ({self.http.port})"))
        return problems + otlp + self.metrics.validate() + self.interop.validate() + self.report.validate()


def re2_options() -> re2.Options:
    """How phrase patterns are compiled, by the checks here and by the fallback detector alike: case-insensitively,
    and quietly (a bad pattern is reported as a config problem, not logged by RE2)."""
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    return options


def pattern_error(pattern: str) -> str | None:
    """Why `pattern` is not a valid RE2 expression (compiled as the matchers compile it), or None."""
    try:
        re2.compile(pattern, options=re2_options())
    except re2.error as exc:
        message = exc.args[0] if exc.args else str(exc)
        return message.decode() if isinstance(message, bytes) else str(message)
    return None


def _pattern_problems(path: str, pattern: str) -> list[ConfigProblem]:
    error = pattern_error(pattern)
    return [ConfigProblem(path, f"invalid regular expression (RE2 syntax): {error}")] if error else []
