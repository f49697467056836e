"""Configuration: one YAML file, RAGPULSE_* environment overrides, CLI flags.

Precedence, lowest first: built-in defaults, the YAML file, environment
variables (RAGPULSE_SECTION__OPTION=value, e.g. RAGPULSE_HTTP__PORT=9000),
`--set section.option=value` flags. Every option is documented in
`ragpulse.example.yaml` next to this module; a test keeps that file equal to
the defaults here. Problems are reported all at once, by dotted path, with a
hint where one helps (`ragpulse config check FILE`).
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import re2
import yaml

from ragpulse.errors import ConfigError, ConfigProblem

Positive = Annotated[int, msgspec.Meta(gt=0)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0)]
Port = Annotated[int, msgspec.Meta(ge=0, le=65535)]
LabelName = Literal["app", "route", "model", "release"]
RuleName = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]{0,62}$")]

ENV_PREFIX = "RAGPULSE_"
ENV_CONFIG_FILE = "RAGPULSE_CONFIG"  # path of the YAML file; not an option itself


class _Section(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    pass


class HttpConfig(_Section):
    host: str = "0.0.0.0"
    port: Port = 8080
    max_body_bytes: Positive = 8 * 1024 * 1024
    auth_token: str | None = None
    auth_token_file: str | None = None
    retry_after_seconds: PositiveFloat = 1.0
    # A connection that sends no complete request head this long after connecting or after its
    # last answer is closed (idle clients and slowloris heads alike)...
    idle_timeout_seconds: PositiveFloat = 30.0
    # ...a body must arrive within this (else 408)...
    body_timeout_seconds: PositiveFloat = 30.0
    # ...and at most this many connections are open at once (one more is closed at accept).
    max_connections: Positive = 256


class PipelineConfig(_Section):
    queue_capacity_events: Positive = 20_000
    # ...and in bytes (the encoded size of the events): events near max_event_bytes fill it first.
    queue_capacity_bytes: Positive = 48 * 1024 * 1024
    max_batch_events: Positive = 512
    shutdown_timeout_seconds: NonNegativeFloat = 10.0


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
    """The fallback scorer's built-in phrase rules: its data (scorers/fallback_phrases.yaml), read, not imported."""
    text = (Path(__file__).resolve().parent.parent / "scorers" / "fallback_phrases.yaml").read_text(encoding="utf-8")
    return tuple((rule["name"], rule["pattern"]) for rule in yaml.safe_load(text)["rules"])


def _default_rules() -> list[FallbackRule]:
    return [FallbackRule(name=name, pattern=pattern) for name, pattern in _phrase_catalogue()]


class FallbackConfig(_Section):
    empty_retrieval: bool = True  # an explicit empty `chunks: []` counts as a fallback
    rules: list[FallbackRule] = msgspec.field(default_factory=_default_rules)
    extra_rules: list[FallbackRule] = []  # appended to `rules`, to add without repeating the defaults


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


class KafkaTopic(_Section):
    name: Annotated[str, msgspec.Meta(min_length=1)]
    # How a message's bytes become events: "json" is the v1 contract, one event a message;
    # "otlp_proto" a serialized ExportTraceServiceRequest (the OpenTelemetry Collector's kafka exporter).
    encoding: Literal["json", "otlp_proto"] = "json"
    # None: traces and feedback share the topic, told apart by `type`; else every message is this type.
    type: Literal["trace", "feedback"] | None = None


class KafkaConfig(_Section):
    # Off while unset; e.g. "broker-1:9092,broker-2:9092".
    bootstrap_servers: str | None = None
    # The client library: kafka-python (installed with ragpulse) or confluent-kafka (librdkafka, the
    # `confluent` extra: several times the throughput, see docs/BENCHMARKS.md); the same guarantees on both.
    client: Literal["kafka-python", "confluent-kafka"] = "kafka-python"
    group_id: str = "ragpulse"
    client_id: str = "ragpulse"
    topics: list[KafkaTopic] = msgspec.field(default_factory=lambda: [KafkaTopic(name="ragpulse-events")])
    # Malformed messages go here with the error and their origin in headers; null: count and skip them.
    dead_letter_topic: str | None = "ragpulse-dead-letters"
    # Where a group with no committed offset starts.
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    # Records per poll, and so per batch handed to the pipeline; at most two polls wait outside
    # the queue. Large batches cost fewer thread hand-offs (see docs/BENCHMARKS.md).
    max_poll_records: Positive = 2000
    # A member that stops heartbeating (crash, kill -9) keeps its partitions this long; the
    # broker bounds it (group.min/max.session.timeout.ms, by default 6 s to 30 min).
    session_timeout_seconds: Annotated[float, msgspec.Meta(ge=1)] = 45.0
    # Offsets are committed when a /metrics scrape has exported the events they cover; without a
    # scrape for this long they are committed once processed, so a lone consumer still moves on.
    commit_without_scrape_seconds: PositiveFloat = 60.0
    # On partition assignment, ids of already-committed messages this recent are read back
    # into the dedup window, so a duplicate arriving after a restart or rebalance is still caught.
    dedup_restore_seconds: NonNegativeFloat = 120.0
    dedup_restore_max_messages: Annotated[int, msgspec.Meta(ge=0)] = 100_000
    retry_backoff_max_seconds: PositiveFloat = 30.0
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_password: str | None = None
    ssl_password_file: str | None = None
    ssl_check_hostname: bool = True
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None
    sasl_password_file: str | None = None

    def secret(self, name: Literal["ssl_password", "sasl_password"]) -> str | None:
        return read_secret(getattr(self, name), getattr(self, f"{name}_file"))


class OtlpConfig(_Section):
    # The OTLP/HTTP receiver (POST /v1/traces, protobuf or JSON, gzip): on by default, it needs no broker.
    enabled: bool = True
    host: str = "0.0.0.0"
    http_port: Port = 4318
    grpc_enabled: bool = True
    grpc_port: Port = 4317
    # TLS for both receivers when set (PEM files).
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    max_body_bytes: Positive = 16 * 1024 * 1024
    auth_token: str | None = None
    auth_token_file: str | None = None
    # A span attribute whose value becomes the event's route (e.g. "rag.route"); null: no route.
    route_attribute: str | None = None
    # A trace is assembled this long after its root span arrived...
    grace_seconds: NonNegativeFloat = 1.0
    # ...or, without a root, this long after its first span, from what arrived.
    trace_ttl_seconds: PositiveFloat = 30.0
    max_traces_in_flight: Positive = 10_000
    # The spans in flight in bytes (their protobuf size); over it the oldest trace is assembled early.
    max_bytes_in_flight: Positive = 48 * 1024 * 1024
    max_spans_per_trace: Positive = 1_000
    # The OTLP/HTTP listener's connection limits, as http.*.
    idle_timeout_seconds: PositiveFloat = 30.0
    body_timeout_seconds: PositiveFloat = 30.0
    max_connections: Positive = 256

    def token(self) -> str | None:
        return read_secret(self.auth_token, self.auth_token_file)


class LocalScorersConfig(_Section):
    # Lexical groundedness, relevancy and number checks on every trace with chunks (no LLM).
    enabled: bool = True
    # Chunk texts recur across traces; the units of this many are kept (in at most this many bytes of text).
    chunk_cache_entries: Positive = 10_000
    chunk_cache_max_bytes: Positive = 16 * 1024 * 1024


Rate = Annotated[float, msgspec.Meta(ge=0, le=1)]


class EmbeddingsConfig(_Section):
    # Cosine similarities from a sentence-transformers model; needs `pip install 'ragpulse[embeddings]'`.
    enabled: bool = False
    # A model name (downloaded once by sentence-transformers) or a local directory.
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    device: str = "cpu"
    # Share of traces with chunks embedded, chosen by trace id (a CPU embeds tens of traces a second).
    sample_rate: Rate = 0.1
    # Traces waiting for the embedding thread; past this they are dropped and counted.
    queue_capacity: Positive = 1_000
    # Traces embedded together in one model call.
    batch_traces: Positive = 32
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
    # Rates of the classes that jump the queue (see README, Judging).
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
    cache_entries: Annotated[int, msgspec.Meta(ge=0)] = 10_000
    # The local judge's analyses of chunk texts (clauses, terms, quantities), kept for the chunks
    # that recur: at most this many, in at most this many bytes (an upper estimate of what they hold).
    local_chunk_cache_entries: Positive = 5_000
    local_chunk_cache_max_bytes: Positive = 32 * 1024 * 1024
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
    # Records waiting for the sinks; past this they are dropped and counted.
    queue_capacity: Positive = 10_000


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


class ProbeResponse(_Section):
    # Where the answer and the retrieved chunks are in the response: JSONPath (jsonpath-ng); the chunk
    # fields are relative to each chunk. A field the response does not have is "not reported".
    answer: str = "$.answer"
    chunks: str | None = "$.chunks[*]"
    chunk_id: str = "id"
    chunk_text: str = "text"
    chunk_score: str = "score"
    release: str | None = None  # the service's release, when its response says it (else "not_reported")


class ProbeTarget(_Section):
    # A RAG service's own HTTP API, asked the golden set's questions (`ragpulse probe run`).
    name: RuleName
    url: str
    # json: POST {"query": ...}, the answer and chunks as ragpulse's event contract has them;
    # openai_chat: an OpenAI-compatible chat completions URL, the answer in choices[0].message.content.
    preset: Literal["json", "openai_chat"] = "json"
    method: Literal["POST", "GET"] = "POST"
    # The request body, every "{query}" in its strings replaced by the question (null: the preset's).
    body: Any = None
    model: str | None = None  # openai_chat: the model to ask
    # Header values: literal, "env:NAME" (an environment variable) or "file:PATH" (a file's content).
    headers: dict[str, str] = {}
    response: ProbeResponse | None = None  # null: the preset's
    timeout_seconds: PositiveFloat = 30.0


class ProbeSchedule(_Section):
    # `ragpulse run` asks this golden set of this target every interval (after a random 0..jitter delay).
    golden: str
    target: RuleName
    interval_seconds: PositiveFloat = 3600.0
    jitter_seconds: Annotated[float, msgspec.Meta(ge=0)] = 60.0


class ProbesConfig(_Section):
    targets: list[ProbeTarget] = []
    schedules: list[ProbeSchedule] = []
    # Rank cut-off of the retrieval metrics (hit rate@k, MRR, recall@k, precision@k, nDCG@k).
    k: Positive = 5
    concurrency: Positive = 4
    max_requests_per_second: PositiveFloat = 10.0
    # Every probe request carries this header (the run's id), so the service can tell probes apart.
    probe_header: str = "X-Ragpulse-Probe"
    # Runs and their per-question results (`ragpulse probe list|show|compare`).
    db_path: str = "ragpulse-probes.sqlite3"
    # Golden-set candidates from production (answers users signalled on), kept in results.sqlite_path for
    # `ragpulse golden candidates`: at most this many; silent accepts (most quiet answers) only at this rate.
    candidates_max_rows: Positive = 10_000
    candidate_silent_accept_rate: Rate = 0.05


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
    otlp: OtlpConfig = OtlpConfig()
    local_scorers: LocalScorersConfig = LocalScorersConfig()
    embeddings: EmbeddingsConfig = EmbeddingsConfig()
    judge: JudgeConfig = JudgeConfig()
    results: ResultsConfig = ResultsConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    satisfaction: SatisfactionConfig = SatisfactionConfig()
    probes: ProbesConfig = ProbesConfig()
    logging: LoggingConfig = LoggingConfig()


    def all_fallback_rules(self) -> list[FallbackRule]:
        return [*self.fallback.rules, *self.fallback.extra_rules]

    def auth_token(self) -> str | None:
        """The ingest bearer token, read from the file when one is configured."""
        return read_secret(self.http.auth_token, self.http.auth_token_file)


def read_secret(value: str | None, path: str | None) -> str | None:
    """A secret from its file (e.g. a mounted Kubernetes secret) when one is set, else the value itself."""
    return Path(path).read_text(encoding="utf-8").strip() if path else value


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, str] | None = None,
) -> Config:
    """Build the effective config; raises ConfigError naming every problem found."""
    environ = os.environ if environ is None else environ
    path = path or environ.get(ENV_CONFIG_FILE) or None
    data: dict[str, Any] = {}
    if path:
        data = _read_yaml(Path(path))
    sources: dict[str, str] = {}  # dotted option -> the variable or flag that set it, for the error messages
    for key, raw in sorted(environ.items()):
        if key.startswith(ENV_PREFIX) and key != ENV_CONFIG_FILE:
            dotted = key[len(ENV_PREFIX) :].lower().replace("__", ".")
            _set_path(data, dotted, _parse_scalar(raw), origin=key)
            sources[dotted] = key
    for dotted, raw in (overrides or {}).items():
        _set_path(data, dotted, _parse_scalar(raw), origin=f"--set {dotted}")
        sources[dotted] = f"--set {dotted}"
    kinds = [*([str(path)] if path else []), *(["environment"] if any(not s.startswith("--") for s in sources.values()) else []),
             *(["--set"] if any(s.startswith("--") for s in sources.values()) else [])]
    return parse_config(data, origin=", ".join(kinds) or "defaults", sources=sources)


def parse_config(data: Any, *, origin: str = "config", sources: Mapping[str, str] | None = None) -> Config:
    if data is None:
        data = {}
    problems = _option_problems(data) if isinstance(data, dict) else []
    if problems:  # the checks across options too, on what is left without the wrong ones
        data = _without(data, {problem.path.split("[")[0] for problem in problems})
    try:
        config = msgspec.convert(data, Config, strict=False)
    except msgspec.ValidationError as exc:
        problems.append(_problem_from_msgspec(str(exc)))
    else:
        problems.extend(_semantic_problems(config))
    if problems:
        raise ConfigError([_with_source(problem, sources or {}) for problem in problems], origin)
    return config


def _without(data: dict[str, Any], paths: set[str]) -> dict[str, Any]:
    """`data` without the sections and options at `paths` (dotted, as the problems name them)."""
    kept: dict[str, Any] = {}
    for section, options in data.items():
        if section in paths:
            continue
        kept[section] = ({option: value for option, value in options.items() if f"{section}.{option}" not in paths}
                         if isinstance(options, dict) else options)
    return kept


def _option_problems(data: dict[str, Any]) -> list[ConfigProblem]:
    """Every option's problem, not only the first: each option is checked on its own."""
    problems: list[ConfigProblem] = []
    sections = {f.name: f.type for f in msgspec.structs.fields(Config)}
    defaults = Config()
    for section, options in data.items():
        if section not in sections:
            hint = difflib.get_close_matches(section, list(sections), n=1)
            problems.append(ConfigProblem(section, f"unknown section {section!r}" + (
                f"; did you mean {hint[0]!r}?" if hint else f" (known: {', '.join(sections)})")))
            continue
        if not isinstance(options, dict):
            problems.append(ConfigProblem(section, f"must be a mapping of options, got {type(options).__name__}"))
            continue
        section_type = sections[section]
        option_types = {f.name: f.type for f in msgspec.structs.fields(section_type)}
        for option, value in options.items():
            try:
                msgspec.convert({option: value}, section_type, strict=False)
            except msgspec.ValidationError as exc:
                problem = _problem_from_msgspec(str(exc).replace("`$", f"`$.{section}", 1) if "`$" in str(exc)
                                                else f"{exc} - at `$.{section}`")
                problems.append(_with_example(problem, f"{section}.{option}", getattr(getattr(defaults, section), option, None)))
                continue
            if isinstance(value, float) and _is_int(option_types.get(option)):
                # Lax conversion would take 9000.0 for 9000; a config that says 9000.0 means something else.
                problems.append(ConfigProblem(f"{section}.{option}", f"expected a whole number, got {value!r}"))
    return problems


def _is_int(annotation: Any) -> bool:
    origin = getattr(annotation, "__origin__", None)
    if origin is not None and getattr(annotation, "__metadata__", None) is not None:  # Annotated[int, Meta]
        return _is_int(origin)
    args = getattr(annotation, "__args__", None)
    if args and type(None) in args:  # int | None
        return any(_is_int(arg) for arg in args if arg is not type(None))
    return annotation is int


def _with_example(problem: ConfigProblem, path: str, default: Any) -> ConfigProblem:
    """A wrong type gets what a right value looks like: the option's default."""
    if problem.path != path or not problem.message.startswith("Expected") or default is None:
        return problem
    example = msgspec.json.encode(msgspec.to_builtins(default)).decode()
    return ConfigProblem(problem.path, f"{problem.message}; for example {example} (the default)")


def _with_source(problem: ConfigProblem, sources: Mapping[str, str]) -> ConfigProblem:
    """A problem in an option set by an environment variable or --set names it."""
    for dotted, source in sources.items():
        if problem.path == dotted or problem.path.startswith(dotted + ".") or dotted.startswith(problem.path + "."):
            return ConfigProblem(problem.path, f"{problem.message} (from {source})")
    return problem


def default_config_dict() -> dict[str, Any]:
    return msgspec.to_builtins(Config())


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([ConfigProblem("", f"cannot read file: {exc.strerror}")], str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError([ConfigProblem("", f"invalid YAML{where}: {problem}")], str(path)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            [ConfigProblem("", f"the file must hold a mapping of sections, got {type(data).__name__}")],
            str(path),
        )
    return data


def _parse_scalar(raw: str) -> Any:
    # Lists and maps are written in YAML flow style (`[app, route]`), no value as null; other
    # values stay strings and msgspec's lax mode converts them, so "0123" stays a string.
    if raw.strip() == "null":
        return None
    if raw.lstrip().startswith(("[", "{")):
        try:
            return yaml.safe_load(raw)
        except yaml.YAMLError:
            return raw
    return raw


def _set_path(data: dict[str, Any], dotted: str, value: Any, *, origin: str) -> None:
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ConfigError([ConfigProblem(dotted, f"{key!r} is not a section")], origin)
        node = child
    node[keys[-1]] = value


_MSGSPEC_ERROR = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_UNKNOWN_FIELD = re.compile(r"Object contains unknown field `(?P<name>[^`]+)`")


def _problem_from_msgspec(text: str) -> ConfigProblem:
    match = _MSGSPEC_ERROR.match(text)
    assert match is not None  # the pattern matches any string
    message, raw_path = match["message"], match["path"] or ""
    path = raw_path.lstrip(".")
    unknown = _UNKNOWN_FIELD.match(message)
    if unknown:
        name = unknown["name"]
        known = _fields_at(raw_path)
        hint = difflib.get_close_matches(name, known, n=1)
        message = f"unknown option {name!r}" + (f"; did you mean {hint[0]!r}?" if hint else "")
        message += f" (known: {', '.join(known)})" if known and not hint else ""
        path = f"{path}.{name}" if path else name
    return ConfigProblem(path, message)


def _fields_at(raw_path: str) -> list[str]:
    """Option names of the struct at a msgspec path like `.http` or `.fallback.rules[0]`."""
    struct_type: Any = Config
    for part in re.findall(r"\.(\w+)", raw_path):
        field_types = {f.name: f.type for f in msgspec.structs.fields(struct_type)}
        struct_type = field_types.get(part)
        args = getattr(struct_type, "__args__", ())
        if args and isinstance(args[0], type) and issubclass(args[0], msgspec.Struct):
            struct_type = args[0]  # list[FallbackRule] -> FallbackRule
        if not (isinstance(struct_type, type) and issubclass(struct_type, msgspec.Struct)):
            return []
    return [f.name for f in msgspec.structs.fields(struct_type)]


def pattern_error(pattern: str) -> str | None:
    """Why `pattern` is not a valid RE2 expression (compiled case-insensitively, as the matchers do), or None."""
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # reported as a config problem instead
    try:
        re2.compile(pattern, options=options)
    except re2.error as exc:
        message = exc.args[0] if exc.args else str(exc)
        return message.decode() if isinstance(message, bytes) else str(message)
    return None


def _semantic_problems(config: Config) -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    if config.http.auth_token is not None and config.http.auth_token_file is not None:
        problems.append(ConfigProblem("http.auth_token_file", "set auth_token or auth_token_file, not both"))
    if config.http.auth_token is not None and not config.http.auth_token.strip():
        problems.append(ConfigProblem("http.auth_token", "must not be empty; leave it unset to turn auth off"))
    if config.http.auth_token_file is not None and not Path(config.http.auth_token_file).is_file():
        problems.append(ConfigProblem("http.auth_token_file", f"no such file: {config.http.auth_token_file}"))
    if config.pipeline.max_batch_events > config.pipeline.queue_capacity_events:
        problems.append(
            ConfigProblem("pipeline.max_batch_events", "must not exceed pipeline.queue_capacity_events")
        )
    seen: set[str] = set()
    for section, rules in (("rules", config.fallback.rules), ("extra_rules", config.fallback.extra_rules)):
        for index, rule in enumerate(rules):
            where = f"fallback.{section}[{index}]"
            if rule.name in seen:
                problems.append(ConfigProblem(f"{where}.name", f"duplicate rule name {rule.name!r}"))
            seen.add(rule.name)
            if rule.name in ("explicit", "empty_retrieval"):
                problems.append(ConfigProblem(f"{where}.name", f"{rule.name!r} is reserved for built-in signals"))
            error = pattern_error(rule.pattern)
            if error:
                problems.append(ConfigProblem(f"{where}.pattern", f"invalid regular expression (RE2 syntax): {error}"))
    problems.extend(_kafka_problems(config.kafka))
    for option in ("api_key_file", "prompt_file"):
        path = getattr(config.judge, option)
        if path is not None and not Path(path).is_file():
            problems.append(ConfigProblem(f"judge.{option}", f"no such file: {path}"))
    problems.extend(_judge_problems(config))
    problems.extend(_probe_problems(config.probes))
    if not config.satisfaction.enabled and config.judge.mode != "off":
        problems.append(ConfigProblem("satisfaction.enabled", "false needs judge.mode: off: the judge's late feedback "
                                      "and calibration's reviews go through the feedback join"))
    if config.otlp.auth_token is not None and config.otlp.auth_token_file is not None:
        problems.append(ConfigProblem("otlp.auth_token_file", "set auth_token or auth_token_file, not both"))
    if config.otlp.auth_token_file is not None and not Path(config.otlp.auth_token_file).is_file():
        problems.append(ConfigProblem("otlp.auth_token_file", f"no such file: {config.otlp.auth_token_file}"))
    if config.otlp.enabled and config.otlp.http_port and config.otlp.http_port == config.http.port:
        problems.append(ConfigProblem("otlp.http_port", f"is the same as http.port ({config.http.port})"))
    if (config.otlp.tls_cert_file is None) != (config.otlp.tls_key_file is None):
        problems.append(ConfigProblem("otlp.tls_key_file", "set both tls_cert_file and tls_key_file, or neither"))
    for option in ("tls_cert_file", "tls_key_file"):
        path = getattr(config.otlp, option)
        if path is not None and not Path(path).is_file():
            problems.append(ConfigProblem(f"otlp.{option}", f"no such file: {path}"))
    if len(set(config.metrics.labels)) != len(config.metrics.labels):
        problems.append(ConfigProblem("metrics.labels", "lists a label twice"))
    for name in ("latency_buckets_seconds", "score_buckets", "chunk_buckets", "chunk_age_buckets_seconds"):
        buckets = getattr(config.metrics, name)
        if not buckets or sorted(set(buckets)) != buckets:
            problems.append(ConfigProblem(f"metrics.{name}", "must be a non-empty, strictly increasing list"))
    return problems


def _judge_problems(config: Config) -> list[ConfigProblem]:
    judge, problems = config.judge, []
    if judge.api_key is not None and judge.api_key_file is not None:
        problems.append(ConfigProblem("judge.api_key_file", "set api_key or api_key_file, not both"))
    if judge.mode == "llm" and judge.base_url is None and judge.api_key is None and judge.api_key_file is None:
        problems.append(ConfigProblem("judge.mode", "llm needs judge.base_url or an API key (api_key, api_key_file)"))
    for index, override in enumerate(judge.sample_rate_overrides):
        if override.app is None and override.route is None:
            problems.append(ConfigProblem(f"judge.sample_rate_overrides[{index}]", "give an app, a route or both"))
    for index, matcher in enumerate(judge.always_judge):
        if all(getattr(matcher, name) is None for name in ("app", "route", "model", "release", "query_pattern")):
            problems.append(ConfigProblem(f"judge.always_judge[{index}]", "give at least one field, or it matches every trace"))
        if matcher.query_pattern is not None and (error := pattern_error(matcher.query_pattern)):
            problems.append(ConfigProblem(f"judge.always_judge[{index}].query_pattern", f"invalid regular expression (RE2 syntax): {error}"))
    if (judge.max_cost_per_hour is not None or judge.max_cost_per_day is not None) and judge.model not in judge.prices:
        problems.append(ConfigProblem("judge.prices", f"a cost budget needs the price of the judge model {judge.model!r}"))
    for option, topic in (("results.kafka_topic", config.results.kafka_topic),
                          ("calibration.kafka_topic", config.calibration.kafka_topic)):
        if topic is not None and config.kafka.bootstrap_servers is None:
            problems.append(ConfigProblem(option, "needs kafka.bootstrap_servers"))
        if topic is not None and topic in [t.name for t in config.kafka.topics]:
            problems.append(ConfigProblem(option, "must not be one of the consumed topics"))
    return problems


def _probe_problems(probes: ProbesConfig) -> list[ConfigProblem]:
    """What a probe target cannot work with; header sources (env, files) are read when a run starts."""
    problems: list[ConfigProblem] = []
    names: set[str] = set()
    for index, target in enumerate(probes.targets):
        where = f"probes.targets[{index}]"
        if target.name in names:
            problems.append(ConfigProblem(f"{where}.name", f"duplicate target name {target.name!r}"))
        names.add(target.name)
        if not re.match(r"^https?://[^/\s]+", target.url):
            problems.append(ConfigProblem(f"{where}.url", f"expected an http:// or https:// URL, got {target.url!r}"))
        if target.preset == "openai_chat" and target.model is None and target.body is None:
            problems.append(ConfigProblem(f"{where}.model", "the openai_chat preset needs the model to ask (or a body)"))
        for header, value in target.headers.items():
            if value.startswith("env:") and not value[4:]:
                problems.append(ConfigProblem(f"{where}.headers.{header}", "env: needs a variable name, e.g. env:RAG_TOKEN"))
        if target.response is not None:
            import jsonpath_ng.ext  # 30 ms to import: only when a target says where its fields are

            for option in ("answer", "chunks", "chunk_id", "chunk_text", "chunk_score", "release"):
                expression = getattr(target.response, option)
                if expression is None:
                    continue
                try:
                    jsonpath_ng.ext.parse(expression)
                except Exception as exc:  # jsonpath-ng raises several types for a bad expression
                    problems.append(ConfigProblem(f"{where}.response.{option}", f"not a JSONPath expression: {exc}"))
    for index, schedule in enumerate(probes.schedules):
        where = f"probes.schedules[{index}]"
        if schedule.target not in names:
            problems.append(ConfigProblem(f"{where}.target", f"no probes.targets entry named {schedule.target!r}"))
        if not Path(schedule.golden).is_file():
            problems.append(ConfigProblem(f"{where}.golden", f"no such file: {schedule.golden}"))
    return problems


def _kafka_problems(kafka: KafkaConfig) -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    if kafka.bootstrap_servers is None:
        return problems
    if not kafka.topics:
        problems.append(ConfigProblem("kafka.topics", "list at least one topic to consume"))
    names = [topic.name for topic in kafka.topics]
    if len(set(names)) != len(names):
        problems.append(ConfigProblem("kafka.topics", "lists a topic twice"))
    for index, topic in enumerate(kafka.topics):
        if topic.encoding == "otlp_proto" and topic.type == "feedback":
            problems.append(ConfigProblem(f"kafka.topics[{index}].type", "otlp_proto topics carry traces, not feedback"))
    if kafka.dead_letter_topic in names:
        problems.append(ConfigProblem("kafka.dead_letter_topic", "must not be one of the consumed topics"))
    for secret in ("ssl_password", "sasl_password"):
        if getattr(kafka, secret) is not None and getattr(kafka, f"{secret}_file") is not None:
            problems.append(ConfigProblem(f"kafka.{secret}_file", f"set {secret} or {secret}_file, not both"))
        path = getattr(kafka, f"{secret}_file")
        if path is not None and not Path(path).is_file():
            problems.append(ConfigProblem(f"kafka.{secret}_file", f"no such file: {path}"))
    for option in ("ssl_cafile", "ssl_certfile", "ssl_keyfile"):
        path = getattr(kafka, option)
        if path is not None and not Path(path).is_file():
            problems.append(ConfigProblem(f"kafka.{option}", f"no such file: {path}"))
    if kafka.client == "confluent-kafka" and importlib.util.find_spec("confluent_kafka") is None:
        problems.append(ConfigProblem("kafka.client", "confluent-kafka is not installed: pip install 'ragpulse[confluent]'"))
    sasl = kafka.security_protocol.startswith("SASL_")
    if sasl and (kafka.sasl_mechanism is None or kafka.sasl_username is None):
        problems.append(
            ConfigProblem("kafka.sasl_mechanism", f"security_protocol {kafka.security_protocol} needs sasl_mechanism and sasl_username")
        )
    if sasl and kafka.sasl_password is None and kafka.sasl_password_file is None:
        problems.append(ConfigProblem("kafka.sasl_password", "SASL needs sasl_password or sasl_password_file"))
    if not sasl and kafka.sasl_mechanism is not None:
        problems.append(ConfigProblem("kafka.sasl_mechanism", "is set but security_protocol is not SASL_PLAINTEXT or SASL_SSL"))
    return problems
