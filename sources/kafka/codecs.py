"""What a Kafka message value becomes: events (the v1 JSON contract) or OTLP spans (otlp_proto topics)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Counter

from ragpulse._native import KeyFilter
from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.events import Envelope
from ragpulse.config import KafkaTopic
from ragpulse.errors import EventError, RejectReason
from ragpulse.sources.otlp.keys import MAPPED_KEYS
from ragpulse.sources.otlp.spans import Span, decode_protobuf

# A codec turns one message value into events, or spans for the span intake; raises EventError.
Codec = Callable[[bytes, KafkaTopic], tuple[list[Envelope], list[Span]]]


def item_error(exc: Exception) -> EventError:
    """Any exception from decoding one message, as that message's rejection."""
    if isinstance(exc, EventError):
        return exc
    if isinstance(exc, RecursionError):
        return EventError(RejectReason.TOO_DEEP, "nested too deeply to decode (several hundred levels)")
    return EventError(RejectReason.MALFORMED_JSON, f"cannot be decoded: {type(exc).__name__}: {exc}"[:500])


def json_codec(decoder: EventDecoder) -> Codec:
    """The v1 contract: one event a message."""

    def decode(value: bytes, topic: KafkaTopic) -> tuple[list[Envelope], list[Span]]:
        return [decoder.decode_message(value, event_type=topic.type)], []

    return decode


def otlp_proto_codec(rejected: Counter, keys: KeyFilter = MAPPED_KEYS) -> Codec:
    """A serialized ExportTraceServiceRequest, as the OpenTelemetry Collector's kafka exporter writes it; spans it
    rejects are counted in `rejected` (labelled by reason)."""

    def decode(value: bytes, topic: KafkaTopic) -> tuple[list[Envelope], list[Span]]:
        decoded = decode_protobuf(value, keys)
        for reason, count in decoded.rejected_by.items():
            rejected.labels(reason=reason).inc(count)
        return [], decoded.spans

    return decode
