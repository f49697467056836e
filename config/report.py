"""The quality report's section (ragpulse.report): when `ragpulse run` writes it, where, and whom it tells."""

from __future__ import annotations

import re
from typing import Annotated, Literal

import msgspec

from ragpulse.config.base import Positive, PositiveFloat, _Section
from ragpulse.errors import ConfigProblem

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_URL = re.compile(r"^https?://[^/\s]+")
_CLOCK = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


class ReportSchedule(_Section):
    # The daily report covers the 24 hours before `at_utc`; the weekly one the 7 days before it on `weekday`.
    daily: bool = False
    weekly: bool = False
    at_utc: str = "06:00"
    weekday: Weekday = "monday"
    # Where the reports are written (report-daily-<time>.html, report-weekly-<time>.html and latest.html, which
    # GET /report serves); past `keep` reports the oldest are deleted.
    directory: str = "ragpulse-reports"
    keep: Positive = 60
    cases: Annotated[int, msgspec.Meta(ge=0, le=100)] = 8
    # Also read the recording rules' series from this Prometheus (null: the store's figures only).
    prometheus_url: str | None = None
    # A short Slack-compatible JSON summary ({"text": ...}) is posted here after each report, with a link to it:
    # `link_url` (where the reports are served, e.g. https://ragpulse.example/report) or, unset, the file's path.
    webhook_url: str | None = None
    webhook_timeout_seconds: PositiveFloat = 10.0
    link_url: str | None = None


class ReportConfig(_Section):
    schedule: ReportSchedule = ReportSchedule()

    def validate(self) -> list[ConfigProblem]:
        schedule, where = self.schedule, "report.schedule"
        problems = []
        if not _CLOCK.match(schedule.at_utc):
            problems.append(ConfigProblem(f"{where}.at_utc", f"expected HH:MM (UTC, 00:00 to 23:59), got {schedule.at_utc!r}"))
        for option in ("prometheus_url", "webhook_url", "link_url"):
            value = getattr(schedule, option)
            if value is not None and not _URL.match(value):
                problems.append(ConfigProblem(f"{where}.{option}", f"expected an http:// or https:// URL, got {value!r}"))
        if schedule.webhook_url is not None and not (schedule.daily or schedule.weekly):
            problems.append(ConfigProblem(f"{where}.webhook_url", "is posted after a scheduled report: set daily or weekly"))
        if not schedule.directory.strip():
            problems.append(ConfigProblem(f"{where}.directory", "must name a directory"))
        return problems
