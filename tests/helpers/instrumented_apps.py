"""RAG apps under the real instrumentors, each run as its own process (an instrumentor's global state,
its content-capture mode from the environment, stays in that process, as in a real deployment).

    python -m helpers.instrumented_apps APP SERVICE_NAME OTLP_ENDPOINT[,OTLP_ENDPOINT...] OPENAI_BASE_URL SPANS_FILE

(tests/ on the path). The spans go to the sidecar through the real OTLP/HTTP exporter behind a
BatchSpanProcessor (what an app uses), and to SPANS_FILE (protobuf) for exact checks; what the app saw (its
answer, the retrieved documents) is printed as JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.fake_openai import APP_MODEL
from helpers.otlp_shapes import Collect
from helpers.tool_agents import TOOL_AGENTS
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

TESTS = Path(__file__).resolve().parents[1]
GENAI_QUESTION = "How many days do I have for returns?"
GENAI_DOCUMENTS = [{"id": "doc-returns", "score": 0.91}, {"id": "doc-shipping", "score": 0.42}]
HAYSTACK_QUESTION = "How many days do I have for returns of unused items?"


def llamaindex_engine(**options: Any) -> Any:
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from helpers.llamaindex_data import TEXTS, WordEmbedding

    Settings.embed_model = WordEmbedding()
    Settings.llm = MockLLM(max_tokens=8)
    Settings.tokenizer = lambda text: text.split()
    index = VectorStoreIndex.from_documents([Document(text=t, doc_id=k) for k, t in TEXTS.items()])
    return index.as_query_engine(similarity_top_k=2, **options)


def openllmetry_llamaindex(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
    from helpers.llamaindex_data import QUESTION

    engine = llamaindex_engine()
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    return {"answer": str(engine.query(QUESTION))}


def llamaindex_streaming(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
    from helpers.llamaindex_data import QUESTION

    from openinference.instrumentation import using_session

    engine = llamaindex_engine(streaming=True)
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    with using_session("stream-session"):
        return {"answer": "".join(engine.query(QUESTION).response_gen)}


def openllmetry_langchain(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough
    from langchain_core.vectorstores import InMemoryVectorStore
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor
    from helpers.langchain_data import ANSWER, DOCS, QUESTION  # the OpenInference test's chain, under OpenLLMetry

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents([Document(page_content=text, id=f"doc-{i}") for i, text in enumerate(DOCS)])
    retriever = store.as_retriever(search_kwargs={"k": 2})
    retrieved = [d.page_content for d in retriever.invoke(QUESTION)]
    prompt = ChatPromptTemplate.from_template("Answer from the context.\nContext: {context}\nQuestion: {question}")
    chain = ({"context": retriever, "question": RunnablePassthrough()} | prompt
             | FakeListChatModel(responses=[ANSWER]) | StrOutputParser())
    LangchainInstrumentor().instrument(tracer_provider=provider)
    return {"answer": chain.invoke(QUESTION), "retrieved": retrieved}


def haystack(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    from haystack import Document, Pipeline
    from haystack.components.builders import ChatPromptBuilder
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.dataclasses import ChatMessage
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack.utils import Secret
    from openinference.instrumentation.haystack import HaystackInstrumentor

    store = InMemoryDocumentStore()
    store.write_documents([Document(id="returns", content="Returns are accepted within 30 days of delivery for unused items."),
                           Document(id="shipping", content="Standard shipping takes 3 to 5 business days.")])
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=2))
    pipeline.add_component("prompt", ChatPromptBuilder(
        template=[ChatMessage.from_user("Context: {% for d in documents %}{{ d.content }} {% endfor %}Question: {{ question }}")],
        required_variables=["question", "documents"]))
    pipeline.add_component("llm", OpenAIChatGenerator(api_key=Secret.from_token("not-needed"), model=APP_MODEL,
                                                      api_base_url=base_url))
    pipeline.connect("retriever.documents", "prompt.documents")
    pipeline.connect("prompt.prompt", "llm.messages")
    from openinference.instrumentation import using_session

    HaystackInstrumentor().instrument(tracer_provider=provider)
    with using_session("haystack-session"):
        result = pipeline.run({"retriever": {"query": HAYSTACK_QUESTION}, "prompt": {"question": HAYSTACK_QUESTION}},
                              include_outputs_from={"retriever"})
    return {"answer": result["llm"]["replies"][0].text,
            "documents": [[d.id, d.content, d.score] for d in result["retriever"]["documents"]]}


def genai(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    """The official GenAI instrumentation of the openai client, and the app's own retrieval span per the
    GenAI conventions: `gen_ai.retrieval.documents` with id and score only (the spec's shape) when
    content capture is on spans, nothing when it is off (the documents are content too)."""
    import os

    import openai
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    on_spans = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "") in ("span_only", "span_and_event")
    tracer = provider.get_tracer("genai-rag-app")
    client = openai.OpenAI(api_key="not-needed", base_url=base_url)
    with tracer.start_as_current_span("invoke_workflow rag", attributes={"gen_ai.operation.name": "invoke_workflow",
                                                                         "gen_ai.conversation.id": "genai-session"}):
        with tracer.start_as_current_span("retrieval kb", attributes={"gen_ai.operation.name": "retrieval",
                                                                      "gen_ai.data_source.id": "kb"}) as retrieval:
            if on_spans:
                retrieval.set_attribute("gen_ai.retrieval.query.text", GENAI_QUESTION)
                retrieval.set_attribute("gen_ai.retrieval.documents", json.dumps(GENAI_DOCUMENTS))
        reply = client.chat.completions.create(model=APP_MODEL, messages=[{"role": "user", "content": GENAI_QUESTION}])
    return {"answer": reply.choices[0].message.content}


AGENT_QUESTION = "What is the capital of France?"
# The knowledge the agents search: ids and texts, for exact checks.
AGENT_DOCS = {"kb-fr": "Paris is the capital and largest city of France.",
              "kb-de": "Berlin is the capital of Germany.",
              "kb-pop": "About 2.1 million people live in Paris."}


def _knowledge_retriever() -> Any:
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents([Document(page_content=text, id=key) for key, text in AGENT_DOCS.items()])
    return store.as_retriever(search_kwargs={"k": 2})


def langgraph_agent(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    """A LangGraph ReAct agent (langgraph.prebuilt) with a retriever tool, on ChatOpenAI, under OpenInference's
    LangChain instrumentor: the model decides to search, searches (once or twice, as the fake model is told),
    then answers."""
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent
    from openinference.instrumentation import using_session, using_user
    from openinference.instrumentation.langchain import LangChainInstrumentor

    retriever = _knowledge_retriever()
    found: list[list[str]] = []

    @tool
    def search_knowledge(query: str) -> str:
        """Search the knowledge base."""
        documents = retriever.invoke(query)
        found.append([d.id for d in documents])
        return "\n".join(d.page_content for d in documents)

    from helpers.fake_openai import AGENT_MODEL

    agent = create_react_agent(ChatOpenAI(model=AGENT_MODEL, base_url=base_url, api_key="not-needed"), [search_knowledge])
    LangChainInstrumentor().instrument(tracer_provider=provider)
    with using_session("agent-session"), using_user("agent-user"):
        result = agent.invoke({"messages": [("user", AGENT_QUESTION)]})
    return {"answer": result["messages"][-1].content, "found": found}


def llamaindex_agent(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    """A LlamaIndex FunctionAgent (AgentWorkflow) with a QueryEngineTool over a vector index, on the OpenAI LLM
    streaming its calls (as FunctionAgent does) without usage, under OpenInference's LlamaIndex instrumentor."""
    import asyncio

    from llama_index.core import Settings, VectorStoreIndex
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.schema import TextNode
    from llama_index.core.llms import MockLLM
    from llama_index.core.tools import QueryEngineTool
    from llama_index.llms.openai import OpenAI
    from openinference.instrumentation import using_session
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
    from helpers.llamaindex_data import WordEmbedding

    from helpers.fake_openai import AGENT_MODEL

    Settings.embed_model = WordEmbedding()
    Settings.llm = MockLLM(max_tokens=8)
    index = VectorStoreIndex([TextNode(id_=key, text=text) for key, text in AGENT_DOCS.items()])
    tool = QueryEngineTool.from_defaults(index.as_query_engine(similarity_top_k=2), name="search_knowledge",
                                         description="Search the knowledge base.")
    # Usage of a streamed call comes only when asked for: the agent's calls report it, the query engine's LLM not.
    llm = OpenAI(model=AGENT_MODEL, api_base=base_url, api_key="not-needed",
                 additional_kwargs={"stream_options": {"include_usage": True}})
    agent = FunctionAgent(tools=[tool], llm=llm,
                          system_prompt="Answer from the knowledge base.")
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    async def ask() -> str:
        return str(await agent.run(user_msg=AGENT_QUESTION))  # run() needs a running loop

    with using_session("llamaindex-agent-session"):
        answer = asyncio.run(ask())
    return {"answer": answer}


# The judged app of the interop tests: a question, and the answer its scripted model gives (HALLUCINATE: the
# fake judge's groundedness 1).
JUDGED_QUESTIONS = {
    "How many days do I have for returns of unused items?": "Unused items can be returned within 30 days.",
    "How long does standard shipping take?": "Standard shipping takes 3 to 5 business days.",
    "What does the warranty cover?": "HALLUCINATE: the warranty covers accidental damage for 10 years.",
    "Can I return a used item?": "HALLUCINATE: used items can be returned within 90 days.",
}


def llamaindex_judged(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    """A LlamaIndex query engine under OpenInference's instrumentor, over a vector index, whose model (a
    LlamaIndex CustomLLM) answers each of JUDGED_QUESTIONS as scripted; one trace a question."""
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from openinference.instrumentation import using_session
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    class ScriptedLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="scripted-rag-model")

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            return CompletionResponse(text=next(a for q, a in JUDGED_QUESTIONS.items() if q in prompt))

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            yield self.complete(prompt)

    engine = llamaindex_engine(llm=ScriptedLLM())
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    answers = []
    for turn, question in enumerate(JUDGED_QUESTIONS):
        with using_session(f"judged-session-{turn}"):
            answers.append(str(engine.query(question)))
    return {"answers": answers}


APPS: dict[str, Callable[[TracerProvider, str], dict[str, Any]]] = {
    "llamaindex_judged": llamaindex_judged,
    "langgraph_agent": langgraph_agent, "llamaindex_agent": llamaindex_agent,
    "openllmetry_llamaindex": openllmetry_llamaindex, "llamaindex_streaming": llamaindex_streaming,
    "openllmetry_langchain": openllmetry_langchain, "haystack": haystack, "genai": genai,
    **TOOL_AGENTS,  # agents whose retrieval is a tool: Pydantic AI, the OpenAI Agents SDK, smolagents
}


def app_command(*args: str) -> list[str]:
    """This program with its arguments (APP SERVICE_NAME ...), to run with cwd and PYTHONPATH `TESTS`."""
    return [sys.executable, "-m", "helpers.instrumented_apps", *args]


def main() -> None:
    app, service, endpoint, base_url, spans_file = sys.argv[1:6]
    collect = Collect()
    provider = TracerProvider(resource=Resource.create({"service.name": service, "service.version": "1.0"}))
    provider.add_span_processor(SimpleSpanProcessor(collect))
    for url in endpoint.split(","):  # an app may send to several backends (ragpulse and Phoenix)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    seen = APPS[app](provider, base_url)
    assert provider.force_flush(10_000)
    with open(spans_file, "wb") as out:
        out.write(encode_spans(collect.spans).SerializeToString())
    provider.shutdown()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
