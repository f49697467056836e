"""The interop section: judgments and metrics sent where users already look, each output off by default.

- evaluation_events: each judgment as OpenTelemetry `gen_ai.evaluation.result` log records on the judged
  trace, over OTLP (interop/evaluation_events.py);
- otlp_metrics: the series of /metrics pushed over OTLP on an interval (interop/otlp_metrics.py);
- phoenix: each judgment as span annotations in an Arize Phoenix server (interop/phoenix.py).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from ragpulse.config.base import Positive, PositiveFloat, _Section, given_twice, header_value, missing_files, read_secret
from ragpulse.errors import ConfigProblem


class OtlpEndpointConfig(_Section):
    """Where an OTLP exporter sends, as the OpenTelemetry SDK's exporters take it."""

    enabled: bool = False
    # grpc: host:port or http(s)://host:port; http/protobuf: the base URL (…:4318), /v1/logs or /v1/metrics appended.
    endpoint: str | None = None
    protocol: Literal["grpc", "http/protobuf"] = "grpc"
    # e.g. an API key header of a vendor's intake: literal, "env:NAME" or "file:PATH" (a mounted secret)
    headers: dict[str, str] = {}
    insecure: bool = False  # grpc without TLS (a Collector beside ragpulse); http follows the URL's scheme
    certificate_file: str | None = None  # the CA that signed the endpoint's certificate
    client_certificate_file: str | None = None  # mutual TLS: ragpulse's certificate...
    client_key_file: str | None = None  # ...and its key
    compression: Literal["none", "gzip"] = "none"
    timeout_seconds: PositiveFloat = 10.0

    def validate_endpoint(self, section: str) -> list[ConfigProblem]:
        if not self.enabled:
            return []
        problems = missing_files(section, self, "certificate_file", "client_certificate_file", "client_key_file")
        for header, value in self.headers.items():
            try:
                header_value(header, value)
            except ValueError as exc:
                problems.append(ConfigProblem(f"{section}.headers.{header}", str(exc).split(": ", 1)[1]))
        if (self.client_certificate_file is None) != (self.client_key_file is None):
            problems.append(ConfigProblem(f"{section}.client_key_file", "set client_certificate_file and client_key_file together"))
        if not self.endpoint:
            return [ConfigProblem(f"{section}.endpoint", "is required when enabled (e.g. http://otel-collector:4317)"),
                    *problems]
        scheme = urlsplit(self.endpoint).scheme if "://" in self.endpoint else ""
        if self.protocol == "http/protobuf" and scheme not in ("http", "https"):
            problems.insert(0, ConfigProblem(f"{section}.endpoint", f"{self.endpoint!r}: http/protobuf needs an http:// or "
                                             "https:// URL (e.g. http://otel-collector:4318)"))
        elif scheme not in ("", "http", "https"):
            problems.insert(0, ConfigProblem(f"{section}.endpoint", f"{self.endpoint!r}: use host:port or an http(s):// URL"))
        return problems


class EvaluationEventsConfig(OtlpEndpointConfig):
    # The hand-over to the exporter's thread: judgments past either cap are dropped, counted.
    max_queue: Positive = 2_048
    max_queue_bytes: Positive = 8 * 1024 * 1024
    max_batch: Positive = 512
    schedule_delay_seconds: PositiveFloat = 1.0

    def validate(self) -> list[ConfigProblem]:
        problems = self.validate_endpoint("interop.evaluation_events")
        if self.max_batch > self.max_queue:
            problems.append(ConfigProblem("interop.evaluation_events.max_batch", f"must not exceed max_queue ({self.max_queue})"))
        return problems


class OtlpMetricsConfig(OtlpEndpointConfig):
    interval_seconds: PositiveFloat = 60.0
    # cumulative: every push the running totals, as /metrics shows them; delta: what changed since the last push.
    temporality: Literal["cumulative", "delta"] = "cumulative"

    def validate(self) -> list[ConfigProblem]:
        return self.validate_endpoint("interop.otlp_metrics")


class PhoenixConfig(_Section):
    enabled: bool = False
    base_url: str | None = None  # e.g. http://phoenix:6006
    api_key: str | None = None  # Phoenix with authentication: a system or user API key
    api_key_file: str | None = None
    max_queue: Positive = 10_000  # annotations waiting to be posted; past it (or max_queue_bytes) dropped, counted
    max_queue_bytes: Positive = 16 * 1024 * 1024
    max_batch: Positive = 100  # annotations a request
    flush_seconds: PositiveFloat = 2.0
    max_retries: Positive = 5  # a batch Phoenix refuses (5xx, 429, unreachable) is retried this many times, then dropped
    # Phoenix answers 404 for a span it has not ingested yet (the app's exporter may send it after ragpulse judged
    # it): such annotations are retried until this old, then dropped, counted.
    span_wait_seconds: PositiveFloat = 60.0
    timeout_seconds: PositiveFloat = 10.0

    def api_token(self) -> str | None:
        return read_secret(self.api_key, self.api_key_file)

    def validate(self) -> list[ConfigProblem]:
        problems = given_twice("interop.phoenix", self, "api_key") + missing_files("interop.phoenix", self, "api_key_file")
        if self.enabled:
            url = urlsplit(self.base_url or "")
            if url.scheme not in ("http", "https") or not url.netloc:
                problems.insert(0, ConfigProblem("interop.phoenix.base_url", f"{self.base_url!r}: needs an http(s):// URL of "
                                                 "the Phoenix server (e.g. http://phoenix:6006) when enabled"))
        return problems


class InteropConfig(_Section):
    # Explanations (the judge's reasons, which quote the answer's claims) leave ragpulse only when this is set;
    # without it an output carries the verdicts, scores and ids alone.
    include_content: bool = False
    explanation_max_chars: Positive = 1_000
    # At shutdown, every output's last sends together get this long (each at most its own timeout_seconds); what
    # is not delivered by then is counted dropped, so a silent endpoint never holds up a pod's stop.
    shutdown_timeout_seconds: PositiveFloat = 3.0
    evaluation_events: EvaluationEventsConfig = EvaluationEventsConfig()
    otlp_metrics: OtlpMetricsConfig = OtlpMetricsConfig()
    phoenix: PhoenixConfig = PhoenixConfig()

    def validate(self) -> list[ConfigProblem]:
        return [*self.evaluation_events.validate(), *self.otlp_metrics.validate(), *self.phoenix.validate()]
