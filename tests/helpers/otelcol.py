"""A real OpenTelemetry Collector for the interop tests: bench/otelcol's build (the Collector Builder, one
release), its OTLP receiver on free ports, log records printed by the debug exporter and metrics served by
the Prometheus exporter; and a reader of what the debug exporter printed."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from helpers.metrics import Samples, parse_metrics
from helpers.net import free_port, http
from helpers.processes import check_running, script_stdout, stop_process
from helpers.waiting import wait_until

BUILD = Path(__file__).resolve().parents[2] / "bench" / "otelcol" / "build.sh"


def collector_binary() -> str:
    return script_stdout(["bash", str(BUILD)], timeout=1_200)


@dataclass
class LogRecord:
    event_name: str
    trace_id: str
    span_id: str
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass
class Collector:
    binary: str
    tmp_path: Path
    grpc_port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def output(self) -> Path:
        return self.tmp_path / "otelcol.out"

    def start(self, config: dict[str, object] | None = None) -> None:
        """With the interop tests' pipelines unless `config` is given (its receiver on this instance's ports)."""
        config = config or {
            "receivers": self.receivers(),
            "exporters": {"debug": {"verbosity": "detailed"},
                          "prometheus": {"endpoint": f"127.0.0.1:{self.metrics_port}", "resource_to_telemetry_conversion":
                                         {"enabled": False}}},
            "service": {"pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["debug"]},
                                      "metrics": {"receivers": ["otlp"], "exporters": ["prometheus"]}},
                        "telemetry": {"metrics": {"level": "none"}}},
        }
        path = self.tmp_path / "otelcol.json"
        path.write_text(json.dumps(config))
        with self.output.open("ab") as out:
            self.process = subprocess.Popen([self.binary, f"--config={path}"], stdout=out, stderr=subprocess.STDOUT)
        wait_until(self._up, timeout=30, what="the Collector's OTLP receiver")

    def _up(self) -> bool:
        """The OTLP/HTTP receiver accepts connections (the Collector starts its receivers last)."""
        assert self.process is not None
        check_running(self.process, self.output, "the Collector")
        try:
            socket.create_connection(("127.0.0.1", self.http_port), timeout=1).close()
            return True
        except OSError:
            return False

    def receivers(self) -> dict[str, object]:
        return {"otlp": {"protocols": {"grpc": {"endpoint": f"127.0.0.1:{self.grpc_port}"},
                                       "http": {"endpoint": f"127.0.0.1:{self.http_port}"}}}}

    def stop(self) -> None:
        stop_process(self.process)

    def metrics(self) -> Samples:
        return parse_metrics(http("GET", f"http://127.0.0.1:{self.metrics_port}/metrics").body.decode())

    def log_records(self) -> list[LogRecord]:
        return parse_debug_logs(self.output.read_text())


_FIELD = re.compile(r"^(EventName|Trace ID|Span ID): ?(.*)$")
_ATTRIBUTE = re.compile(r"^\s+-> ([\w.]+): (\w+)\((.*)$")
_HEADER = re.compile(r"^(\w[\w ]*:|\s+-> [\w.]+: \w+\(|ResourceLog #|ScopeLogs #|LogRecord #|\S+\t)")


def parse_debug_logs(text: str) -> list[LogRecord]:
    """The log records the debug exporter printed at verbosity detailed (one block each, from "LogRecord #");
    an attribute's text may run over several lines."""
    records = []
    for block in text.split("LogRecord #")[1:]:
        lines = block.splitlines()[1:]
        fields: dict[str, str] = {}
        attributes: dict[str, str] = {}
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            if line.startswith(("ResourceLog #", "ScopeLogs #")) or "\t" in line:
                break
            if (match := _FIELD.match(line)) is not None:
                fields[match[1]] = match[2].strip()
            elif (match := _ATTRIBUTE.match(line)) is not None:
                value = match[3]
                while index < len(lines) and not _HEADER.match(lines[index]):
                    value += "\n" + lines[index]
                    index += 1
                attributes[match[1]] = value.removesuffix(")")
        records.append(LogRecord(fields.get("EventName", ""), fields.get("Trace ID", ""), fields.get("Span ID", ""),
                                 attributes))
    return records
