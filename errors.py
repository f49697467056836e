"""The error hierarchy of ragpulse.

    RagpulseError
    ├── ConfigError        permanent: the configuration is invalid; lists every problem
    ├── StartupError       permanent: a listener could not bind; names the option to change
    ├── EventError         permanent: one event is rejected; names the field path and reason
    └── PipelineError
        ├── Backpressure   retryable: a queue is full; try again after `retry_after` seconds
        └── ShuttingDown   retryable: the process is draining; send to another replica or retry

`retryable` says whether sending the same input again later can succeed, the
way the OpenTelemetry Collector marks errors permanent or retryable.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RagpulseError(Exception):
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    path: str  # dotted path into the config, e.g. "http.port"
    message: str

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {self.message}"


class ConfigError(RagpulseError):
    def __init__(self, problems: list[ConfigProblem], origin: str = "config") -> None:
        self.problems = problems
        self.origin = origin
        super().__init__(f"{origin}: " + "; ".join(str(p) for p in problems))


class StartupError(RagpulseError):
    def __init__(self, what: str, address: str, option: str, reason: str) -> None:
        super().__init__(f"cannot listen for {what} on {address} ({option}): {reason}")


class RejectReason(StrEnum):
    """Why an event was rejected; the `reason` label of ragpulse_events_invalid_total."""

    MALFORMED_JSON = "malformed_json"
    NOT_AN_OBJECT = "not_an_object"
    UNKNOWN_TYPE = "unknown_type"
    MISSING_FIELD = "missing_field"
    WRONG_TYPE = "wrong_type"
    INVALID_VALUE = "invalid_value"
    TOO_LARGE = "too_large"
    TOO_DEEP = "too_deep"


class EventError(RagpulseError):
    def __init__(self, reason: RejectReason, message: str, field: str = "") -> None:
        self.reason = reason
        self.field = field  # path inside the event, e.g. "chunks[0].text"; "" for the whole event
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def detached(self) -> EventError:
        """The same rejection without the traceback and chained exceptions a raised one carries: kept in a
        response or a dead letter, those would hold the decoding frames and, through them, the whole body."""
        return EventError(self.reason, self.message, self.field)


class PipelineError(RagpulseError):
    retryable = True


class Backpressure(PipelineError):
    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(f"pipeline queue is full, retry after {retry_after:g}s")


class ShuttingDown(PipelineError):
    def __init__(self) -> None:
        super().__init__("ragpulse is shutting down and no longer accepts events")


class ExportRefused(RagpulseError):
    """A /metrics scrape that must not be answered: it would count events a source could not commit yet
    (Kafka offsets during a broker outage), which a successor would then count again."""
