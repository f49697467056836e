"""The real Prometheus and Alertmanager (Debian's packages, scripts/tools.sh), and a webhook receiver for the alerts
Alertmanager sends."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from helpers.net import free_port, http
from helpers.processes import check_running, stop_process
from helpers.waiting import wait_until


@dataclass
class PrometheusProcess:
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result vector; fails on a PromQL error."""
        answer = http("GET", self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        payload = answer.json()
        assert answer.status == 200 and payload["status"] == "success", f"{expr}: {payload}"
        return payload["data"]["result"]

    def value(self, expr: str, **labels: str) -> float | None:
        """The value of the one sample of `expr` whose labels include `labels`, or None when there is none."""
        found = [float(r["value"][1]) for r in self.query(expr) if labels.items() <= r["metric"].items()]
        assert len(found) <= 1, f"{expr} {labels}: {found}"
        return found[0] if found else None

    def stop(self) -> None:
        stop_process(self.process)


def start_prometheus(tmp_path: Path, targets: list[str], rule_files: list[Path], *, scrape_interval: str = "1s",
                     evaluation_interval: str = "1s", alertmanager: str | None = None) -> PrometheusProcess:
    """A real Prometheus scraping `targets` (host:port) as job "ragpulse", evaluating `rule_files` and
    sending alerts to `alertmanager` (host:port) when given, on a free port."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: scripts/test installs it (scripts/tools.sh)"
    port = free_port()
    config = tmp_path / f"prometheus-{port}.yml"
    settings: dict[str, Any] = {
        "global": {"scrape_interval": scrape_interval, "evaluation_interval": evaluation_interval},
        "rule_files": [str(path) for path in rule_files],
        "scrape_configs": [{"job_name": "ragpulse", "static_configs": [{"targets": targets}]}],
    }
    if alertmanager:
        settings["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]}
    config.write_text(json.dumps(settings))
    log_path = tmp_path / f"prometheus-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / f'tsdb-{port}'}",
             f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    instance = PrometheusProcess(port, process, log_path)

    def ready() -> bool:
        check_running(process, log_path, "prometheus")
        try:
            return http("GET", instance.url + "/-/ready").status == 200
        except OSError:
            return False

    wait_until(ready, timeout=30, what="prometheus /-/ready")
    return instance


def start_alertmanager(tmp_path: Path, webhook_url: str) -> tuple[subprocess.Popen[bytes], int]:
    """A real Alertmanager (Debian's prometheus-alertmanager) that sends every alert to `webhook_url` at once."""
    binary = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    assert binary, "alertmanager is missing: scripts/test installs it (scripts/tools.sh)"
    port = free_port()
    config = tmp_path / f"alertmanager-{port}.yml"
    config.write_text(json.dumps({
        "route": {"receiver": "test", "group_by": ["alertname", "app"], "group_wait": "1s", "group_interval": "1s",
                  "repeat_interval": "1h"},
        "receivers": [{"name": "test", "webhook_configs": [{"url": webhook_url, "send_resolved": False}]}],
    }))
    log_path = tmp_path / f"alertmanager-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.path={tmp_path / f'am-{port}'}",
             f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="], stdout=log, stderr=subprocess.STDOUT)

    def ready() -> bool:
        check_running(process, log_path, "alertmanager")
        try:
            return http("GET", f"http://127.0.0.1:{port}/-/ready").status == 200
        except OSError:
            return False

    wait_until(ready, timeout=30, what="alertmanager /-/ready")
    return process, port


class Webhook:
    """Alertmanager's webhook receiver: keeps every notification's alerts."""

    def __init__(self) -> None:
        self.alerts: list[dict[str, Any]] = []
        received = self.alerts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server interface
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                received.extend(body["alerts"])
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/alerts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def names(self) -> set[str]:
        return {alert["labels"]["alertname"] for alert in list(self.alerts)}

    def close(self) -> None:
        self.server.shutdown()
