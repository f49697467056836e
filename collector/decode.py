"""From bytes to validated events: JSON, JSON arrays and NDJSON; limits; precise errors.

msgspec decodes and type-checks in one pass; this module adds what the types
cannot say (size limits, plausible timestamps, feedback values per kind) and
turns every problem into an EventError that names the field path and a reason.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import msgspec

from ragpulse import _native
from ragpulse.collector.dedup import event_identity
from ragpulse.config import LimitsConfig
from ragpulse.errors import EventError, RejectReason
from ragpulse.collector.events import (
    MAX_COUNT,
    MAX_ID_CHARS,
    Chunk,
    Envelope,
    Event,
    FeedbackEvent,
    ReviewScores,
    TraceEvent,
)

EventType = Literal["trace", "feedback"]

# Epoch milliseconds between 1973 and 5138: a smaller number is almost surely
# seconds, a larger one microseconds; both would silently misplace the event.
_MIN_EPOCH_MS = 1e11
_MAX_EPOCH_MS = 1e14
_THUMBS = {"up": "up", "down": "down", True: "up", False: "down", -1: "down"}  # True == 1
# msgspec decodes nested JSON recursively; what nests deeper than the interpreter's stack
# allows raises RecursionError, which is the item's fault, never the source's.
_ITEM_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, EventError, RecursionError)
_CONTAINERS = (dict, list)
_LABEL_FIELDS = ("session_id", "user_id", "app", "route", "intent", "model", "release")


@dataclass(slots=True)
class Rejection:
    index: int  # position in the request: array index or NDJSON line (0-based)
    error: EventError


@dataclass(slots=True)
class Decoded:
    envelopes: list[Envelope] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    # (index, truncated field paths) for events accepted after truncation
    truncations: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)


class EventDecoder:
    """Decodes request bodies or single messages into envelopes. Built once per source."""

    def __init__(self, limits: LimitsConfig, source: str) -> None:
        self._limits = limits
        self._source = source
        self._truncate = limits.on_oversize == "truncate"
        self._one = {
            None: msgspec.json.Decoder(Event),
            "trace": msgspec.json.Decoder(TraceEvent),
            "feedback": msgspec.json.Decoder(FeedbackEvent),
        }
        self._raw_items = msgspec.json.Decoder(list[msgspec.Raw])
        self._lines = _native.TraceLines(TraceEvent, Chunk, Envelope, source, _ITEM_ERRORS, (
            limits.max_event_bytes, limits.max_query_chars, limits.max_answer_chars, limits.max_attributes,
            limits.max_chunks, limits.max_chunk_chars))

    def decode_body(
        self, body: bytes, *, event_type: EventType | None = None, ndjson: bool = False
    ) -> Decoded:
        """Decode one request body.

        `event_type` None means mixed events told apart by their `type` field;
        "trace" or "feedback" makes `type` optional. A body is an object, an
        array of objects, or NDJSON (one object a line; `ndjson=True`, or
        detected when a body holds several top-level objects).
        """
        received_at = time.time()
        out = Decoded()
        stripped = body.lstrip()
        if not stripped:
            out.rejections.append(Rejection(0, EventError(RejectReason.MALFORMED_JSON, "empty body")))
        elif ndjson:
            self._decode_lines(body, event_type, received_at, out)
        elif stripped[:1] == b"[":
            self._decode_array(body, event_type, received_at, out)
        else:
            try:
                self._accept(0, body, self._one[event_type].decode(body), received_at, out)
            except (msgspec.ValidationError, EventError, RecursionError) as exc:  # ValidationError is a DecodeError
                if _several_values(body):  # NDJSON sent without its content type: each line on its own
                    self._decode_lines(body, event_type, received_at, out)
                else:
                    out.rejections.append(Rejection(0, _as_event_error(exc)))
            except msgspec.DecodeError as exc:
                # Not one JSON document: several lines are NDJSON without its content type, each line on its own.
                if "trailing characters" in str(exc) or _several_lines(stripped):
                    self._decode_lines(body, event_type, received_at, out)
                else:
                    out.rejections.append(Rejection(0, _from_msgspec(exc)))
        return out

    def decode_message(self, data: bytes, *, event_type: EventType | None = None) -> Envelope:
        """Decode one message (one event); raises EventError."""
        try:
            event = self._one[event_type].decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise _as_event_error(exc) from None
        self._check_size(len(data))
        return self._envelope(event, time.time(), len(data))

    def accept(self, event: Event, size: int) -> Envelope:
        """An event built by a source (e.g. from spans of `size` bytes) through the same limits and defaults,
        and the bounds the contract's types state (built events were never type-checked); raises EventError."""
        _check_built(event)
        return self._envelope(event, time.time(), size)

    def _decode_lines(
        self, body: bytes, event_type: EventType | None, received_at: float, out: Decoded
    ) -> None:
        # The loop is in the compiled core (native/src/lines.rs): it cuts the lines as bytes.splitlines() does, and
        # puts a trace that needs nothing but the defaults in its envelope; any other event comes back to _accept.
        def other(index: int, line: memoryview, event: Event) -> None:
            try:
                self._accept(index, line, event, received_at, out)
            except _ITEM_ERRORS as exc:
                out.rejections.append(Rejection(index, _as_event_error(exc)))

        def reject(index: int, exc: Exception) -> None:
            out.rejections.append(Rejection(index, _as_event_error(exc)))

        self._lines.decode(self._one[event_type].decode, body, received_at, out.envelopes, other, reject)

    def _decode_array(
        self, body: bytes, event_type: EventType | None, received_at: float, out: Decoded
    ) -> None:
        # Item by item, from each item's own bytes: its size is what every byte budget counts it at (an even share
        # of the body undercounted one big event among small ones, up to the body's size), and an error names it.
        try:
            items = self._raw_items.decode(body)
        except _ITEM_ERRORS as exc:
            if isinstance(exc, msgspec.DecodeError) and _several_lines(body.strip()):
                self._decode_lines(body, event_type, received_at, out)  # NDJSON whose first line is no array
            else:
                out.rejections.append(Rejection(0, _as_event_error(exc)))
            return
        decoder = self._one[event_type]
        for index, raw in enumerate(items):
            try:
                self._accept(index, raw, decoder.decode(raw), received_at, out)
            except _ITEM_ERRORS as exc:
                out.rejections.append(Rejection(index, _as_event_error(exc)))

    def _accept(self, index: int, raw: bytes | memoryview | msgspec.Raw, event: Event, received_at: float,
                out: Decoded) -> None:
        size = len(raw)
        self._check_size(size)
        envelope = self._envelope(event, received_at, size)
        out.envelopes.append(envelope)
        if envelope.truncated:
            out.truncations.append((index, envelope.truncated))

    def _check_size(self, size: int) -> None:
        if size > self._limits.max_event_bytes:
            raise EventError(
                RejectReason.TOO_LARGE,
                f"event is {size} bytes, over limits.max_event_bytes={self._limits.max_event_bytes}",
            )

    def _envelope(self, event: Event, received_at: float, size: int) -> Envelope:
        if isinstance(event, TraceEvent):
            return self._trace_envelope(event, received_at, size)
        truncated: list[str] = []
        _check_feedback(event)
        identity = event_identity(event)  # with the timestamp as sent, before the default
        self._normalise_feedback(event, received_at, truncated)
        if event.attributes:
            self._check_depth(event.attributes)
        return Envelope(event, self._source, received_at, identity, tuple(truncated), size=size)

    def _check_depth(self, attributes: dict[str, object]) -> None:
        """Attributes are kept and re-encoded by the sinks: a tree deeper than the limit is refused here,
        where the error can name it, not later where it would fail a write."""
        for value in attributes.values():  # the common case, flat attributes, costs one pass and no list
            if type(value) in _CONTAINERS:
                break
        else:
            return
        limit = self._limits.max_attribute_depth
        level: list[object] = [v for v in attributes.values() if type(v) in _CONTAINERS]
        depth = 1
        while level:
            depth += 1
            if depth > limit:
                raise EventError(RejectReason.TOO_DEEP, f"attributes nest more than limits.max_attribute_depth={limit} levels",
                                 "attributes")
            level = [v for node in level for v in (node.values() if type(node) is dict else node)  # type: ignore[attr-defined]
                     if type(v) in _CONTAINERS]

    def _trace_envelope(self, event: TraceEvent, received_at: float, size: int) -> Envelope:
        """The trace's envelope, the event normalised and checked against the limits in one call. NDJSON lines'
        traces that need nothing but the defaults are put in theirs by the compiled core (native/src/lines.rs), which
        leaves every other to this; the common case here too stays inline and builds no strings."""
        limits = self._limits
        truncated: list[str] = []
        timestamp = event.timestamp
        if timestamp is None:
            event.timestamp = received_at
        elif type(timestamp) is float and _MIN_EPOCH_MS <= timestamp <= _MAX_EPOCH_MS:
            event.timestamp = timestamp / 1000.0  # what _epoch_seconds gives
        else:
            event.timestamp = _epoch_seconds(timestamp, "timestamp")
        if event.route is None:
            event.route = event.intent
        if len(event.query) > limits.max_query_chars:
            event.query = self._cut(event.query, limits.max_query_chars, "query", truncated)
        answer = event.answer
        if answer is None:
            if event.error is None:
                raise EventError(RejectReason.MISSING_FIELD, "required field is missing (a failed run gives `error`)",
                                 "answer")
        elif len(answer) > limits.max_answer_chars:
            event.answer = self._cut(answer, limits.max_answer_chars, "answer", truncated)
        attributes = event.attributes
        if len(attributes) > limits.max_attributes:
            event.attributes = attributes = self._cut_attributes(attributes, truncated)
        chunks = event.chunks
        if chunks:
            if len(chunks) > limits.max_chunks:
                self._over(f"{len(chunks)} chunks, over limits.max_chunks={limits.max_chunks}", "chunks")
                del chunks[limits.max_chunks :]
                truncated.append("chunks")
            max_chars = limits.max_chunk_chars
            for position, chunk in enumerate(chunks):
                if chunk.rank is None:
                    chunk.rank = position
                updated = chunk.updated_at
                if updated is not None:
                    if type(updated) is float and _MIN_EPOCH_MS <= updated <= _MAX_EPOCH_MS:
                        chunk.updated_at = updated / 1000.0
                    else:
                        chunk.updated_at = _epoch_seconds(updated, f"chunks[{position}].updated_at")
                text = chunk.text
                if text is not None and len(text) > max_chars:
                    chunk.text = self._cut(text, max_chars, f"chunks[{position}].text", truncated)
        if event.context:
            self._limit_context(event.context, truncated)
        if attributes:
            for value in attributes.values():  # flat attributes, the common case, cost one pass and no list
                if type(value) in _CONTAINERS:
                    self._check_depth(attributes)
                    break
        identity = hash("t\x00" + event.trace_id)  # event_identity, inline
        return Envelope(event, self._source, received_at, identity, tuple(truncated) if truncated else (), size)

    def _limit_context(self, context: list[Chunk], truncated: list[str]) -> None:
        """Context is held to the chunks' limits: as many items, as long."""
        limits = self._limits
        if len(context) > limits.max_chunks:
            self._over(f"{len(context)} context items, over limits.max_chunks={limits.max_chunks}", "context")
            del context[limits.max_chunks :]
            truncated.append("context")
        for position, item in enumerate(context):
            if item.text is not None and len(item.text) > limits.max_chunk_chars:
                item.text = self._cut(item.text, limits.max_chunk_chars, f"context[{position}].text", truncated)

    def _normalise_feedback(self, event: FeedbackEvent, received_at: float, truncated: list[str]) -> None:
        event.timestamp = received_at if event.timestamp is None else _epoch_seconds(event.timestamp, "timestamp")
        if event.comment is not None and len(event.comment) > self._limits.max_comment_chars:
            event.comment = self._cut(event.comment, self._limits.max_comment_chars, "comment", truncated)
        if len(event.attributes) > self._limits.max_attributes:
            event.attributes = self._cut_attributes(event.attributes, truncated)

    def _cut(self, text: str, limit: int, path: str, truncated: list[str]) -> str:
        self._over(f"{len(text)} characters, over the limit of {limit}", path)
        truncated.append(path)
        return text[:limit]

    def _cut_attributes(self, attributes: dict[str, object], truncated: list[str]) -> dict[str, object]:
        limit = self._limits.max_attributes
        self._over(f"{len(attributes)} keys, over limits.max_attributes={limit}", "attributes")
        truncated.append("attributes")
        return dict(list(attributes.items())[:limit])

    def _over(self, message: str, path: str) -> None:
        if not self._truncate:
            raise EventError(RejectReason.TOO_LARGE, message, path)


def _epoch_seconds(value: datetime | float, path: str) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    if value < _MIN_EPOCH_MS:
        raise EventError(
            RejectReason.INVALID_VALUE,
            f"{value:g} looks like epoch seconds; send epoch milliseconds or an RFC 3339 string",
            path,
        )
    if value > _MAX_EPOCH_MS:
        raise EventError(
            RejectReason.INVALID_VALUE,
            f"{value:g} looks like epoch micro- or nanoseconds; send epoch milliseconds",
            path,
        )
    return value / 1000.0


def _check_feedback(event: FeedbackEvent) -> None:
    """Checks that depend on several fields; normalises thumbs to "up"/"down"."""
    if not event.trace_id and not event.session_id:
        raise EventError(RejectReason.MISSING_FIELD, "feedback needs a trace_id or a session_id", "trace_id")
    value, kind = event.value, event.kind
    if kind == "thumbs":
        normalised = _THUMBS.get(value) if not isinstance(value, float) else None
        if normalised is None:
            raise EventError(RejectReason.INVALID_VALUE, f"thumbs value must be 'up' or 'down', got {value!r}", "value")
        event.value = normalised
    elif kind == "review":
        _check_review(event)
    elif kind == "rating":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 5:
            raise EventError(RejectReason.INVALID_VALUE, f"{kind} value must be a number from 1 to 5, got {value!r}", "value")
    elif kind == "citation_click" and not (isinstance(value, str) and value):
        raise EventError(RejectReason.INVALID_VALUE, "citation_click value must be the clicked chunk id", "value")
    if event.scores is not None and kind != "review":
        raise EventError(RejectReason.INVALID_VALUE, f"scores belong to kind 'review', not {kind!r}", "scores")


def _check_review(event: FeedbackEvent) -> None:
    """A review carries `scores` (the rubric) and/or `value` (an overall 1-5 score). `value` alone is
    read as the groundedness score; without `value`, it is set to scores.groundedness."""
    value, scores = event.value, event.scores
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 5):
        raise EventError(RejectReason.INVALID_VALUE, f"review value must be a number from 1 to 5, got {value!r}", "value")
    if value is None:
        if scores is None or scores.groundedness is None:
            raise EventError(RejectReason.MISSING_FIELD, "a review needs scores.groundedness (1-5) or a value (1-5)",
                             "scores.groundedness")
        event.value = scores.groundedness
    elif scores is None:
        event.scores = ReviewScores(groundedness=round(value))


_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`")


def _as_event_error(exc: Exception) -> EventError:
    """The rejection to keep for `exc`: a new error, so nothing holds the raised one's frames (and the body)."""
    if isinstance(exc, RecursionError):
        return EventError(RejectReason.TOO_DEEP, "JSON nested too deeply to decode (several hundred levels)")
    return exc.detached() if isinstance(exc, EventError) else _from_msgspec(exc)


def _several_lines(body: bytes) -> bool:
    """More than one non-empty line: a body that is not one JSON document is then read as NDJSON."""
    first, _, rest = body.partition(b"\n")
    return bool(first.strip()) and bool(rest.strip())


_any_value = msgspec.json.Decoder(msgspec.Raw)


def _several_values(body: bytes) -> bool:
    """Whether a body holds more than one top-level JSON value (NDJSON without its content type).
    Only asked after a body failed as one event, so the second parse costs nothing on the good path."""
    try:
        _any_value.decode(body)
    except msgspec.DecodeError as exc:
        return "trailing characters" in str(exc)
    except RecursionError:
        return False
    return False


def _check_built(event: Event) -> None:
    """The bounds msgspec checks on decoded events, for events a source built (OTLP spans)."""
    for name in ("trace_id", *_LABEL_FIELDS) if isinstance(event, TraceEvent) else ("trace_id", "session_id", "user_id"):
        value = getattr(event, name)
        if value is not None and len(value) > MAX_ID_CHARS:
            raise EventError(RejectReason.TOO_LARGE, f"{len(value)} characters, over the limit of {MAX_ID_CHARS}", name)
    if isinstance(event, TraceEvent):
        usage = event.usage
        if usage is not None and not (0 <= usage.prompt_tokens <= MAX_COUNT and 0 <= usage.completion_tokens <= MAX_COUNT):
            raise EventError(RejectReason.INVALID_VALUE, f"token counts must be integers from 0 to {MAX_COUNT}", "usage")
        for position, chunk in enumerate(event.chunks or ()):
            if chunk.id is not None and len(chunk.id) > MAX_ID_CHARS:
                raise EventError(RejectReason.TOO_LARGE, f"{len(chunk.id)} characters, over the limit of {MAX_ID_CHARS}",
                                 f"chunks[{position}].id")


def _from_msgspec(exc: Exception) -> EventError:
    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):
        return EventError(RejectReason.MALFORMED_JSON, f"invalid JSON: {text}")
    match = _PATH.search(text)
    path = match["path"].lstrip(".") if match else ""
    message = text[: match.start()] if match else text
    missing = _MISSING.match(message)
    if missing:
        name = missing["name"]
        hint = ": set it to 'trace' or 'feedback'" if name == "type" and not path else ""
        return EventError(
            RejectReason.MISSING_FIELD, f"required field is missing{hint}", f"{path}.{name}" if path else name
        )
    if path == "type" and message.startswith("Invalid value"):
        got = message.removeprefix("Invalid value").strip(" '")
        if got in ("trace", "feedback"):  # a valid type where one kind only is taken (POST /v1/feedback, a typed topic)
            wanted = "feedback" if got == "trace" else "trace"
            return EventError(RejectReason.UNKNOWN_TYPE, f"a {got} event where only {wanted} events are taken "
                              "(POST /v1/events takes both)", path)
        return EventError(RejectReason.UNKNOWN_TYPE, f"{message}; expected 'trace' or 'feedback'", path)
    if not path and message.startswith("Expected `object`"):
        return EventError(RejectReason.NOT_AN_OBJECT, f"each event must be a JSON object: {message}")
    if ", got `" in message:
        return EventError(RejectReason.WRONG_TYPE, message, path)
    return EventError(RejectReason.INVALID_VALUE, message, path)
