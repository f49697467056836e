"""The result sinks of the config, and the join listener that appends late signals to judged records."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from ragpulse.config import Config
from ragpulse.feedback.tables import Listener
from ragpulse.judging import JudgmentRecord, SignalRecord
from ragpulse.results.badcases import BadCaseStore
from ragpulse.results.candidates_table import CandidateStore
from ragpulse.results.jsonl_sink import JsonlSink
from ragpulse.results.report_tally import ReportTallyStore
from ragpulse.results.review_queue import ReviewQueueStore, audit_entry
from ragpulse.results.writer import Record, ResultWriter, Sink


def result_sinks(config: Config, registry: CollectorRegistry) -> list[tuple[str, Sink]]:
    results, audit = config.results, config.calibration
    sinks: list[tuple[str, Sink]] = []
    if results.sqlite_path:
        sinks.append(("sqlite", BadCaseStore(results.sqlite_path, retention_seconds=results.retention_days * 86400,
                                             max_rows=results.max_rows, registry=registry)))
        sinks.append(("review_queue", ReviewQueueStore(results.sqlite_path, retention_seconds=audit.retention_days * 86400,
                                                       max_rows=audit.max_rows, registry=registry)))
        sinks.append(("report_tally", ReportTallyStore(results.sqlite_path, retention_seconds=results.retention_days * 86400,
                                                       max_rows=results.max_rows, registry=registry)))
        sinks.append(("candidates", CandidateStore(results.sqlite_path, retention_seconds=results.retention_days * 86400,
                                                   max_rows=config.probes.candidates_max_rows, registry=registry)))
    if results.jsonl_path:
        sinks.append(("jsonl", JsonlSink(results.jsonl_path, results.jsonl_max_bytes)))
    if results.kafka_topic or audit.kafka_topic:
        # kafka-python (24 MB) only for a sidecar that writes to Kafka
        from ragpulse.results.kafka_sink import KafkaResultsSink
        from ragpulse.sources.kafka.kafka_python import client_settings
    if results.kafka_topic:
        sinks.append(("kafka", KafkaResultsSink(results.kafka_topic, client_settings(config.kafka))))
    if audit.jsonl_path:
        sinks.append(("review_queue_jsonl", JsonlSink(audit.jsonl_path, results.jsonl_max_bytes, select=audited)))
    if audit.kafka_topic:
        sinks.append(("review_queue_kafka", KafkaResultsSink(audit.kafka_topic, client_settings(config.kafka), select=audited)))
    return sinks


def audited(record: Record) -> object | None:
    """The review queue's entries: audited judgments, the judge's verdict apart from the content."""
    return audit_entry(record) if isinstance(record, JudgmentRecord) and record.audit else None


class SignalsToRecords(Listener):
    """A signal on an answer after its judgment is appended to its record (the bad-case store)."""

    def __init__(self, writer: ResultWriter) -> None:
        self._writer = writer

    def signal_after_judgment(self, trace_id: str, signal: str) -> None:
        self._writer.write(SignalRecord(trace_id, signal))
