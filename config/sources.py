"""The sections of the event sources (ragpulse.sources): the Kafka consumer and the OTLP receivers; and the
forwarding role's Kafka producer, which shares the consumer's connection settings."""

from __future__ import annotations

import importlib.util
import re
from typing import Annotated, Literal

import msgspec

from ragpulse.config.base import (
    NonNegativeFloat,
    Port,
    Positive,
    PositiveFloat,
    _Section,
    given_twice,
    missing_files,
    read_secret,
)
from ragpulse.errors import ConfigProblem


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
    # `confluent` extra: several times the throughput, see docs/benchmarks.md); the same guarantees on both.
    client: Literal["kafka-python", "confluent-kafka"] = "kafka-python"
    group_id: str = "ragpulse"
    client_id: str = "ragpulse"
    topics: list[KafkaTopic] = msgspec.field(default_factory=lambda: [KafkaTopic(name="ragpulse-events")])
    # Malformed messages go here with the error and their origin in headers; null: count and skip them.
    dead_letter_topic: str | None = "ragpulse-dead-letters"
    # Where a group with no committed offset starts.
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    # Records per poll, and so per batch handed to the pipeline; at most two polls wait outside
    # the queue. Large batches cost fewer thread hand-offs (see docs/benchmarks-log.md).
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

    def validate(self, forwarding: bool = False) -> list[ConfigProblem]:
        if self.bootstrap_servers is None:
            return []  # off: the rest does not matter
        problems: list[ConfigProblem] = []
        if not self.topics and not forwarding:
            problems.append(ConfigProblem("kafka.topics", "list at least one topic to consume (an empty list only "
                                          "with forward.topic: the connection is then the forwarder's alone)"))
        names = [topic.name for topic in self.topics]
        if len(set(names)) != len(names):
            problems.append(ConfigProblem("kafka.topics", "lists a topic twice"))
        for index, topic in enumerate(self.topics):
            if topic.encoding == "otlp_proto" and topic.type == "feedback":
                problems.append(ConfigProblem(f"kafka.topics[{index}].type", "otlp_proto topics carry traces, not feedback"))
        if self.dead_letter_topic in names:
            problems.append(ConfigProblem("kafka.dead_letter_topic", "must not be one of the consumed topics"))
        for secret in ("ssl_password", "sasl_password"):
            problems += given_twice("kafka", self, secret) + missing_files("kafka", self, f"{secret}_file")
        problems += missing_files("kafka", self, "ssl_cafile", "ssl_certfile", "ssl_keyfile")
        if self.client == "confluent-kafka" and importlib.util.find_spec("confluent_kafka") is None:
            problems.append(ConfigProblem("kafka.client", "confluent-kafka is not installed: pip install 'ragpulse[confluent]'"))
        sasl = self.security_protocol.startswith("SASL_")
        if sasl and (self.sasl_mechanism is None or self.sasl_username is None):
            problems.append(
                ConfigProblem("kafka.sasl_mechanism", f"security_protocol {self.security_protocol} needs sasl_mechanism and sasl_username")
            )
        if sasl and self.sasl_password is None and self.sasl_password_file is None:
            problems.append(ConfigProblem("kafka.sasl_password", "SASL needs sasl_password or sasl_password_file"))
        if not sasl and self.sasl_mechanism is not None:
            problems.append(ConfigProblem("kafka.sasl_mechanism", "is set but security_protocol is not SASL_PLAINTEXT or SASL_SSL"))
        return problems


# What a retrieval tool's name or description says (sources/otlp/tool_results.py): search, retrieve, look up, a
# knowledge base, docs, RAG. Whole words, so `rag` is no part of `storage`.
RETRIEVAL_TOOLS = (r"\b(search\w*|retriev\w*|look ?up\w*|knowledge\w*|docs?|documents?|documentation|rag)\b",)


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
    # The receivers' bearer token; while unset (and its file too), http.auth_token guards them.
    auth_token: str | None = None
    auth_token_file: str | None = None
    # A span attribute whose value becomes the event's route (e.g. "rag.route"); null: no route.
    route_attribute: str | None = None
    # A trace is assembled this long after its root span arrived...
    grace_seconds: NonNegativeFloat = 1.0
    # ...unless its known spans are incomplete (a span whose parent has not come, a call out to another service
    # with no span of that service yet, or no retrieval yet where this root service's retrievals came late
    # before): then up to this long after its root. Covers an SDK's default
    # BatchSpanProcessor delay (5 s) in the other process, plus the network.
    max_wait_seconds: NonNegativeFloat = 6.0
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
    # Tools whose text results are retrievals: regular expressions searched, case-insensitively, in a tool's name
    # (also spelled out: search_docs, searchDocs as "search docs") and its description. A tool returning documents
    # is a retrieval whatever its name; another tool's text is context the answer is judged against.
    retrieval_tools: list[str] = msgspec.field(default_factory=lambda: list(RETRIEVAL_TOOLS))

    def token(self) -> str | None:
        return read_secret(self.auth_token, self.auth_token_file)

    def validate(self) -> list[ConfigProblem]:
        problems = given_twice("otlp", self, "auth_token") + missing_files("otlp", self, "auth_token_file")
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            problems.append(ConfigProblem("otlp.tls_key_file", "set both tls_cert_file and tls_key_file, or neither"))
        if self.max_wait_seconds < self.grace_seconds:
            problems.append(ConfigProblem("otlp.max_wait_seconds", f"must be at least otlp.grace_seconds ({self.grace_seconds:g})"))
        for index, pattern in enumerate(self.retrieval_tools):
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.append(ConfigProblem(f"otlp.retrieval_tools[{index}]", f"is not a regular expression: {exc}"))
        return problems + missing_files("otlp", self, "tls_cert_file", "tls_key_file")


class ForwardConfig(_Section):
    """The forwarding role (docs/scaling-out.md, the two-tier way): assemble and check events, then publish them
    to a Kafka topic keyed by session id (else trace id) for the analysing replicas, and analyse nothing here."""

    # Off while unset. Set: this replica forwards, over the kafka section's connection (bootstrap_servers, client,
    # TLS, SASL); give it kafka.topics: [] unless it also consumes spans from Kafka.
    topic: Annotated[str, msgspec.Meta(min_length=1)] | None = None
    # Events waiting for the broker (also while it is away), in count and bytes; past either, dropped and counted.
    max_queue_events: Positive = 50_000
    max_queue_bytes: Positive = 128 * 1024 * 1024
    # Events sent before each wait for the broker's acknowledgement (acks=all).
    batch_events: Positive = 1_000
    # How long shutdown waits for what is queued to be acknowledged.
    shutdown_timeout_seconds: PositiveFloat = 10.0

    def validate(self, kafka: KafkaConfig) -> list[ConfigProblem]:
        if self.topic is None:
            return []
        problems: list[ConfigProblem] = []
        if kafka.bootstrap_servers is None:
            problems.append(ConfigProblem("forward.topic", "needs kafka.bootstrap_servers (the broker it publishes to)"))
        elif self.topic in [topic.name for topic in kafka.topics]:
            problems.append(ConfigProblem("forward.topic", "is one of kafka.topics: a forwarding replica would read back "
                                          "what it publishes; set kafka.topics: [] on it"))
        if self.topic == kafka.dead_letter_topic:
            problems.append(ConfigProblem("forward.topic", "is kafka.dead_letter_topic"))
        if self.batch_events > self.max_queue_events:
            problems.append(ConfigProblem("forward.batch_events", f"must be at most forward.max_queue_events ({self.max_queue_events})"))
        return problems
