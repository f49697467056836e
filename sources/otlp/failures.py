"""Failed runs: a trace whose run raised (a provider's HTTP 500, a timeout, a tool that broke the run) is an event
with the question, no answer and what failed, not a capture problem. A span's status says it (OTLP StatusCode
ERROR); the exception's type is in its `exception` event (the OpenTelemetry SDKs' record_exception) or in
`error.type` (the GenAI conventions)."""

from __future__ import annotations

from ragpulse.collector.events import MAX_ID_CHARS, RunError
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.values import text_value

ERROR = 2  # OTLP StatusCode
NOT_REPORTED = "not reported"
_MAX_MESSAGE = 1024


def failure(spans: list[Span], root: Span, answered: bool) -> RunError | None:
    """What failed, or None: the run failed when its root span failed, or when no answer came and a span failed.
    An answered run with a failed span inside (a tool call the agent retried) did not fail."""
    failed = [s for s in spans if s.status_code == ERROR]
    if not failed or (answered and root.status_code != ERROR):
        return None
    # The innermost failure is the cause: a child ends before the spans it failed in turn.
    failed.sort(key=lambda s: (s.end_unix_nano, -s.start_unix_nano))
    failing = failed[0]
    kind = next((t for span in failed if (t := _error_type(span))), None)
    message = failing.status_message or next((m for span in failed if (m := _exception_message(span))), "")
    return RunError(type=(kind or NOT_REPORTED)[:MAX_ID_CHARS], span=failing.name[:MAX_ID_CHARS] or None,
                    message=message[:_MAX_MESSAGE] or None)


def _error_type(span: Span) -> str | None:
    for event in span.events:
        if event.name == "exception" and (kind := text_value(event.attributes.get("exception.type"))):
            return kind
    return text_value(span.attributes.get("error.type"))


def _exception_message(span: Span) -> str | None:
    return next((text_value(e.attributes.get("exception.message")) for e in span.events
                 if e.name == "exception" and e.attributes.get("exception.message") is not None), None)
