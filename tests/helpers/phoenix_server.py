"""A real Arize Phoenix server for the interop tests, from a virtualenv of its own (scripts/phoenix.sh makes it
once and caches it, so its pins never meet ragpulse's), on loopback with its own SQLite database; and
readers of its REST API."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.net import free_port, http
from helpers.processes import check_running, script_stdout, stop_process
from helpers.waiting import wait_until

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "phoenix.sh"


def phoenix_python() -> str:
    return script_stdout(["bash", str(SCRIPT), "venv"], timeout=900)


@dataclass
class Phoenix:
    python: str
    workdir: Path
    port: int = field(default_factory=free_port)
    grpc_port: int = field(default_factory=free_port)  # Phoenix always binds its OTLP gRPC port: a free one
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))},
               "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(self.port), "PHOENIX_GRPC_PORT": str(self.grpc_port),
               "PHOENIX_WORKING_DIR": str(self.workdir),
               "PHOENIX_SQL_DATABASE_URL": f"sqlite:///{self.workdir / 'phoenix.db'}",
               # Quiet and offline: no migration SQL in the log, no telemetry, no downloads.
               "PHOENIX_LOG_MIGRATIONS": "false", "PHOENIX_TELEMETRY_ENABLED": "false",
               "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false"}
        with (self.workdir / "phoenix.log").open("ab") as log:
            self.process = subprocess.Popen([self.python, "-m", "phoenix.server.main", "serve"], stdout=log,
                                            stderr=subprocess.STDOUT, env=env, cwd=self.workdir)
        wait_until(self._ready, timeout=90, what="Phoenix /readyz")

    def _ready(self) -> bool:
        assert self.process is not None
        check_running(self.process, self.workdir / "phoenix.log", "Phoenix")
        try:
            return http("GET", self.url + "/readyz").status == 200
        except OSError:
            return False

    def stop(self) -> None:
        stop_process(self.process)

    def get(self, path: str, **query: Any) -> tuple[int, Any]:
        params = [(key, item) for key, value in query.items() for item in (value if isinstance(value, list) else [value])]
        answer = http("GET", self.url + path + ("?" + urllib.parse.urlencode(params) if params else ""))
        body = answer.body.decode()
        return answer.status, json.loads(body) if body.startswith(("{", "[")) else body

    def spans(self, project: str, trace_id: str) -> list[dict[str, Any]]:
        status, body = self.get(f"/v1/projects/{project}/spans", trace_id=trace_id, limit=1000)
        return body["data"] if status == 200 else []

    def span_annotations(self, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
        status, body = self.get(f"/v1/projects/{project}/span_annotations", span_ids=span_ids, limit=1000)
        assert status in (200, 404), body  # 404: none of the spans is in the project (yet)
        return body["data"] if status == 200 else []
