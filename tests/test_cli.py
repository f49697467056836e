"""The commands a newcomer types: --version, send, demo, schema, config example."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable

import ragpulse
from support import RagpulseProcess, free_port, ragpulse_command


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ragpulse_command(), *args], capture_output=True, text=True, timeout=timeout)


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"ragpulse {ragpulse.__version__}"


def test_send_pushes_exactly_count_events(ragpulse_factory: Callable[..., RagpulseProcess]) -> None:
    rp = ragpulse_factory()
    result = run("send", "--target", rp.url, "--count", "500", "--rate", "5000", "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sent 500 events: 500 accepted, 0 rejected, 0 requests retried"
    s = rp.metrics()
    received = s.total("ragpulse_events_received_total", source="http")
    assert received == 500
    traces = s.get_value("ragpulse_events_received_total", source="http", type="trace")
    rp.wait_processed(traces=int(traces), feedback=int(received - traces))
    assert rp.metrics().total("ragpulse_traces_total") == traces  # the generator never repeats a trace id


def test_demo_runs_the_sidecar_with_traffic_and_a_live_summary() -> None:
    port = free_port()
    result = run("demo", "--port", str(port), "--set", f"otlp.http_port={free_port()}", "--set", f"otlp.grpc_port={free_port()}", "--rate", "200", "--duration", "3", "--summary-every", "1", "--seed", "1",
                 "--log-level", "warning")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "traces" in line]
    assert len(lines) >= 3
    last = re.search(r"traces\s+(\d+) .* fallback\s+([\d.]+)%", lines[-1])
    assert last is not None, lines[-1]
    assert 300 <= int(last[1]) <= 700  # about 3 s x 200 events/s, less the feedback share
    assert 2.0 <= float(last[2]) <= 20.0  # 8% fallback share by default


def test_schema_and_example_commands() -> None:
    schema = json.loads(run("schema", "feedback").stdout)
    assert schema["title"] == "ragpulse feedback event, v1"
    example = run("config", "example").stdout
    assert example.startswith("# ragpulse configuration: every option")
