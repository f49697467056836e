"""The commands a newcomer types: --version, send, demo, schema, config example."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
from helpers.events import ndjson, trace
from helpers.net import free_port
from helpers.sidecar import RagpulseProcess, ragpulse_command
from helpers.waiting import wait_until_async
from prometheus_client import CollectorRegistry

import ragpulse
from ragpulse.app.cli.run import LiveSummary
from ragpulse.app.service import Service
from ragpulse.config import parse_config
from ragpulse.results import badcases


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
    started = time.monotonic()
    result = run("demo", "--port", str(port), "--set", f"otlp.http_port={free_port()}", "--set",
                 f"otlp.grpc_port={free_port()}", "--rate", "200", "--duration", "3", "--summary-every", "1", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started >= 3
    # Not a terminal: no log lines on either stream at the demo's default level (a merged 2>&1 reads alone).
    assert result.stderr == ""
    lines = [line for line in result.stdout.splitlines() if "traces" in line]
    # --duration exact, the last periodic summary kept: 1 s, 2 s, 3 s, then the whole run's.
    assert [line[:8] for line in lines] == ["[    1s]", "[    2s]", "[    3s]", "[ final]"]
    last = re.search(r"traces\s+(\d+) .* fallback\s+([\d.]+)%", lines[-1])
    assert last is not None, lines[-1]
    assert 300 <= int(last[1]) <= 700  # about 3 s x 200 events/s, less the feedback share
    assert 2.0 <= float(last[2]) <= 20.0  # 8% fallback share by default
    # Compact: every line fits a terminal; the last block is the whole run's, printed once, at its mean rate.
    summary = [line for line in result.stdout.splitlines() if line.startswith("[") or line.startswith(" " * 9)]
    assert summary and max(map(len, summary)) <= 100, max(summary, key=len)
    assert lines[-1].startswith("[ final] traces") and "(0.0/s)" not in lines[-1]
    assert sum(1 for line in lines if line.startswith("[ final]")) == 1
    assert re.search(r"\+ \d+ feedback", lines[-1])


def test_the_summary_counts_judged_traces_and_bad_cases_as_the_metrics_and_the_store_hold_them(tmp_path: Path) -> None:
    """An answer judged in the sample and again on a thumbs down is one trace, two judgments, one stored bad case:
    the summary says so, where it once printed "judged 4 · bad cases 3" for 3 traces and 2 stored bad cases."""
    store = tmp_path / "b.sqlite3"
    config = parse_config({"http": {"host": "127.0.0.1", "port": 0}, "otlp": {"enabled": False},
                           "judge": {"sample_rate": 1.0}, "results": {"sqlite_path": str(store)}})
    chunks = [{"id": "kb-returns", "text": "Returns are accepted within 30 days of delivery. Refunds are paid to the "
                                           "original card."}]
    question = "How long do I have to return shoes?"
    sorry = "I'm sorry, I couldn't find any information about that."

    async def main() -> str:
        service = Service(config, CollectorRegistry())
        await service.start()
        summary = LiveSummary(service)

        def judged(priority: str) -> float:
            return service.registry.get_sample_value("ragpulse_judge_judged_total", {"priority": priority}) or 0.0

        async with aiohttp.ClientSession(f"http://127.0.0.1:{service.port}") as http:
            events = [trace("wrong", query=question, chunks=chunks, answer="You can return them within 90 days of delivery."),
                      trace("fine", query=question, chunks=chunks, answer="You can return them within 30 days of delivery."),
                      trace("nothing", query="Is there a warranty?", chunks=[], answer=sorry)]
            assert (await (await http.post("/v1/events", data=ndjson(events))).json())["accepted"] == 3
            await wait_until_async(lambda: judged("base_rate") == 3, what="the 3 traces judged in the sample")
            thumbs_down = {"type": "feedback", "trace_id": "wrong", "kind": "thumbs", "value": "down"}
            assert (await (await http.post("/v1/events", data=ndjson([thumbs_down]))).json())["accepted"] == 1
            await wait_until_async(lambda: judged("negative_feedback") == 1, what="the complaint's answer judged")
        await service.shutdown()  # as the demo does before its final summary: the store has every write
        assert service.registry.get_sample_value("ragpulse_badcases_total", {  # the verdicts: "wrong" twice
            "app": "shop", "route": "returns", "model": "m1", "release": "r1", "sample": "feedback", "stage": "generation"}) == 1
        return summary.text(final=True)

    lines = asyncio.run(main()).splitlines()
    assert lines[0].startswith("[ final] traces 3 (") and "+ 1 feedback" in lines[0], lines[0]
    assert lines[1].endswith(" · queue 0 · judged 3 sampled + 1 on feedback"), lines[1]
    assert lines[2] == " " * 9 + "bad cases 2 stored · hallucination (local judge, uncalibrated):"
    db = badcases.connect(store)
    assert sorted(r["trace_id"] for r in badcases.query(db)) == ["nothing", "wrong"]  # what `badcases list` shows


def test_demo_flags_say_what_they_do_and_their_defaults() -> None:
    result = run("demo", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "share of answers that change a fact of their chunks (default 0.05)" in text
    assert "share of questions the knowledge base cannot answer (default 0.08)" in text
    assert "events per second: traces and the feedback on them (default 20)" in text
    assert "rephrase_after_bad=0.4" in text
    assert "live summary period (default 5)" in text
    assert "listen address (http.host; default 127.0.0.1, loopback only in the demo)" in text
    assert "logging.level (default warning in the demo" in text
    bad = run("demo", "--react", "rephrase_after_bad=2", "--duration", "1")
    assert bad.returncode == 2 and "rephrase_after_bad: '2' is not a share between 0 and 1" in bad.stderr


def listening_addresses(ports: set[int]) -> set[str]:
    """The addresses of the listening TCP sockets on `ports`, from /proc/net/tcp and tcp6."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port = local.rsplit(":", 1)
            if state == "0A" and int(port, 16) in ports:  # 0A: LISTEN
                found.add(address)
    return found


def test_the_demo_listens_on_loopback_only() -> None:
    port, otlp, grpc = free_port(), free_port(), free_port()
    demo = subprocess.Popen([*ragpulse_command(), "demo", "--port", str(port), "--set", f"otlp.http_port={otlp}",
                             "--set", f"otlp.grpc_port={grpc}", "--rate", "10", "--log-level", "warning"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert demo.stdout is not None
        first = demo.stdout.readline()
        assert f"on 127.0.0.1:{port}" in first and f"OTLP on 127.0.0.1:{otlp} (HTTP) and :{grpc} (gRPC)" in first, first
        # 127.0.0.1, as IPv4 or as the IPv6-mapped ::ffff:127.0.0.1 gRPC binds: nothing on 0.0.0.0 or ::
        assert listening_addresses({port, otlp, grpc}) <= {"0100007F", "0000000000000000FFFF00000100007F"}
        assert "0100007F" in listening_addresses({port})
    finally:
        demo.send_signal(signal.SIGINT)
        demo.wait(timeout=30)


def test_a_second_sidecar_cannot_share_a_busy_grpc_port(ragpulse_factory: Callable[..., RagpulseProcess]) -> None:
    """gRPC's SO_REUSEPORT would let both listen and split the traffic: the second must fail like on HTTP."""
    first = ragpulse_factory()
    result = subprocess.run([*ragpulse_command(), "run", "--host", "127.0.0.1", "--port", str(free_port()),
                             "--set", "otlp.host=127.0.0.1", "--set", f"otlp.http_port={free_port()}",
                             "--set", f"otlp.grpc_port={first.grpc_port}"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"cannot listen for OTLP/gRPC on 127.0.0.1:{first.grpc_port} (otlp.grpc_port, or otlp.grpc_enabled=false)" in result.stderr
    assert "Traceback" not in result.stderr


def test_schema_and_example_commands() -> None:
    schema = json.loads(run("schema", "feedback").stdout)
    assert schema["title"] == "ragpulse feedback event, v1"
    example = run("config", "example").stdout
    assert example.startswith("# ragpulse configuration: every option")


def test_send_names_what_is_wrong_with_its_target_instead_of_a_traceback() -> None:
    port = free_port()
    cases = [
        (f"localhost:{port}", 2, "give the sidecar's URL with its scheme, e.g. http://127.0.0.1:8080"),
        (f"http://127.0.0.1:{port}/v1/events", 2, "give the sidecar's base URL without a path"),
        (f"http://127.0.0.1:{port}", 1, f"cannot reach the sidecar at http://127.0.0.1:{port}"),
    ]
    for target, code, message in cases:
        result = run("send", "--target", target, "--count", "5")
        assert result.returncode == code, (target, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr, (target, result.stderr)


def test_output_into_a_pipe_that_closes_early_ends_quietly() -> None:
    """`ragpulse config example | head -5`: the reader is gone before ragpulse writes (its end of the pipe is
    closed first, so the write fails every time); no BrokenPipeError traceback, exit 0."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([*ragpulse_command(), "config", "example"], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
