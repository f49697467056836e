"""Agents whose retrieval is a tool, with the real frameworks as their docs teach them, each run as its own process
by helpers.instrumented_apps (`python -m helpers.instrumented_apps APP ...`), against the fake OpenAI-compatible server
(AGENT_MODEL: it searches as told, then answers). What each app saw is returned for exact checks. The environment
picks a variant: TOOL_RESULT (documents, text), INSTRUMENTATION_VERSION (Pydantic AI's), STREAM (1: streamed)."""

from __future__ import annotations

import os
import re
from typing import Any

from helpers.fake_openai import AGENT_MODEL
from opentelemetry.sdk.trace import TracerProvider

QUESTION = "What is the capital of France?"
DOCS = {"kb-fr": "Paris is the capital and largest city of France.",
        "kb-de": "Berlin is the capital of Germany.",
        "kb-pop": "The population of Paris is about 2.1 million."}
SCORES = {"kb-fr": 0.707, "kb-de": 0.312, "kb-pop": 0.55}


def search(query: str) -> list[dict[str, Any]]:
    """A knowledge base's search: the two documents sharing most words of four letters or more with the query."""
    def words(text: str) -> set[str]:
        return set(re.findall(r"[a-z]{4,}", text.lower()))

    ranked = sorted(DOCS, key=lambda key: (-len(words(query) & words(DOCS[key])), key))[:2]
    return [{"id": key, "content": DOCS[key], "score": SCORES[key]} for key in ranked]


def as_text(documents: list[dict[str, Any]]) -> str:
    """Documents as a RAG tool returns them for the model to read (Pydantic AI's RAG example: title, then content)."""
    return "\n\n".join(f"# {d['id']}\n{d['content']}" for d in documents)


def pydantic_ai(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    """Pydantic AI (its RAG example's shape) instrumented by itself: `Agent.instrument_all(InstrumentationSettings(...))`,
    an OpenAI chat model on the fake server, a retrieve tool returning documents or their text."""
    import asyncio

    from openai import AsyncOpenAI
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)  # a 500 fails the run at once
    model = OpenAIChatModel(AGENT_MODEL, provider=OpenAIProvider(openai_client=client))
    settings = InstrumentationSettings(tracer_provider=provider, version=int(os.environ["INSTRUMENTATION_VERSION"]))
    Agent.instrument_all(settings)
    agent = Agent(model, instructions="Answer from the documentation.")
    found: list[list[str]] = []
    documents = os.environ["TOOL_RESULT"] == "documents"

    @agent.tool_plain
    def retrieve(search_query: str) -> list[dict[str, Any]] | str:
        """Retrieve documentation sections based on a search query."""
        hits = search(search_query)
        found.append([d["id"] for d in hits])
        return hits if documents else as_text(hits)

    async def ask() -> str:
        if os.environ.get("STREAM") == "1":
            async with agent.run_stream(QUESTION) as streamed:
                return "".join([part async for part in streamed.stream_text(delta=True)])
        return (await agent.run(QUESTION)).output

    try:
        return {"answer": asyncio.run(ask()), "found": found}
    except ModelHTTPError as error:
        return {"error": type(error).__name__, "status": error.status_code}


def openai_agents(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    """The OpenAI Agents SDK under OpenInference (`OpenAIAgentsInstrumentor().instrument(tracer_provider=...)`): an
    agent with a function tool returning documents or their text, on the Chat Completions or the Responses API
    (AGENTS_API: chat, responses)."""
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool
    from openai import APIStatusError, AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    client = AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
    api = os.environ["AGENTS_API"]
    model = (OpenAIChatCompletionsModel(AGENT_MODEL, client) if api == "chat"
             else OpenAIResponsesModel(AGENT_MODEL, client))
    found: list[list[str]] = []
    documents = os.environ["TOOL_RESULT"] == "documents"

    @function_tool
    def search_docs(query: str) -> list[dict[str, Any]] | str:
        """Search the knowledge base."""
        hits = search(query)
        found.append([d["id"] for d in hits])
        return hits if documents else as_text(hits)

    agent = Agent(name="Assistant", instructions="Answer from the knowledge base.", model=model, tools=[search_docs])

    async def streamed() -> str:
        run = Runner.run_streamed(agent, QUESTION)
        async for _ in run.stream_events():
            pass
        return str(run.final_output)

    try:
        if os.environ.get("STREAM") == "1":
            import asyncio

            return {"answer": asyncio.run(streamed()), "found": found}
        return {"answer": Runner.run_sync(agent, QUESTION).final_output, "found": found}
    except APIStatusError as error:
        return {"error": type(error).__name__, "status": error.status_code}


def smolagents_run(provider: TracerProvider, base_url: str) -> dict[str, Any]:
    """smolagents under OpenInference (`SmolagentsInstrumentor().instrument(tracer_provider=...)`) with the RAG
    example's RetrieverTool (named `retriever`, returning its documents as text), as a tool-calling agent or a code
    agent (SMOLAGENTS: tool_calling, code) on the OpenAI-compatible server."""
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import CodeAgent, OpenAIServerModel, Tool, ToolCallingAgent

    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    found: list[list[str]] = []

    class RetrieverTool(Tool):  # the RAG example's tool, on this knowledge base's search
        name = "retriever"
        description = ("Uses semantic search to retrieve the parts of the documentation that could be most relevant "
                       "to answer your query.")
        inputs = {"query": {"type": "string", "description": "The query to perform."}}
        output_type = "string"

        def forward(self, query: str) -> str:
            hits = search(query)
            found.append([d["id"] for d in hits])
            return "\nRetrieved documents:\n" + "".join(
                f"\n\n===== Document {i} =====\n" + d["content"] for i, d in enumerate(hits))

    model = OpenAIServerModel(model_id=AGENT_MODEL, api_base=base_url, api_key="not-needed",
                              client_kwargs={"max_retries": 0})
    kind = CodeAgent if os.environ["SMOLAGENTS"] == "code" else ToolCallingAgent
    agent = kind(tools=[RetrieverTool()], model=model, max_steps=4, verbosity_level=0)
    try:
        return {"answer": str(agent.run(QUESTION)), "found": found}
    except Exception as error:  # smolagents wraps a provider's error in its own
        return {"error": type(error).__name__}


TOOL_AGENTS = {"smolagents": smolagents_run, "pydantic_ai": pydantic_ai, "openai_agents": openai_agents}
