"""The sidecar under test: a real `ragpulse run` subprocess on free ports, and calls to it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.metrics import Samples, ScrapeRefused, parse_metrics
from helpers.net import HttpResult, free_port, http
from helpers.processes import check_running
from helpers.waiting import wait_until


def ragpulse_command() -> list[str]:
    exe = shutil.which("ragpulse", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "ragpulse"]


@dataclass
class RagpulseProcess:
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    otlp_port: int
    grpc_port: int
    host: str = "127.0.0.1"  # what every listener binds (http.host and otlp.host)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def post(self, path: str, body: bytes, headers: dict[str, str] | None = None) -> HttpResult:
        return http("POST", self.url + path, body, {"Content-Type": "application/json", **(headers or {})})

    def get(self, path: str, headers: dict[str, str] | None = None) -> HttpResult:
        return http("GET", self.url + path, None, headers)

    def metrics(self) -> Samples:
        response = http("GET", self.url + "/metrics")
        if response.status != 200:  # a refused scrape (503: Kafka offsets not committed), as Prometheus sees it
            raise ScrapeRefused(f"/metrics answered {response.status}: {response.body.decode()[:300]}")
        return parse_metrics(response.body.decode())

    def wait_processed(self, traces: int, feedback: int = 0) -> Samples:
        def done() -> bool:
            s = self.metrics()
            return (
                s.get_value("ragpulse_events_processed_total", type="trace") + s.total("ragpulse_events_duplicate_total", type="trace") >= traces
                and s.get_value("ragpulse_events_processed_total", type="feedback") + s.total("ragpulse_events_duplicate_total", type="feedback") >= feedback
                and s.get_value("ragpulse_queue_depth_events", queue="pipeline") == 0
            )

        wait_until(done, what=f"{traces} traces and {feedback} feedback processed")
        return self.metrics()

    def log_lines(self) -> list[dict[str, Any]]:
        lines = []
        for line in self.log_path.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        return lines

    def terminate(self, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)


def start_ragpulse(tmp_path: Path, *args: str, env: dict[str, str] | None = None, ready: bool = True,
                   host: str = "127.0.0.1") -> RagpulseProcess:
    """Start `ragpulse run` with every listener on `host`; wait for /readyz 200, or with ready=False only for
    /healthz (a source may be down)."""
    port, otlp_port, grpc_port = free_port(), free_port(), free_port()
    log_path = tmp_path / f"ragpulse-{port}.log"
    full_env = {**os.environ, "RAGPULSE_LOGGING__FORMAT": "json", **(env or {})}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*ragpulse_command(), "run", "--host", host, "--port", str(port),
             "--set", f"otlp.http_port={otlp_port}", "--set", f"otlp.grpc_port={grpc_port}",
             "--set", f"otlp.host={host}", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=tmp_path,  # files with default relative paths (the bad-case store) land here
        )
    instance = RagpulseProcess(port, process, log_path, otlp_port, grpc_port, host)

    def up() -> bool:
        check_running(process, log_path, "ragpulse")
        try:
            return http("GET", instance.url + ("/readyz" if ready else "/healthz")).status == 200
        except OSError:
            return False

    wait_until(up, what="ragpulse /readyz" if ready else "ragpulse /healthz")
    return instance


def is_ready(port: int) -> bool:
    """Whether the sidecar on `port` answers /readyz with 200 (False while nothing listens there yet)."""
    try:
        return http("GET", f"http://127.0.0.1:{port}/readyz").status == 200
    except OSError:
        return False


def start_demo(tmp_path: Path, port: int, *args: str) -> subprocess.Popen[bytes]:
    """Start `ragpulse demo` on `port` (its JSON log in tmp_path) and wait for /readyz 200. A demo that exits
    first fails the test at once with its log, where a wait on /readyz alone said only that it timed out."""
    log_path = tmp_path / f"demo-{port}.log"
    with log_path.open("wb") as log:
        demo = subprocess.Popen([*ragpulse_command(), "demo", "--host", "127.0.0.1", "--port", str(port), *args],
                                stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
                                env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"})

    def up() -> bool:
        check_running(demo, log_path, "ragpulse demo")
        return is_ready(port)

    try:  # a generous wait: the suite's three lanes share two cores
        wait_until(up, timeout=90, what=f"the demo's sidecar (its log: {log_path})")
    except AssertionError:
        demo.kill()
        demo.wait(30)
        raise AssertionError(f"the demo's sidecar was not ready in 90 s; its log:\n{log_path.read_text()[-4000:]}")
    return demo
