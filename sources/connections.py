"""Server-side limits for the aiohttp listeners (ingest and OTLP/HTTP): what a slow, idle or
hostile client may hold.

- Idle: a connection that has not sent a complete request head within `idle_timeout`
  of connecting or of its last answer is closed (aiohttp's keep-alive timer, which in
  aiohttp 3.14 also runs before the first request: it covers slowloris heads too).
- Body: a body must arrive within `body_timeout` (a 1 GB Content-Length with 8 bytes
  sent is answered 408 and closed a second later, not held).
- Connections: at most `max_connections` open at once; one more is closed at accept
  and counted.
- Encodings: ragpulse undoes Content-Encoding itself (aiohttp's own decompression is off, so a coding
  it cannot read never reaches its parser): identity, gzip, deflate; anything else is 415. The body
  decompressed is held to the same size limit as the body sent (a small gzip of zeros is no way around it).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError
from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.telemetry.shared import shared

LINGERING_SECONDS = 1.0


class BodyError(Exception):
    """A body that could not be read; `status` is the HTTP answer."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        super().__init__(message)


ENCODINGS = ("identity", "gzip", "deflate")
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}  # deflate: the zlib format (RFC 9110)


class ConnectionMetrics:
    """By listener (http, otlp): one set per registry (`shared`)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.refused = Counter(
            "ragpulse_http_connections_refused_total",
            "Connections closed at accept because the listener had max_connections open.", ["listener"], registry=registry,
        )
        self.body_timeouts = Counter(
            "ragpulse_http_body_timeouts_total", "Requests whose body did not arrive within the body timeout (answered 408).",
            ["listener"], registry=registry,
        )


def runner_options(idle_timeout: float) -> dict[str, Any]:
    """Keyword arguments for web.AppRunner. After an answer given before its body was read (429, 408),
    aiohttp drains the rest for `lingering_time` to keep the connection; one second, not its ten."""
    return {"keepalive_timeout": idle_timeout, "lingering_time": LINGERING_SECONDS, "access_log": None,
            "handle_signals": False, "auto_decompress": False}


def limit_connections(runner: web.AppRunner, listener: str, max_connections: int, registry: CollectorRegistry) -> None:
    """Close a connection at accept when `max_connections` are open already. Call after `runner.setup()`."""
    server = runner.server
    assert server is not None, "call after runner.setup()"
    admit: Callable[[Any, asyncio.Transport], None] = server.connection_made
    refused = shared(registry, ConnectionMetrics).refused.labels(listener=listener)

    def connection_made(handler: Any, transport: asyncio.Transport) -> None:
        admit(handler, transport)  # the server tracks it, so connection_lost finds it
        if len(server.connections) > max_connections:
            refused.inc()
            transport.close()

    # aiohttp has no connection cap; its Server calls this hook for every accepted connection.
    server.connection_made = connection_made  # type: ignore[method-assign]


def _codings(request: web.Request) -> list[str]:
    """Content-Encoding's codings, in the order they were applied; BodyError 415 for one ragpulse cannot undo."""
    codings = [c.strip().lower() for c in request.headers.get("Content-Encoding", "").split(",") if c.strip()]
    unknown = [c for c in codings if c not in ENCODINGS]
    if unknown:
        raise BodyError(415, "unsupported_encoding",
                        f"Content-Encoding {unknown[0]!r} is not supported; use one of {', '.join(ENCODINGS)}")
    return [c for c in codings if c != "identity"]


def _decoded(body: bytes, codings: list[str], max_bytes: int) -> bytes:
    for coding in reversed(codings):  # the last applied is undone first
        decompressor = zlib.decompressobj(_WBITS[coding])
        body = decompressor.decompress(body, max_bytes + 1)
        if len(body) > max_bytes or decompressor.unconsumed_tail:
            raise web.HTTPRequestEntityTooLarge(max_size=max_bytes, actual_size=len(body))
        if not decompressor.eof:
            raise zlib.error("the compressed body ends early")
    return body


async def read_body(request: web.Request, timeout: float, metrics: ConnectionMetrics, listener: str,
                    max_bytes: int) -> bytes:
    """The request body (Content-Encoding undone, at most `max_bytes` either way), or BodyError: 408 when it is
    too slow to arrive, 400 when its encoding is broken, 415 for a coding ragpulse does not read; 413 over the
    size limit (HTTPRequestEntityTooLarge). After a 400 or 415 the connection is closed (the rest of the body is
    unread), and the answer says so (Connection: close), so a keep-alive client sends its next request anew."""
    try:
        codings = _codings(request)
        return _decoded(await asyncio.wait_for(request.read(), timeout), codings, max_bytes)
    except TimeoutError:
        metrics.body_timeouts.labels(listener=listener).inc()
        raise BodyError(408, "body_timeout", f"the request body did not arrive within {timeout:g} s") from None
    except web.HTTPRequestEntityTooLarge:
        raise
    except BodyError:
        _close(request)
        raise
    except (RequestPayloadError, HttpProcessingError, zlib.error) as exc:
        _close(request)
        encoding = request.headers.get("Content-Encoding", "identity")
        raise BodyError(400, "bad_encoding", f"the body cannot be read as Content-Encoding {encoding!r}: "
                        f"{getattr(exc, 'message', None) or exc}") from None


def _close(request: web.Request) -> None:
    # The rest of the body is unreadable: no draining it after the answer, and no next request on this connection.
    request.content.feed_eof()
    request.protocol.close()
