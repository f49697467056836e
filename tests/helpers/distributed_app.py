"""A RAG service in two processes, each exporting its own spans with the OpenTelemetry SDK's defaults
(BatchSpanProcessor: exported every 5 s or at exit), as a gateway and a retrieval service do.

    python distributed_app.py gateway ENDPOINT N [by_hand|names_peer]   answers N questions; prints each call's traceparent
    python distributed_app.py retrieval ENDPOINT [hands_on]   serves the calls read from stdin, then exports 3 s later

The gateway's spans (the root, and a CLIENT span calling the retrieval service) reach the sidecar before the
retrieval service's (a SERVER span and the RETRIEVER span with the documents), as across real services. With
`by_hand` the gateway has no HTTP-client instrumentation: it propagates the root's context itself (no CLIENT span),
then calls its model (an LLM span); `names_peer` does the same and records the service it calls on its root
(`peer.service`). With `hands_on` the retrieval service's SERVER span goes out at once, and its retriever is a
search service's, to which it hands the call by hand: that service (a provider of its own) exports 3 s later.
"""

from __future__ import annotations

import json
import sys
import time

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

PROPAGATOR = TraceContextTextMapPropagator()


def provider(service: str, endpoint: str) -> TracerProvider:
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": service}))
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))  # the defaults
    return tracer_provider


def gateway(endpoint: str, questions: int, mode: str | None) -> None:
    tracer_provider = provider("gateway", endpoint)
    tracer = tracer_provider.get_tracer("openinference.instrumentation.gateway")
    answer = "You can return them within 30 days."
    peer = {"peer.service": "retrieval"} if mode == "names_peer" else {}
    for number in range(questions):
        question = f"Can I return opened headphones, order {number}?"
        with tracer.start_as_current_span("query", attributes={
            "openinference.span.kind": "CHAIN", "input.value": question, "output.value": json.dumps({"response": answer}),
            **peer,
        }):
            if mode is not None:
                call(question)
                with tracer.start_as_current_span("llm", attributes={
                    "openinference.span.kind": "LLM", "input.value": question, "output.value": answer}):
                    pass
            else:
                with tracer.start_as_current_span("POST /retrieve", kind=trace.SpanKind.CLIENT,
                                                  attributes={"http.request.method": "POST"}):
                    call(question)
    tracer_provider.shutdown()  # exports what is left, now: the gateway's spans go first


def call(question: str) -> None:
    """The retrieval service's request, with the current span's context."""
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier)
    print(json.dumps({"traceparent": carrier["traceparent"], "question": question}), flush=True)


def retrieval(endpoint: str, hands_on: bool) -> None:
    tracer_provider = provider("retrieval", endpoint)
    search_provider = provider("search", endpoint) if hands_on else tracer_provider
    tracer = tracer_provider.get_tracer("openinference.instrumentation.retrieval")
    search = search_provider.get_tracer("openinference.instrumentation.search")
    for line in sys.stdin:
        call = json.loads(line)
        context = PROPAGATOR.extract({"traceparent": call["traceparent"]})
        with tracer.start_as_current_span("POST /retrieve", context=context, kind=trace.SpanKind.SERVER):
            with search.start_as_current_span("retrieve", attributes={
                "openinference.span.kind": "RETRIEVER", "input.value": call["question"],
                "retrieval.documents.0.document.id": "kb-1",
                "retrieval.documents.0.document.content": "Returns are accepted within 30 days of delivery.",
                "retrieval.documents.0.document.score": 0.9,
            }):
                pass
    if hands_on:
        tracer_provider.shutdown()  # the SERVER spans go out now, the search service's later
    time.sleep(3.0)  # this service's batch goes out later than the gateway's: what the sidecar must wait for
    search_provider.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "gateway":
        gateway(sys.argv[2], int(sys.argv[3]), sys.argv[4] if sys.argv[4:] else None)
    else:
        retrieval(sys.argv[2], sys.argv[3:] == ["hands_on"])
