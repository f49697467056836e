"""The pipeline's loop in the compiled core (native/src/pipeline.rs), held to the Python loop it replaced (kept here as
the definition) on generated stages and exporters that pass, annotate, drop or raise: the same calls in the same order,
the same failures heard, the same counts; an exception that is no Exception (a cancellation) is raised on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.collector.pipeline import Pipeline

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

BEHAVIOURS = ("pass", "annotate", "drop", "raise", "raise_some")


def component(name: str, behaviour: str, calls: list[Any]) -> Callable[[Envelope], Envelope | None]:
    """A stage or exporter that records each call and does `behaviour` (raise_some: for every other trace id)."""

    def call(item: Envelope) -> Envelope | None:
        calls.append((name, id(item), item.answer_text))
        if behaviour == "raise" or (behaviour == "raise_some" and item.identity % 2):
            raise ValueError(name)
        if behaviour == "drop" and item.identity % 3 == 0:
            return None
        if behaviour == "annotate":
            item.answer_text = f"{item.answer_text or ''}{name}"
        return item

    return call


def python_loop(pipeline: Pipeline, batch: list[Envelope], failed: Callable[[str, Envelope], None]) -> None:
    """The loop as it was in Python (collector/pipeline.py's process before the compiled core)."""
    for item in batch:
        current: Envelope | None = item
        for name, stage in pipeline._stages:  # noqa: SLF001
            try:
                current = stage(current)  # type: ignore[arg-type]
            except Exception:
                failed(name, item)
                current = item
            if current is None:
                break
        else:
            for name, exporter in pipeline._exporters:  # noqa: SLF001
                try:
                    exporter(current)  # type: ignore[arg-type]
                except Exception:
                    failed(name, item)
            (pipeline._processed_traces if isinstance(item.event, TraceEvent)  # noqa: SLF001
             else pipeline._processed_feedback).inc()  # noqa: SLF001


def batch_of(identities: list[int]) -> list[Envelope]:
    return [envelope(TraceEvent(trace_id=f"t{n}", query="q", answer="a") if n % 4 else
                     FeedbackEvent(kind="copy", trace_id=f"t{n}"), identity=n) for n in identities]


def pipeline_of(stages: list[str], exporters: list[str], calls: list[Any],
                registry: CollectorRegistry | None = None) -> Pipeline:
    """A pipeline of these components (no queue: process() alone is driven)."""
    staged = [(f"s{i}", component(f"s{i}", b, calls)) for i, b in enumerate(stages)]
    exported = [(f"e{i}", component(f"e{i}", b, calls)) for i, b in enumerate(exporters)]
    return Pipeline(None, staged, exported, registry or CollectorRegistry(), max_batch_events=100)  # type: ignore[arg-type]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(BEHAVIOURS), max_size=5), st.lists(st.sampled_from(BEHAVIOURS), max_size=3),
       st.lists(st.integers(0, 50), max_size=12))
def test_the_compiled_loop_calls_and_counts_as_the_python(stages: list[str], exporters: list[str],
                                                          identities: list[int]) -> None:
    outcomes = []
    for run in ("python", "compiled"):
        calls: list[Any] = []
        failures: list[Any] = []
        pipeline = pipeline_of(stages, exporters, calls)
        batch = batch_of(identities)
        positions = {id(item): index for index, item in enumerate(batch)}
        if run == "python":
            python_loop(pipeline, batch, lambda name, item: failures.append((name, positions[id(item)], "ValueError")))
        else:
            pipeline._failed = lambda name, item, error: failures.append(  # type: ignore[method-assign] # noqa: SLF001
                (name, positions[id(item)], type(error).__name__))
            pipeline.process(batch)
        outcomes.append(([(name, positions[target], text) for name, target, text in calls], failures,
                         [item.answer_text for item in batch], pipeline._processed_traces.value,  # noqa: SLF001
                         pipeline._processed_feedback.value))  # noqa: SLF001
    assert outcomes[1] == outcomes[0]


def test_a_cancellation_is_raised_on_and_a_failure_is_counted() -> None:
    def cancelled(item: Envelope) -> Envelope:
        raise asyncio.CancelledError

    pipeline = pipeline_of([], [], [])
    pipeline._stages = [("cancelled", cancelled)]  # noqa: SLF001
    with pytest.raises(asyncio.CancelledError):
        pipeline.process(batch_of([1]))
    registry = CollectorRegistry()
    failing = pipeline_of(["raise"], [], [], registry)
    heard: list[Exception] = []
    logged = failing._failed  # noqa: SLF001

    def failed(name: str, item: Envelope, error: Exception) -> None:
        heard.append(error)
        logged(name, item, error)

    failing._failed = failed  # type: ignore[method-assign] # noqa: SLF001
    failing.process(batch_of([1, 2]))
    assert registry.get_sample_value("ragpulse_stage_errors_total", {"stage": "s0"}) == 2
    # The log has where it failed: the error comes with its traceback.
    assert [(type(error), error.__traceback__ is not None) for error in heard] == [(ValueError, True)] * 2
    assert failing._processed_traces.value == 2  # noqa: SLF001 - the events went on without the stage's part


@pytest.mark.parametrize(("prepared", "called"), [(True, 0), (False, 3), (None, 3), ("raise", 3)])
def test_a_stage_whose_prepare_did_the_batch_is_not_called_on_its_events(prepared: object, called: int) -> None:
    class Batched:
        def __init__(self) -> None:
            self.calls = 0

        def prepare(self, batch: list[Envelope]) -> object:
            if prepared == "raise":
                raise ValueError("prepare")
            return prepared

        def __call__(self, item: Envelope) -> Envelope:
            self.calls += 1
            return item

    registry, stage, calls = CollectorRegistry(), Batched(), []
    pipeline = Pipeline(None, [("batched", stage), ("after", component("after", "annotate", calls))], [],  # type: ignore[arg-type]
                        registry, max_batch_events=100)
    pipeline.process(batch_of([1, 2, 3]))
    assert (stage.calls, len(calls), pipeline._processed_traces.value) == (called, 3, 3)  # noqa: SLF001
    assert registry.get_sample_value("ragpulse_stage_errors_total", {"stage": "batched"}) == (
        1 if prepared == "raise" else None)
