"""The OTLP receiver: OTLP/HTTP (POST /v1/traces) and OTLP/gRPC (TraceService/Export) in front of one
span assembler, answering per the OTLP spec.

HTTP: 200 with ExportTraceServiceResponse (partial_success names the rejected
spans and why, and the reviews not taken: evaluation scores need the review
scope, sources/access.py), 400 for an undecodable body, 401 without the bearer
token (otlp.auth_token, else http.auth_token; the scheme in any case), 413
over the size limit, 415 for another content type, 429 with Retry-After while
the pipeline queue is full, 503 with Retry-After while shutting down. Error
bodies are google.rpc.Status, in the request's encoding. gRPC: the same
response; UNAUTHENTICATED, RESOURCE_EXHAUSTED (queue full) and UNAVAILABLE
(shutting down) as status codes.
"""

from __future__ import annotations

import ssl

import grpc
import msgspec
import structlog
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from prometheus_client import CollectorRegistry

from ragpulse._native import KeyFilter, TextCache
from ragpulse.collector.queue import EventQueue
from ragpulse.collector.telemetry.shared import shared
from ragpulse.config import OtlpConfig
from ragpulse.errors import EventError, StartupError
from ragpulse.sources.access import Access, Refusal, bearer
from ragpulse.sources.connections import (
    BodyError,
    ConnectionMetrics,
    limit_connections,
    read_body,
    runner_options,
)
from ragpulse.sources.otlp.intake import SOURCE, SpanIntake
from ragpulse.sources.otlp.metrics import OtlpMetrics, otlp_metrics
from ragpulse.sources.otlp.spans import DecodedSpans, decode_json, decode_protobuf

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
RETRY_AFTER_SECONDS = "1"
# google.rpc.Code values used in Status bodies.
INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAVAILABLE, UNAUTHENTICATED = 3, 8, 14, 16
TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
# The decoder's cache of recurring document texts: caps (a text's UTF-8 bytes and 160 each; texts under 64 bytes are not
# held), evictions in ragpulse_otlp_text_cache_evicted_total.
TEXT_CACHE_ENTRIES = 4_096
TEXT_CACHE_BYTES = 8 * 1024 * 1024

log = structlog.get_logger("ragpulse.otlp")


class OtlpReceiver:
    def __init__(self, config: OtlpConfig, intake: SpanIntake, queue: EventQueue, registry: CollectorRegistry, *,
                 access: Access) -> None:
        self._config = config
        self._access = access
        self._intake = intake
        self._queue = queue
        self._registry = registry
        self._metrics = otlp_metrics(registry)
        # A knowledge base's chunks recur across requests as retrieved documents: one string each while held, in every
        # span and event that holds it (the spans wait for their trace's grace; native/src/otlp/texts.rs).
        self._texts = TextCache(TEXT_CACHE_ENTRIES, TEXT_CACHE_BYTES, self._metrics.texts_evicted.labels())
        self._connections = shared(registry, ConnectionMetrics)
        self._accepting = True
        self._runner: web.AppRunner | None = None
        self._grpc: grpc.aio.Server | None = None
        self.http_port: int | None = None
        self.grpc_port: int | None = None

    async def start(self) -> None:
        tls = self._tls_files()
        app = web.Application(client_max_size=self._config.max_body_bytes)
        app.add_routes([web.post("/v1/traces", self._export)])
        self._runner = web.AppRunner(app, **runner_options(self._config.idle_timeout_seconds))
        await self._runner.setup()
        limit_connections(self._runner, "otlp", self._config.max_connections, self._registry)
        context = None
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(self._config.tls_cert_file, self._config.tls_key_file)  # type: ignore[arg-type]
        try:
            await web.TCPSite(self._runner, self._config.host, self._config.http_port, ssl_context=context).start()
        except OSError as exc:
            address = f"{self._config.host}:{self._config.http_port}"
            raise StartupError("OTLP/HTTP", address, "otlp.http_port, or otlp.enabled=false", exc.strerror or str(exc)) from None
        self.http_port = self._runner.addresses[0][1]
        if self._config.grpc_enabled:
            self._grpc = grpc.aio.server(options=[
                ("grpc.max_receive_message_length", self._config.max_body_bytes),
                # A busy port must fail the bind, not be shared with another process (gRPC's default).
                ("grpc.so_reuseport", 0),
                ("grpc.max_connection_idle_ms", int(self._config.idle_timeout_seconds * 1000)),
            ])
            self._grpc.add_generic_rpc_handlers((_trace_service(self, self._metrics),))
            address = f"{self._config.host}:{self._config.grpc_port}"
            try:
                if tls is not None:
                    self.grpc_port = self._grpc.add_secure_port(address, grpc.ssl_server_credentials([tls]))
                else:
                    self.grpc_port = self._grpc.add_insecure_port(address)
            except RuntimeError as exc:  # grpc reports a failed bind this way
                raise StartupError("OTLP/gRPC", address, "otlp.grpc_port, or otlp.grpc_enabled=false", str(exc)) from None
            await self._grpc.start()
        self._metrics.intake.source_up.labels(source=SOURCE).set(1)
        log.info("otlp receiver listening", host=self._config.host, http_port=self.http_port, grpc_port=self.grpc_port,
                 tls=tls is not None)

    def _tls_files(self) -> tuple[bytes, bytes] | None:
        if not self._config.tls_cert_file:
            return None
        with open(self._config.tls_key_file or "", "rb") as key, open(self._config.tls_cert_file, "rb") as cert:
            return key.read(), cert.read()

    async def stop_intake(self) -> None:
        """Refuse new exports (503 / UNAVAILABLE)."""
        self._accepting = False
        self._metrics.intake.source_up.labels(source=SOURCE).set(0)

    async def close(self) -> None:
        if self._grpc is not None:
            await self._grpc.stop(grace=1.0)
        if self._runner is not None:
            await self._runner.cleanup()

    async def _export(self, request: web.Request) -> web.Response:
        content_type = request.content_type
        # "other": a content type OTLP does not have (answered 415), not counted as protobuf.
        encoding = "json" if content_type == JSON else "protobuf" if content_type == PROTOBUF else "other"
        try:
            response = await self._handle(request, encoding)
        except Exception:  # a bug costs this answer, counted, never the receiver
            log.exception("otlp export failed")
            response = _status(500, 13, "ragpulse failed on this request; see its log",
                               "json" if encoding == "other" else encoding)  # 13: INTERNAL
        self._metrics.requests.labels(encoding=encoding, code=str(response.status)).inc()
        return response

    @property
    def keys(self) -> KeyFilter:
        return self._intake.keys

    @property
    def texts(self) -> TextCache:
        return self._texts

    def refusal(self, header: str) -> Refusal | None:
        """Why a request with this Authorization value may not send spans, or None."""
        return self._access.ingest.refusal(bearer(header))

    def unavailable(self) -> tuple[int, str] | None:
        """(google.rpc code, message) when new spans cannot be taken now, else None."""
        if not self._accepting:
            return UNAVAILABLE, "ragpulse is shutting down"
        if not self._queue.has_room(1):
            return RESOURCE_EXHAUSTED, "the pipeline queue is full"
        return None

    async def take(self, decoded: DecodedSpans, encoding: str, header: str) -> None:
        """Hand the spans to the intake; their reviews only with the review scope (refused ones are counted,
        and named in the answer's partial_success)."""
        self._metrics.spans.labels(encoding=encoding).inc(len(decoded.spans))
        for reason, count in decoded.rejected_by.items():
            self._metrics.spans_rejected.labels(reason=reason).inc(count)
        refused = self._access.review.refusal(bearer(header))
        kept_out = await self._intake.take(decoded.spans, refuse_reviews=refused.reason if refused else None)
        if refused is not None and kept_out:
            decoded.problems.insert(0, f"{kept_out} review(s) (evaluation scores 1-5) not taken: {refused.message}")

    async def _handle(self, request: web.Request, encoding: str) -> web.Response:
        header = request.headers.get("Authorization", "")
        if (denied := self.refusal(header)) is not None:
            return _status(401, UNAUTHENTICATED, denied.message, encoding, denied.headers)
        if request.content_type not in (PROTOBUF, JSON):
            return _status(415, INVALID_ARGUMENT, f"content type must be {PROTOBUF} or {JSON}", "json")
        refused = self.unavailable()
        if refused is not None:
            code, message = refused
            return _status(503 if code == UNAVAILABLE else 429, code, message, encoding, {"Retry-After": RETRY_AFTER_SECONDS})
        try:
            body = await read_body(request, self._config.body_timeout_seconds, self._connections, "otlp",
                                   self._config.max_body_bytes)
        except web.HTTPRequestEntityTooLarge:
            return _status(413, RESOURCE_EXHAUSTED, f"body over otlp.max_body_bytes={self._config.max_body_bytes}", encoding)
        except BodyError as exc:
            response = _status(exc.status, INVALID_ARGUMENT, exc.message, encoding)
            if exc.status in (400, 415):
                response.force_close()  # the body is unread: Connection: close, so the client's next request is new
            return response
        try:
            keys = self.keys
            texts = self._texts
            decoded = decode_json(body, keys, texts) if encoding == "json" else decode_protobuf(body, keys, texts)
        except EventError as exc:
            return _status(400, INVALID_ARGUMENT, exc.message, encoding)
        if decoded.general:
            self._metrics.json_general.inc()
        await self.take(decoded, encoding, header)
        if encoding == "json":
            body: dict[str, object] = {}
            if decoded.rejected or decoded.problems:
                body["partialSuccess"] = {"rejectedSpans": str(decoded.rejected), "errorMessage": _problems(decoded)}
            return web.Response(body=msgspec.json.encode(body), content_type=JSON)
        return web.Response(body=export_response(decoded).SerializeToString(), content_type=PROTOBUF)


def _trace_service(receiver: OtlpReceiver, metrics: OtlpMetrics) -> grpc.GenericRpcHandler:
    """TraceService/Export taking the request as bytes: a body that is not an ExportTraceServiceRequest is
    the client's INVALID_ARGUMENT, which gRPC's own deserializer would report as UNKNOWN."""

    async def export(body: bytes, context: grpc.aio.ServicerContext) -> ExportTraceServiceResponse:
        authorization = str(dict(context.invocation_metadata() or ()).get("authorization", ""))
        if (denied := receiver.refusal(authorization)) is not None:
            metrics.requests.labels(encoding="grpc", code="UNAUTHENTICATED").inc()
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, denied.message)
        refused = receiver.unavailable()
        if refused is not None:
            code = grpc.StatusCode.UNAVAILABLE if refused[0] == UNAVAILABLE else grpc.StatusCode.RESOURCE_EXHAUSTED
            metrics.requests.labels(encoding="grpc", code=code.name).inc()
            await context.abort(code, refused[1])
        try:
            decoded = decode_protobuf(body, receiver.keys, receiver.texts)
        except EventError as exc:
            metrics.requests.labels(encoding="grpc", code="INVALID_ARGUMENT").inc()
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message)
        await receiver.take(decoded, "grpc", authorization)
        metrics.requests.labels(encoding="grpc", code="OK").inc()
        return export_response(decoded)

    handler = grpc.unary_unary_rpc_method_handler(export, response_serializer=ExportTraceServiceResponse.SerializeToString)
    return grpc.method_handlers_generic_handler(TRACE_SERVICE, {"Export": handler})


def export_response(decoded: DecodedSpans) -> ExportTraceServiceResponse:
    response = ExportTraceServiceResponse()
    if decoded.rejected or decoded.problems:
        response.partial_success.rejected_spans = decoded.rejected
        response.partial_success.error_message = _problems(decoded)
    return response


def _problems(decoded: DecodedSpans) -> str:
    return "; ".join(decoded.problems[:20])


def _status(status: int, code: int, message: str, encoding: str, headers: dict[str, str] | None = None) -> web.Response:
    if encoding == "json":
        return web.Response(status=status, body=msgspec.json.encode({"code": code, "message": message}),
                            content_type=JSON, headers=headers)
    # google.rpc.Status {int32 code = 1; string message = 2;} in protobuf wire format: two
    # fields are not worth a dependency on googleapis-common-protos.
    text = message.encode()
    body = b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text
    return web.Response(status=status, body=body, content_type=PROTOBUF, headers=headers)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)
