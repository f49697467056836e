"""A CrewAI crew with a search tool under OpenInference, run by tests/test_tool_agents.py in CrewAI's own virtualenv
(tests/crewai/requirements.txt): it imports nothing of ragpulse or the tests' helpers.

    python app.py SERVICE_NAME OTLP_ENDPOINT OPENAI_BASE_URL MODEL QUESTION SPANS_FILE

The spans go to the sidecar through the real OTLP/HTTP exporter, and to SPANS_FILE (protobuf) for exact checks; the
answer is printed as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

DOCS = {"kb-fr": "Paris is the capital and largest city of France.", "kb-de": "Berlin is the capital of Germany."}


class Collect(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


def main() -> None:
    service, endpoint, base_url, model, question, spans_file = sys.argv[1:7]
    collect = Collect()
    provider = TracerProvider(resource=Resource.create({"service.name": service, "service.version": "1.0"}))
    provider.add_span_processor(SimpleSpanProcessor(collect))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))

    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool
    from openinference.instrumentation.crewai import CrewAIInstrumentor

    CrewAIInstrumentor().instrument(tracer_provider=provider)

    @tool("search_docs")
    def search_docs(query: str) -> str:
        """Search the knowledge base."""
        return "\n".join(DOCS.values())

    llm = LLM(model=f"openai/{model}", base_url=base_url, api_key="not-needed")
    researcher = Agent(role="Researcher", goal="Answer from the knowledge base.", backstory="A careful librarian.",
                       tools=[search_docs], llm=llm, max_iter=3)
    task = Task(description="{question}", expected_output="A one-sentence answer.", agent=researcher)
    answer = Crew(agents=[researcher], tasks=[task]).kickoff(inputs={"question": question})
    assert provider.force_flush(10_000)
    with open(spans_file, "wb") as out:
        out.write(encode_spans(collect.spans).SerializeToString())
    provider.shutdown()
    print(json.dumps({"answer": str(answer)}))


if __name__ == "__main__":
    main()
