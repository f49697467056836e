"""The scheduled report inside `ragpulse run` (report.schedule): the daily and weekly reports written to a
directory (latest.html is what GET /report serves), the oldest deleted past `keep`, and a short Slack-compatible
summary with a link posted to a webhook.

Like every output, the webhook is bounded and counted: summaries wait in a queue of MAX_PENDING (a summary is a
few hundred bytes, cut at MAX_TEXT characters), one post at a time, each within its timeout; a summary that finds
the queue full is dropped, a post that fails (an error, a timeout, an answer other than 2xx) is not retried.
"""

from __future__ import annotations

import asyncio
import calendar
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.telemetry.shared import shared
from ragpulse.config import CalibrationConfig, ReportSchedule
from ragpulse.report import build, output
from ragpulse.report.http import LATEST

log = structlog.get_logger("ragpulse.report")
KINDS = {"daily": 86400.0, "weekly": 7 * 86400.0}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MAX_PENDING = 4
MAX_TEXT = 3000


class ReportMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.reports = Counter("ragpulse_report_runs_total", "Scheduled reports (report.schedule), by kind (daily, "
                               "weekly) and outcome (written, failed).", ["kind", "outcome"], registry=registry)
        self.webhook = Counter("ragpulse_report_webhook_total", "Report summaries for report.schedule.webhook_url, by "
                               "outcome: sent (a 2xx answer), failed (an error, a timeout or another status; not "
                               "retried), dropped (the queue of summaries waiting was full).", ["outcome"],
                               registry=registry)
        self.last_written = Gauge("ragpulse_report_last_written_timestamp_seconds",
                                  "When the last scheduled report of a kind was written.", ["kind"], registry=registry)
        for kind in KINDS:
            for outcome in ("written", "failed"):
                self.reports.labels(kind, outcome)
        for outcome in ("sent", "failed", "dropped"):
            self.webhook.labels(outcome)


def next_due(kind: str, now: float, at_utc: str, weekday: str) -> float:
    """The first time after `now` at `at_utc` (on `weekday` for a weekly report)."""
    hours, minutes = map(int, at_utc.split(":"))
    day = time.gmtime(now)
    due = calendar.timegm((day.tm_year, day.tm_mon, day.tm_mday, hours, minutes, 0)) * 1.0
    if kind == "weekly":
        due += ((WEEKDAYS.index(weekday) - day.tm_wday) % 7) * 86400.0
    while due <= now:
        due += KINDS[kind]
    return due


def summary_text(kind: str, found: dict[str, Any], link: str) -> str:
    """The webhook's text: the report's period, its summary lines and the link, at most MAX_TEXT characters."""
    period = f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime(found['since']))} to " \
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(found['until']))}"
    text = "\n".join([f"ragpulse {kind} quality report, {period}", *(f"• {line}" for line in found["summary"])])
    tail = f"\n{link}"
    return (text if len(text) + len(tail) <= MAX_TEXT else text[: MAX_TEXT - len(tail) - 1] + "…") + tail


class ReportScheduler:
    def __init__(self, options: ReportSchedule, db_path: str, calibration: CalibrationConfig, registry: CollectorRegistry,
                 *, probes_path: str | None = None, clock: Callable[[], float] = time.time) -> None:
        self._options, self._db_path, self._calibration = options, db_path, calibration
        self._probes_path, self._clock = probes_path, clock
        self._metrics = shared(registry, ReportMetrics)
        self._posts: asyncio.Queue[str] = asyncio.Queue(MAX_PENDING)
        self._tasks: list[asyncio.Task[None]] = []
        self._one_at_a_time = asyncio.Lock()  # a Monday's daily and weekly reports: matplotlib's state is global
        self.directory = Path(options.directory)

    def start(self) -> None:
        kinds = [kind for kind in KINDS if getattr(self._options, kind)]
        self._tasks = [asyncio.create_task(self._loop(kind), name=f"ragpulse-report-{kind}") for kind in kinds]
        if self._options.webhook_url is not None:
            self._tasks.append(asyncio.create_task(self._post_loop(self._options.webhook_url), name="ragpulse-report-webhook"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _loop(self, kind: str) -> None:
        while True:
            due = next_due(kind, self._clock(), self._options.at_utc, self._options.weekday)
            await asyncio.sleep(max(0.0, due - self._clock()))
            await self.run(kind, due)

    async def run(self, kind: str, until: float) -> Path | None:
        """Writes the report of the `kind` period ending at `until`, then queues its summary for the webhook."""
        request = build.Request(self._db_path, until - KINDS[kind], until, cases=self._options.cases,
                                probes_path=self._probes_path, prometheus_url=self._options.prometheus_url)
        try:
            async with self._one_at_a_time:
                path, found = await asyncio.to_thread(self._write, kind, request)
        except Exception:  # a failed report is counted and logged; the next one tries again
            self._metrics.reports.labels(kind, "failed").inc()
            log.exception("scheduled report failed", kind=kind)
            return None
        self._metrics.reports.labels(kind, "written").inc()
        self._metrics.last_written.labels(kind).set(self._clock())
        log.info("scheduled report written", kind=kind, path=str(path))
        if self._options.webhook_url is not None:
            self.notify(summary_text(kind, found, self._link(path)))
        return path

    def _write(self, kind: str, request: build.Request) -> tuple[Path, dict[str, Any]]:
        html, found = output.render(request, self._calibration, now=self._clock())
        path = self.directory / output.file_name(kind, request.until)
        output.write(path, html)
        output.write(self.directory / LATEST, html)
        for stale in sorted(self.directory.glob("report-*.html"))[: -self._options.keep]:
            stale.unlink(missing_ok=True)
        return path, found

    def _link(self, path: Path) -> str:
        base = self._options.link_url
        return str(path.resolve()) if base is None else f"{base.rstrip('/')}?name={path.name}"

    def notify(self, text: str) -> None:
        try:
            self._posts.put_nowait(text)
        except asyncio.QueueFull:
            self._metrics.webhook.labels("dropped").inc()

    async def _post_loop(self, url: str) -> None:
        timeout = aiohttp.ClientTimeout(total=self._options.webhook_timeout_seconds)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                text = await self._posts.get()
                try:
                    async with session.post(url, json={"text": text}) as answer:
                        outcome = "sent" if 200 <= answer.status < 300 else "failed"
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    outcome = "failed"
                    log.warning("report webhook failed", error=f"{type(exc).__name__}: {exc}")
                self._metrics.webhook.labels(outcome).inc()
