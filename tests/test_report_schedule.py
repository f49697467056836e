"""The scheduled report: when it is due, the files it writes and keeps, the webhook's summary against a local
receiver (sent, failed when the receiver is down, dropped past the queue), GET /report behind the API's token."""

from __future__ import annotations

import asyncio
import calendar
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from helpers.net import free_port
from helpers.report_data import MINUTES, START, fill
from helpers.sidecar import start_ragpulse
from prometheus_client import CollectorRegistry

from ragpulse.config import CalibrationConfig, ReportSchedule, parse_config
from ragpulse.errors import ConfigError
from ragpulse.report.schedule import MAX_PENDING, ReportScheduler, next_due

END = START + MINUTES * 60


def utc(text: str) -> float:
    return float(calendar.timegm(tuple(map(int, text.replace("T", "-").replace(":", "-").split("-"))) + (0,)))


@pytest.mark.unit
def test_when_a_report_is_due() -> None:
    saturday = utc("2026-12-05T20:00")
    assert next_due("daily", saturday, "06:00", "monday") == utc("2026-12-06T06:00")
    assert next_due("weekly", saturday, "06:00", "monday") == utc("2026-12-07T06:00")
    assert next_due("weekly", saturday, "21:30", "saturday") == utc("2026-12-05T21:30")
    assert next_due("daily", utc("2026-12-06T06:00"), "06:00", "monday") == utc("2026-12-07T06:00")  # due now: the next
    assert next_due("weekly", utc("2026-12-07T06:00"), "06:00", "monday") == utc("2026-12-14T06:00")


@pytest.mark.unit
def test_the_schedules_config_checks() -> None:
    def problems(data: dict[str, Any]) -> list[str]:
        with pytest.raises(ConfigError) as refused:
            parse_config(data)
        return [str(p) for p in refused.value.problems]

    assert problems({"report": {"schedule": {"at_utc": "6am", "webhook_url": "hooks.example/x", "prometheus_url": "ftp://p"}}}) == [
        "report.schedule.at_utc: expected HH:MM (UTC, 00:00 to 23:59), got '6am'",
        "report.schedule.prometheus_url: expected an http:// or https:// URL, got 'ftp://p'",
        "report.schedule.webhook_url: expected an http:// or https:// URL, got 'hooks.example/x'",
        "report.schedule.webhook_url: is posted after a scheduled report: set daily or weekly"]
    assert problems({"report": {"schedule": {"daily": True}}, "results": {"sqlite_path": None}}) == ["report.schedule: a scheduled report reads the result store: results.sqlite_path "
                                     "must not be null"]


class Receiver:
    """A local webhook receiver (Slack's incoming webhook answers 200 "ok")."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.port = free_port()

    async def __aenter__(self) -> Receiver:
        async def hook(request: web.Request) -> web.Response:
            self.received.append(await request.json())
            return web.Response(text="ok")

        app = web.Application()
        app.add_routes([web.post("/hook", hook)])
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()


def test_scheduled_reports_are_written_kept_and_posted_and_failures_counted(tmp_path: Path) -> None:
    filled = fill(tmp_path)
    registry = CollectorRegistry()

    def counted(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    async def scenario() -> None:
        async with Receiver() as receiver:
            options = ReportSchedule(daily=True, directory=str(tmp_path / "reports"), keep=2,
                                     webhook_url=f"http://127.0.0.1:{receiver.port}/hook",
                                     link_url="https://ragpulse.example/report")
            scheduler = ReportScheduler(options, str(filled.path), CalibrationConfig(), registry, clock=lambda: END)
            scheduler.start()
            for hours in (2, 1, 0):  # three days' reports (newest first), the same hour of data each
                await scheduler.run("daily", END + hours * 86400 - 86400 * 2)
            while counted("ragpulse_report_webhook_total", outcome="sent") != 3:
                await asyncio.sleep(0.01)  # the poster's turn on the loop: no wall-clock wait
            assert [r["text"].splitlines()[0] for r in receiver.received] == [
                "ragpulse daily quality report, 2026-11-29 02:00 to 2026-11-30 02:00 UTC",
                "ragpulse daily quality report, 2026-11-28 02:00 to 2026-11-29 02:00 UTC",
                "ragpulse daily quality report, 2026-11-27 02:00 to 2026-11-28 02:00 UTC"]
            first = receiver.received[0]["text"].splitlines()
            assert first[1].startswith("• Release r2 against r1: hallucination worse")
            assert first[-1] == "https://ragpulse.example/report?name=report-daily-2026-11-30T0200Z.html"
            await scheduler.stop()
        assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == [  # keep 2: the oldest period went
            "latest.html", "report-daily-2026-11-29T0200Z.html", "report-daily-2026-11-30T0200Z.html"]
        assert counted("ragpulse_report_runs_total", kind="daily", outcome="written") == 3
        # The receiver is gone: the post fails, counted, not retried; past MAX_PENDING waiting, summaries are dropped.
        scheduler = ReportScheduler(options, str(filled.path), CalibrationConfig(), registry, clock=lambda: END)
        for _ in range(MAX_PENDING + 1):
            scheduler.notify("a summary")
        assert counted("ragpulse_report_webhook_total", outcome="dropped") == 1
        scheduler.start()
        while counted("ragpulse_report_webhook_total", outcome="failed") != MAX_PENDING:
            await asyncio.sleep(0.01)
        await scheduler.stop()
        assert counted("ragpulse_report_webhook_total", outcome="sent") == 3

    asyncio.run(scenario())


def test_get_report_serves_the_latest_behind_the_api_token(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "latest.html").write_text("<!DOCTYPE html><title>latest</title>", encoding="utf-8")
    (reports / "report-daily-2026-11-30T0200Z.html").write_text("<!DOCTYPE html><title>kept</title>", encoding="utf-8")
    rp = start_ragpulse(tmp_path, "--set", f"report.schedule.directory={reports}", "--set", "http.api_token=s3cret")
    try:
        assert rp.get("/report").status == 401
        token = {"Authorization": "Bearer s3cret"}
        latest = rp.get("/report", token)
        assert (latest.status, latest.headers["Content-Type"], latest.body) == (
            200, "text/html; charset=utf-8", b"<!DOCTYPE html><title>latest</title>")
        assert rp.get("/report?name=report-daily-2026-11-30T0200Z.html", token).body == b"<!DOCTYPE html><title>kept</title>"
        refused = rp.get("/report?name=../store.sqlite3", token)
        assert (refused.status, json.loads(refused.body)["parameter"]) == (400, "name")
        assert rp.get("/report?name=report-weekly-2026-11-30T0200Z.html", token).status == 404
    finally:
        rp.terminate()
