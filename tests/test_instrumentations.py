"""Real instrumented RAG apps into a running sidecar over the real OTLP exporter (issue: OTLP fidelity).

Each shape a user runs: OpenLLMetry's LlamaIndex and LangChain instrumentations, LlamaIndex streaming
and Haystack under OpenInference, and the official GenAI instrumentation of the openai client with
content capture off and on spans. Offline: MockLLM, LangChain's fake chat model, and the fake
OpenAI-compatible server for the apps that call an OpenAI client. Each app runs in its own process
(tests/helpers/instrumented_apps.py); its spans are checked exactly through the mapper, and end to end in the
sidecar's metrics and judgment records.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.fake_openai import APP_RESPONSE_MODEL
from helpers.instrumented import Sidecar, labels, running_sidecar
from helpers.instrumented_apps import GENAI_DOCUMENTS, GENAI_QUESTION, HAYSTACK_QUESTION
from helpers.metrics import Samples
from helpers.waiting import wait_until

from ragpulse.collector.events import TraceEvent
from ragpulse.sources.otlp.mapping import NotMapped


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sidecar]:
    with running_sidecar(tmp_path_factory.mktemp("instrumentations")) as running:  # for the whole module
        yield running


def counted(sidecar: Sidecar, app: str, model: str = "unknown") -> Samples:
    """Until the sidecar counted the app's trace and wrote its judgment record."""
    wait_until(lambda: sidecar.metrics().get_value("ragpulse_traces_total", **labels(app, model)) == 1,
               what=f"the {app} trace counted")
    wait_until(lambda: len(sidecar.records(app)) == 1, what=f"the {app} trace judged")
    return sidecar.metrics()


def test_openllmetry_llamaindex(sidecar: Sidecar) -> None:
    """The question is inside OpenLLMetry's JSON ({"str_or_query_bundle": ...}, {"query_bundle": ...}),
    and is taken out of it, not stored as it."""
    from helpers.llamaindex_data import QUESTION, expected_chunks

    event, seen = sidecar.run("openllmetry_llamaindex", "oll-llamaindex")
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer) == (QUESTION, seen["answer"]) == (QUESTION, "text text text text text text text text")
    assert [(c.text, round(c.score or 0, 9)) for c in event.chunks or []] == [(t, round(s, 9)) for t, s in expected_chunks()]
    assert all(c.id for c in event.chunks or [])
    assert (event.model, event.usage) == (None, None)  # MockLLM reports neither: not reported, not 0
    s = counted(sidecar, "oll-llamaindex")
    [record] = sidecar.records("oll-llamaindex")
    assert (record["query"], record["answer"]) == (QUESTION, seen["answer"])
    assert s.get_value("ragpulse_retrieval_chunks_sum", **labels("oll-llamaindex")) == 2
    assert s.total("ragpulse_tokens_total", app="oll-llamaindex") == 0


def test_llamaindex_streaming_answer_comes_from_the_llm_span(sidecar: Sidecar) -> None:
    """A streamed response's root output is a generator's repr: the answer is the LLM span's output."""
    from helpers.llamaindex_data import QUESTION, expected_chunks

    event, seen = sidecar.run("llamaindex_streaming", "oi-streaming")
    assert isinstance(event, TraceEvent)
    assert seen["answer"] == "text text text text text text text text"
    # The LLM span records the stream's last response `text`, which MockLLM lets lag its deltas by one
    # word: the answer is what the instrumentation recorded, never the root's generator.
    assert (event.query, event.answer) == (QUESTION, "text text text text text text text")
    assert [c.text for c in event.chunks or []] == [t for t, _ in expected_chunks()]
    assert event.session_id == "stream-session"
    counted(sidecar, "oi-streaming")
    [record] = sidecar.records("oi-streaming")
    assert record["answer"] == event.answer  # the judge judged the streamed text, not a generator's repr


def test_openllmetry_langchain(sidecar: Sidecar) -> None:
    """LangChain's {"inputs": ..., "tags": ..., "kwargs": ...} and {"outputs": ...} are parsed; the
    retriever's documents are the chunks, in its order."""
    from helpers.langchain_data import ANSWER, DOCS, QUESTION

    event, seen = sidecar.run("openllmetry_langchain", "oll-langchain")
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer) == (QUESTION, ANSWER) == (QUESTION, seen["answer"])
    assert [c.text for c in event.chunks or []] == seen["retrieved"] and sorted(seen["retrieved"]) == sorted(DOCS)
    assert [c.id for c in event.chunks or []] == [None, None]  # the instrumentation records no document ids
    assert event.model == "unknown"  # what the fake chat model reports as gen_ai.response.model
    counted(sidecar, "oll-langchain")
    [record] = sidecar.records("oll-langchain")
    assert (record["query"], record["answer"]) == (QUESTION, ANSWER)


def test_haystack_answer_and_response_model(sidecar: Sidecar) -> None:
    """The root Pipeline.run output is a dict of ChatMessage reprs: the answer is the generator span's."""
    event, seen = sidecar.run("haystack", "oi-haystack")
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer) == (HAYSTACK_QUESTION, sidecar.fake.app_answer) == (HAYSTACK_QUESTION, seen["answer"])
    assert [[c.id, c.text, c.score] for c in event.chunks or []] == seen["documents"]
    assert [c.id for c in event.chunks or []] == ["returns", "shipping"]
    assert event.model == APP_RESPONSE_MODEL  # the response's model, not the request's
    assert event.usage is not None and (event.usage.prompt_tokens, event.usage.completion_tokens) == (42, 7)
    assert event.session_id == "haystack-session"
    s = counted(sidecar, "oi-haystack", APP_RESPONSE_MODEL)
    [record] = sidecar.records("oi-haystack")
    assert record["answer"] == sidecar.fake.app_answer and record["stage"] != "generation"
    assert s.get_value("ragpulse_tokens_total", kind="completion", **labels("oi-haystack", APP_RESPONSE_MODEL)) == 7


def test_genai_content_off_is_counted_not_invented(sidecar: Sidecar) -> None:
    """Content capture off, or the older event mode: no question, answer or documents on the spans. No
    event with made-up text, no empty-retrieval fallback, no knowledge_gap bad case; counted and logged
    once with the setting that fixes it."""
    before = sidecar.metrics().get_value("ragpulse_otlp_traces_total", outcome="content_not_captured")
    mapped, _ = sidecar.run("genai", "genai-off", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    assert isinstance(mapped, NotMapped) and mapped.reason == "content_not_captured"
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only" in mapped.hint
    wait_until(lambda: sidecar.metrics().get_value("ragpulse_otlp_traces_total", outcome="content_not_captured") == before + 1,
               what="the trace counted as content_not_captured")
    s = sidecar.metrics()
    assert s.total("ragpulse_traces_total", app="genai-off") == 0
    assert s.total("ragpulse_fallbacks_total", app="genai-off") == 0
    assert sidecar.records("genai-off") == []
    [warning] = [line for line in sidecar.rp.log_lines() if line.get("service") == "genai-off"]
    assert "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental" in warning["fix"]


def test_genai_content_on_spans_with_spec_shaped_documents(sidecar: Sidecar) -> None:
    """The latest conventions, content on spans: question and answer from the messages, the documents'
    ids and scores kept, their text "not reported": counted, never judged, no bad case."""
    mapped, seen = sidecar.run("genai", "genai-on", OTEL_SEMCONV_STABILITY_OPT_IN="gen_ai_latest_experimental",
                               OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="span_only")
    assert isinstance(mapped, TraceEvent)
    assert (mapped.query, mapped.answer) == (GENAI_QUESTION, sidecar.fake.app_answer) == (GENAI_QUESTION, seen["answer"])
    assert [(c.id, c.score, c.text) for c in mapped.chunks or []] == [(d["id"], d["score"], None) for d in GENAI_DOCUMENTS]
    assert mapped.model == APP_RESPONSE_MODEL
    assert mapped.usage is not None and (mapped.usage.prompt_tokens, mapped.usage.completion_tokens) == (42, 7)
    assert mapped.session_id == "genai-session"
    app_labels = labels("genai-on", APP_RESPONSE_MODEL)
    wait_until(lambda: sidecar.metrics().get_value("ragpulse_traces_total", **app_labels) == 1, what="the GenAI trace")
    s = sidecar.metrics()
    assert s.get_value("ragpulse_retrieval_chunks_sum", **app_labels) == 2
    assert s.get_value("ragpulse_retrieval_top_score_sum", **app_labels) == 0.91
    assert s.get_value("ragpulse_retrieval_empty_total", **app_labels) == 0
    assert s.get_value("ragpulse_local_groundedness_count", **app_labels) == 0  # no text: nothing scored
    assert s.total("ragpulse_fallbacks_total", app="genai-on") == 0
    assert sidecar.records("genai-on") == []  # not judgeable: no bad case rests on a context it never saw
