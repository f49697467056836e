"""A sidecar that instrumented apps (instrumented_apps.py) report to, each app run in its own process, with the fake
OpenAI server for the apps' LLM calls and the judge: test_instrumentations.py, test_agents.py and test_tool_agents.py
each keep one for the module (running_sidecar)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helpers.fake_openai import FakeOpenAI
from helpers.instrumented_apps import TESTS, app_command
from helpers.metrics import Samples
from helpers.sidecar import RagpulseProcess, start_ragpulse
from helpers.waiting import wait_until

from ragpulse._native import KeyFilter
from ragpulse.collector.events import TraceEvent
from ragpulse.sources.otlp.mapping import NotMapped, TraceMapper
from ragpulse.sources.otlp.spans import Span, decode_protobuf


@contextmanager
def running_sidecar(tmp: Path) -> Iterator[Sidecar]:
    """`ragpulse run` judging every trace (its records in a JSONL file), a short OTLP grace, and the fake OpenAI
    server the apps and the judge talk to."""
    results = tmp / "judgments.jsonl"
    with FakeOpenAI() as fake:
        rp = start_ragpulse(tmp, "--set", "otlp.grace_seconds=0.2", "--set", "judge.sample_rate=1.0",
                            "--set", f"results.jsonl_path={results}")
        try:
            yield Sidecar(rp, results, fake, tmp)
        finally:
            rp.terminate()


class Sidecar:
    def __init__(self, rp: RagpulseProcess, results: Path, fake: FakeOpenAI, tmp: Path) -> None:
        self.rp = rp
        self.results = results
        self.fake = fake
        self.tmp = tmp

    def records(self, app: str) -> list[dict[str, Any]]:
        if not self.results.exists():
            return []
        return [r for r in map(json.loads, self.results.read_text().splitlines()) if r["app"] == app]

    def metrics(self) -> Samples:
        return self.rp.metrics()

    def judged(self, app: str) -> dict[str, Any]:
        """The app's one judgment record, once written."""
        wait_until(lambda: len(self.records(app)) == 1, what=f"the {app} trace judged")
        return self.records(app)[0]

    def run(self, app: str, service: str, **env: str) -> tuple[TraceEvent | NotMapped, dict[str, Any]]:
        """Run an app in its own process; the mapping of its query's trace (its largest), and what it saw."""
        spans_file = self.tmp / f"{service}.pb"
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_SEMCONV", "OTEL_INSTRUMENTATION_GENAI"))}
        endpoint = f"http://127.0.0.1:{self.rp.otlp_port}/v1/traces"
        done = subprocess.run(app_command(app, service, endpoint, self.fake.base_url, str(spans_file)),
                              capture_output=True, text=True, timeout=180, cwd=TESTS,
                              env={**clean, "PYTHONPATH": str(TESTS), **env})
        assert done.returncode == 0, done.stderr
        body = spans_file.read_bytes()
        mapped = TraceMapper().map(largest_trace(decode_protobuf(body).spans))
        # The decoding keeps only the attributes the mapping reads (sources/otlp/keys.py): with all of them,
        # the mapping of this app's trace is the same.
        assert TraceMapper().map(largest_trace(decode_protobuf(body, KeyFilter(set(), [""])).spans)) == mapped
        return mapped, json.loads(done.stdout.splitlines()[-1])


def largest_trace(spans: list[Span]) -> list[Span]:
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    return max(by_trace.values(), key=len)


def labels(app: str, model: str = "unknown") -> dict[str, str]:
    return {"app": app, "route": "unknown", "model": model, "release": "1.0"}
