"""What the interop outputs share: their telemetry, the OpenTelemetry SDK's OTLP exporters built from
an endpoint's settings (gRPC or HTTP/protobuf, headers, TLS, compression, timeout), and a blocking export
run where it can never hold up the process's exit."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
from opentelemetry.sdk._logs.export import LogRecordExporter
from opentelemetry.sdk.metrics.export import MetricExporter
from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.config import OtlpEndpointConfig
from ragpulse.config.base import header_value

OUTPUTS = ("evaluation_events", "otlp_metrics", "phoenix")
DROP_REASONS = {
    "evaluation_events": ("queue_full", "export_failed", "no_trace_id"),
    "otlp_metrics": ("export_failed",),
    "phoenix": ("queue_full", "export_failed", "rejected", "span_not_found", "no_trace_id", "no_span_id"),
}


class InteropMetrics:
    """What each interop output sent and dropped (by reason), and what waits in its queue: one set per registry
    (`shared`), every output counts into it."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.sent = Counter("ragpulse_interop_sent_total",
                            "Items an interop output delivered: evaluation log records, metric pushes, Phoenix annotations.",
                            ["output"], registry=registry)
        self.dropped = Counter(
            "ragpulse_interop_dropped_total",
            "Items an interop output did not deliver, by reason: queue_full (its queue at a cap), export_failed (the "
            "endpoint refused, or was away past the retries or shutdown's deadline), rejected (the server refused "
            "them as invalid), span_not_found (Phoenix never ingested the span in interop.phoenix.span_wait_seconds), no_trace_id and "
            "no_span_id (the trace carries no OpenTelemetry id to put the verdict on).",
            ["output", "reason"], registry=registry)
        self.queued = Gauge("ragpulse_interop_queued", "Items waiting in an interop output's queue.", ["output"],
                            registry=registry)
        for output in OUTPUTS:
            self.sent.labels(output=output)
            for reason in DROP_REASONS[output]:
                self.dropped.labels(output=output, reason=reason)


T = TypeVar("T")


async def on_own_thread(call: Callable[[], T], name: str) -> T:
    """`call`'s result, run on a daemon thread of its own: an export stuck on an endpoint that never answers is
    left behind at shutdown's deadline, where asyncio.to_thread's executor would be joined at exit and wait it out."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # cancelled meanwhile: the deadline passed
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            outcome: tuple[T | None, BaseException | None] = (call(), None)
        except BaseException as exc:  # raised where the result is awaited
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the process is exiting, nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future


def log_exporter(options: OtlpEndpointConfig) -> LogRecordExporter:
    """The SDK's OTLP log exporter of the configured protocol (imported only when an output uses it)."""
    if options.protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter

        return HttpLogExporter(**_settings(options, "logs"))
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter

    return GrpcLogExporter(**_settings(options, "logs"))


def metric_exporter(options: OtlpEndpointConfig) -> MetricExporter:
    """The SDK's OTLP metric exporter of the configured protocol."""
    if options.protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetricExporter

        return HttpMetricExporter(**_settings(options, "metrics"))
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter

    return GrpcMetricExporter(**_settings(options, "metrics"))


def _settings(options: OtlpEndpointConfig, signal: str) -> dict[str, Any]:
    """The keyword arguments of the SDK's OTLP exporter for `signal` (logs or metrics).
    ValueError: a header's variable or file is missing."""
    assert options.endpoint is not None  # validated: required when enabled
    headers = {name: header_value(name, value) for name, value in options.headers.items()}
    common: dict[str, Any] = {"headers": headers, "timeout": options.timeout_seconds}
    if options.protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http import Compression

        return {**common, "endpoint": options.endpoint.rstrip("/") + f"/v1/{signal}",
                        "certificate_file": options.certificate_file, "client_key_file": options.client_key_file,
                        "client_certificate_file": options.client_certificate_file,
                        "compression": Compression.Gzip if options.compression == "gzip" else Compression.NoCompression}
    credentials = None
    if not options.insecure and (options.certificate_file or options.client_certificate_file):
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(options.certificate_file), private_key=_read(options.client_key_file),
            certificate_chain=_read(options.client_certificate_file))
    return {**common, "endpoint": options.endpoint, "insecure": options.insecure, "credentials": credentials,
                    "compression": grpc.Compression.Gzip if options.compression == "gzip" else grpc.Compression.NoCompression}


def _read(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path else None
