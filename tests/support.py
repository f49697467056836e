"""Test helpers: a real `ragpulse run` subprocess, HTTP calls, metric lookups, event builders, time under
the test's control (a manual clock, an event loop in virtual time), a process's memory."""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class HttpResult:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def http(method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> HttpResult:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return HttpResult(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as exc:
        return HttpResult(exc.code, dict(exc.headers), exc.read())


def wait_until(check: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


async def wait_until_async(check: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    """wait_until inside an event loop: the loop's other tasks (and their I/O) go on while it waits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


# -- time under the test's control ------------------------------------------------------------

class Clock:
    """A clock that moves only when the test moves it (`clock.now += 60`): give it to what takes a `clock`."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop in virtual time: when every task waits, the clock jumps to the next timer instead of
    sleeping, so `asyncio.sleep(60)` takes no wall time and timers fire in exactly their order. Its `time`
    is the clock to give components that date with a clock and wait with asyncio (they then agree).
    For code without I/O: a socket or a thread would see the virtual jumps as real waits."""

    def __init__(self) -> None:
        self._now = 0.0
        loop = self

        class Selector(selectors.DefaultSelector):  # type: ignore[misc, valid-type]
            def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
                if timeout is None:  # no timer is due: only another thread can wake the loop
                    ready = super().select(30.0)
                    if not ready:
                        raise RuntimeError("virtual time: every task waits and no timer is set (a deadlock)")
                    return ready
                loop._now += timeout
                return super().select(0)

        super().__init__(Selector())

    def time(self) -> float:
        return self._now


def run_in_virtual_time(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(main) on a VirtualTimeLoop, which starts at 0.0; inside, the clock is
    `asyncio.get_running_loop().time`."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)


def script_stdout(args: list[str], timeout: float) -> str:
    """What a set-up script (a cached build or virtualenv) prints; its stderr's end when it fails."""
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stderr[-3000:]}"
    return done.stdout.strip()


def check_running(process: subprocess.Popen[bytes], log_path: Path, name: str) -> None:
    """Fails, with the end of its log, when a server the test started has exited."""
    if process.poll() is not None:
        raise AssertionError(f"{name} exited with {process.returncode}:\n{log_path.read_text()}")


def stop_process(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait(30)


def rss_bytes(pid: int) -> int:
    """The resident memory of process `pid` (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


class ScrapeRefused(OSError):
    """A /metrics answer that is not 200: Prometheus records no sample for it and scrapes again."""


class Samples(dict[tuple[str, frozenset[tuple[str, str]]], float]):
    def get_value(self, name: str, **labels: str) -> float:
        """The sample's value, or 0.0 when the series does not exist (yet)."""
        return self.get((name, frozenset(labels.items())), 0.0)

    def total(self, name: str, **labels: str) -> float:
        """Sum over every series of `name` whose labels include `labels`."""
        wanted = set(labels.items())
        return sum(v for (n, lbls), v in self.items() if n == name and wanted <= lbls)


def parse_metrics(text: str) -> Samples:
    samples = Samples()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


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

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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


def start_ragpulse(tmp_path: Path, *args: str, env: dict[str, str] | None = None, ready: bool = True) -> RagpulseProcess:
    """Start `ragpulse run`; wait for /readyz 200, or with ready=False only for /healthz (a source may be down)."""
    port, otlp_port, grpc_port = free_port(), free_port(), free_port()
    log_path = tmp_path / f"ragpulse-{port}.log"
    full_env = {**os.environ, "RAGPULSE_LOGGING__FORMAT": "json", **(env or {})}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*ragpulse_command(), "run", "--host", "127.0.0.1", "--port", str(port),
             "--set", f"otlp.http_port={otlp_port}", "--set", f"otlp.grpc_port={grpc_port}",
             "--set", "otlp.host=127.0.0.1", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=tmp_path,  # files with default relative paths (the bad-case store) land here
        )
    instance = RagpulseProcess(port, process, log_path, otlp_port, grpc_port)

    def up() -> bool:
        check_running(process, log_path, "ragpulse")
        try:
            return http("GET", instance.url + ("/readyz" if ready else "/healthz")).status == 200
        except OSError:
            return False

    wait_until(up, what="ragpulse /readyz" if ready else "ragpulse /healthz")
    return instance

def trace(trace_id: str, **fields: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "trace", "trace_id": trace_id, "query": "How do I return shoes?",
                             "answer": "Return them within 30 days.", "app": "shop", "route": "returns",
                             "model": "m1", "release": "r1"}
    event.update(fields)
    return event


def ndjson(events: list[dict[str, Any]]) -> bytes:
    return b"\n".join(json.dumps(e, ensure_ascii=False).encode() for e in events)


def envelope(event: TraceEvent | FeedbackEvent, identity: int | None = None, *, source: str = "test",
             received_at: float = 0.0, **fields: Any) -> Envelope:
    """An accepted event as the pipeline carries it: its identity the dedup key of `event` unless one is
    given; `fields` are the Envelope's others (size, fallback_rule, local_scores, truncated)."""
    from ragpulse.collector.dedup import event_identity
    from ragpulse.collector.events import Envelope

    return Envelope(event, source, received_at, event_identity(event) if identity is None else identity, **fields)


# -- Kafka: a real broker started by scripts/test (scripts/kafka.sh) ----------------------------

KAFKA_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "kafka.sh"


# The Kafka client the next kafka_args() asks for; the kafka_client fixture sets it per test.
KAFKA_CLIENTS = ("kafka-python", "confluent-kafka")
kafka_client = KAFKA_CLIENTS[0]


def kafka_bootstrap() -> str:
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP")
    if not bootstrap:
        raise AssertionError("KAFKA_BOOTSTRAP is not set: run the suite with scripts/test, which starts the broker")
    return bootstrap


def create_topic(name: str, partitions: int = 1) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap())
    try:
        admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    finally:
        admin.close()


def produce(topic: str, values: list[bytes], keys: list[bytes | None] | None = None) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap(), acks="all", linger_ms=5)
    try:
        for i, value in enumerate(values):
            producer.send(topic, value=value, key=keys[i] if keys else None)
        producer.flush(timeout=30)
    finally:
        producer.close()


def consume_all(topic: str, count: int, timeout: float = 30.0) -> list[Any]:
    """Read `count` messages from the start of every partition of `topic` (no group)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=kafka_bootstrap(), auto_offset_reset="earliest",
                             enable_auto_commit=False, group_id=None)
    messages: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(messages) < count and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                messages.extend(batch)
        # Anything beyond `count` would be a defect too: read a little longer.
        for batch in consumer.poll(timeout_ms=500).values():
            messages.extend(batch)
    finally:
        consumer.close()
    return messages


def kafka_args(topic: str, group: str, dead_letters: str | None = None, **options: object) -> list[str]:
    """--set flags that point `ragpulse run` at the test broker; `options` are more kafka.* options."""
    args = ["--set", f"kafka.bootstrap_servers={kafka_bootstrap()}", "--set", f"kafka.group_id={group}",
            "--set", f"kafka.client={kafka_client}",
            "--set", f"kafka.topics=[{{name: {topic}}}]",
            "--set", f"kafka.dead_letter_topic={dead_letters or topic + '-dlq'}"]
    for name, value in options.items():
        args += ["--set", f"kafka.{name}={value}"]
    return args


def kafka_control(command: str) -> None:
    subprocess.run([str(KAFKA_SCRIPT), command], check=True, capture_output=True, timeout=180)


# -- Prometheus: the real server from Debian's package (scripts/tools.sh) ---------------------

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


def exported_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every ragpulse metric, name -> (type, labels): each component declares its own, beside its code."""
    from prometheus_client import CollectorRegistry

    from types import SimpleNamespace

    from ragpulse.app.server import ServerMetrics
    from ragpulse.app.service import process_metrics
    from ragpulse.collector.dedup import DedupMetrics
    from ragpulse.collector.intake import IntakeMetrics
    from ragpulse.collector.pipeline import PipelineMetrics
    from ragpulse.collector.queue import QueueMetrics
    from ragpulse.collector.supervisor import SupervisorMetrics
    from ragpulse.collector.telemetry.fast_metrics import HistogramFamily
    from ragpulse.collector.telemetry.labels import LabelGuard
    from ragpulse.config import Config
    from ragpulse.exporters.forward import ForwardMetrics
    from ragpulse.exporters.otlp_out import InteropMetrics
    from ragpulse.exporters.prometheus import FastPathMetrics
    from ragpulse.exporters.results import ResultMetrics
    from ragpulse.judging.calibration import CalibrationMetrics
    from ragpulse.judging.local_judge import LocalJudgeMetrics
    from ragpulse.judging.metrics import JudgeMetrics, RateMetrics
    from ragpulse.judging.sampler import SamplerMetrics
    from ragpulse.probes.marker import ProbeTrafficFilter
    from ragpulse.probes.schedule import ProbeMetrics
    from ragpulse.judging.utilisation import ContextMetrics
    from ragpulse.scorers.citations import CitationMetrics
    from ragpulse.scorers.embedding import EmbeddingMetrics
    from ragpulse.scorers.join_tables import JoinMetrics
    from ragpulse.scorers.lexical import LexicalMetrics
    from ragpulse.scorers.satisfaction import SatisfactionMetrics
    from ragpulse.sources.connections import ConnectionMetrics
    from ragpulse.sources.kafka.metrics import KafkaMetrics
    from ragpulse.sources.otlp.metrics import OtlpMetrics

    registry, labels = CollectorRegistry(), Config().metrics.labels
    pipeline, intake = PipelineMetrics(registry), IntakeMetrics(registry)
    otlp = OtlpMetrics(registry, intake, pipeline.dropped)
    holders = [LabelGuard(labels, 1, 1, registry), SimpleNamespace(build_info=process_metrics(registry)), pipeline, intake, otlp, KafkaMetrics(registry, intake, otlp), DedupMetrics(registry), ServerMetrics(registry),
               FastPathMetrics(registry, Config().metrics), LexicalMetrics(registry, list(labels)),
               EmbeddingMetrics(registry, list(labels), pipeline.stage_errors), ResultMetrics(registry),
               JudgeMetrics(registry, labels, None), SamplerMetrics(registry, labels), RateMetrics(registry, labels),
               CalibrationMetrics(registry), QueueMetrics(registry), ConnectionMetrics(registry), SupervisorMetrics(registry),
               JoinMetrics(registry), SatisfactionMetrics(registry, labels), LocalJudgeMetrics(registry), ProbeMetrics(registry),
               ProbeTrafficFilter(registry), CitationMetrics(registry, list(labels)), ContextMetrics(registry, labels),
               InteropMetrics(registry), ForwardMetrics(registry)]
    found = {}
    for metric in (metric for holder in holders for metric in vars(holder).values()):
        if hasattr(metric, "_labelnames"):  # prometheus_client's own metrics
            kind, name, names = metric._type, metric._name, metric._labelnames
        elif hasattr(metric, "labelnames"):  # fast_metrics families
            kind = "histogram" if isinstance(metric, HistogramFamily) else "counter"
            name, names = metric.name, metric.labelnames
        else:
            continue
        name += "_total" if kind == "counter" and not name.endswith("_total") else ""
        found[name] = (kind, tuple(names))
    return found


def feedback_join(registry: Any, clock: Callable[[], float] | None = None, **options: Any) -> Any:
    """A feedback join on `registry` with the default options but those given (tests of its users); its
    windows move with `clock`, and without one time stands still (nothing expires unless a test says so)."""
    from prometheus_client import CollectorRegistry

    from ragpulse.config import SatisfactionConfig
    from ragpulse.collector.telemetry.labels import LabelGuard
    from ragpulse.scorers.join import FeedbackJoin
    from ragpulse.scorers.join_tables import JoinMetrics
    from ragpulse.scorers.satisfaction import SatisfactionMetrics, SignalCounter

    labels = ("app", "route", "model", "release")
    guard = LabelGuard(labels, 50, 2000, CollectorRegistry())  # its overflow counter apart: a test may have its own guard
    counter = SignalCounter(SatisfactionMetrics(registry, labels), guard, max_cached=8000)
    return FeedbackJoin(SatisfactionConfig(**options), JoinMetrics(registry), counter, guard, clock=clock or Clock())
