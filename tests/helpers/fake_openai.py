"""A fake OpenAI-compatible server for judge tests: the real openai client talks to it over HTTP.

It grades by rule, so verdicts are predictable: groundedness 1 for an answer containing
HALLUCINATE or one the demo traffic generator invents, else 5; answer relevancy 1 for an answer containing OFFTOPIC or a refusal ("sorry"),
else 5; a chunk containing IRRELEVANT has relevance 0, any other 3. `latency` delays every answer.
Requests for APP_MODEL are an instrumented app's own LLM calls and get `app_answer`.
Scripted misbehaviour for the next requests: "slow" (1 s, then graded), "429" (with Retry-After: 1),
"500", "malformed" (text that is not JSON), "schema_violation" (JSON with a score of 7),
"reject_schema" (400 for response_format).
The `fake` fixture (tests/conftest.py) serves one for a test; `with FakeOpenAI() as fake:` for a longer scope.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from typing import Any, Self

from aiohttp import web
from helpers.net import free_port

from ragpulse.app.traffic import HALLUCINATED_ANSWERS

# Requests for this model are a RAG app's generation (the instrumentation tests), answered with
# `app_answer` under a dated response model, with fixed usage (42 prompt, 7 completion tokens).
APP_MODEL = "fake-rag-app"
# Requests for this model are an agent's: with tools offered, it searches (a tool call) with the searches
# `agent_searches` lists for the user's question, one per call, then answers `agent_answer`. Usage is fixed by
# the call: 30 prompt tokens a message, 9 completion tokens for a search, 12 for the answer (smolagents' final_answer
# tool call too; a code agent's code too); streamed
# calls report usage only when asked (stream_options.include_usage), as OpenAI does.
AGENT_MODEL = "gpt-4.1-nano"  # a name LlamaIndex knows for a function-calling model
APP_RESPONSE_MODEL = "fake-rag-app-2026-01-01"
ANSWER = re.compile(r"<answer>\n(?P<answer>.*)\n</answer>", re.DOTALL)
CHUNK = re.compile(r'<chunk index="(?P<index>\d+)"[^>]*>\n(?P<text>.*?)\n</chunk>', re.DOTALL)
QUESTION = re.compile(r"<question>\n(?P<question>.*?)\n</question>", re.DOTALL)
CITED = re.compile(r'<cited index="(?P<index>\d+)" chunks="(?P<chunks>[\d,]+)">(?P<sentence>.*?)</cited>')
SEARCH = re.compile(r"<search>(?P<search>.*?)</search>")
MARKER = re.compile(r"\s*(?:\[\^?[\w, -]+\]|【\d+】)")  # citation markers, as answers write them
WORD = re.compile(r"[A-Za-z]{5,}")


class FakeOpenAI:
    def __init__(self) -> None:
        self.port = free_port()
        self.requests: list[tuple[float, dict[str, Any]]] = []
        self.script: list[str] = []
        self.latency = 0.0
        self.app_answer = "Unused items can be returned within 30 days."
        self.usage: list[tuple[int, int]] = []  # (prompt, completion) tokens of each graded answer
        self.agent_searches: dict[str, list[str]] = {}  # a user question -> the searches the agent makes for it
        self.agent_answer = "Paris is the capital of France."
        self.agent_status = 200  # another: the agent's calls fail with it (a provider's 500)
        self.agent_code = False  # a code agent's model (smolagents' CodeAgent): it writes code, offered no tools
        self.in_flight = self.max_in_flight = 0
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._started.wait(10)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def prompts(self) -> list[str]:
        return [body["messages"][-1]["content"] for _, body in self.requests]

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.add_routes([web.post("/v1/chat/completions", self._complete), web.post("/v1/responses", self._respond)])
        runner = self._runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        self._loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port).start())
        self._started.set()
        self._loop.run_forever()

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append((time.monotonic(), body))
        step = self.script.pop(0) if self.script else "grade"
        if step == "slow":
            await asyncio.sleep(1.0)
            step = "grade"
        if step == "429":
            return web.json_response({"error": {"message": "slow down", "type": "rate_limit"}}, status=429,
                                     headers={"Retry-After": "1"})
        if step == "500":
            return web.json_response({"error": {"message": "boom"}}, status=500)
        if step == "reject_schema" and "response_format" in body:
            return web.json_response({"error": {"message": "response_format json_schema is not supported"}}, status=400)
        if body["model"] == AGENT_MODEL:
            return await self._agent(request, body)
        if body["model"] == APP_MODEL:  # a RAG app's own LLM call, not a judge's
            return web.json_response({
                "id": "chatcmpl-app", "object": "chat.completion", "created": int(time.time()), "model": APP_RESPONSE_MODEL,
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": self.app_answer}}],
                "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
            })
        prompt = body["messages"][-1]["content"]
        if self.latency:
            await asyncio.sleep(self.latency)
        if step == "malformed":
            content = "I think it is fine, maybe a 4?"
        else:
            if "<reference_answer>" in prompt:
                content = json.dumps(correctness_grade(prompt))
            else:
                content = json.dumps(naive_grade(prompt) if prompt.startswith("NAIVE") else grade(prompt, violate=step == "schema_violation"))
            if "response_format" not in body:
                content = "Here is my verdict:\n" + content  # text around JSON, as chat models do
        # About 4 characters a token; what was billed is kept for exact assertions.
        usage = (len(prompt) // 4, len(content) // 4)
        self.usage.append(usage)
        return web.json_response({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        })

    async def _agent(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        if self.agent_status != 200:
            return web.json_response({"error": {"message": "the model is down", "type": "server_error"}},
                                     status=self.agent_status)
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        question = _text(messages[last_user]["content"])
        done = sum(1 for m in messages[last_user:] if m["role"] == "tool")
        searches = self.agent_searches.get(question, self.agent_searches.get("*", []))  # "*": any question
        usage = {"prompt_tokens": 30 * len(messages), "completion_tokens": 9 if done < len(searches) else 12}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        tools = [tool["function"] for tool in body.get("tools") or []]
        # smolagents' tool-calling agent answers through its final_answer tool; the search is the other tool.
        search = next((t for t in tools if t["name"] != "final_answer"), None)
        final = next((t for t in tools if t["name"] == "final_answer"), None)
        if search is not None and done < len(searches):
            parameters = search.get("parameters") or {}
            argument = (parameters.get("required") or list(parameters.get("properties") or {}) or ["query"])[0]
            call = {"id": f"call_{done}", "type": "function",
                    "function": {"name": search["name"], "arguments": json.dumps({argument: searches[done]})}}
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        elif self.agent_code and not tools:  # its search and its answer as code calling its tools
            code = (f"print(retriever(query={json.dumps(searches[done])}))" if done < len(searches)
                    else f"final_answer({json.dumps(self.agent_answer)})")
            message, finish = {"role": "assistant", "content": f"Thought: I act.\n<code>\n{code}\n</code>"}, "stop"
        elif final is not None:
            call = {"id": "call_final", "type": "function",
                    "function": {"name": "final_answer", "arguments": json.dumps({"answer": self.agent_answer})}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": self.agent_answer}, "stop"
        created = int(time.time())
        if not body.get("stream"):
            return web.json_response({"id": f"chatcmpl-agent-{done}", "object": "chat.completion", "created": created,
                                      "model": body["model"], "usage": usage,
                                      "choices": [{"index": 0, "finish_reason": finish, "message": message}]})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(delta: dict[str, Any], finish_reason: str | None, **extra: Any) -> None:
            chunk = {"id": f"chatcmpl-agent-{done}", "object": "chat.completion.chunk", "created": created,
                     "model": body["model"], "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                     **extra}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

        if "tool_calls" in message:
            await send({"role": "assistant", "tool_calls": [{"index": 0, **message["tool_calls"][0]}]}, None)
        else:
            for word in message["content"].split(" "):
                await send({"role": "assistant", "content": word + " "}, None)
        await send({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            chunk = {"id": f"chatcmpl-agent-{done}", "object": "chat.completion.chunk", "created": created,
                     "model": body["model"], "choices": [], "usage": usage}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _respond(self, request: web.Request) -> web.Response:
        """The Responses API, for the agent model (not streamed): it searches as told, then answers, as `_agent`."""
        body = await request.json()
        self.requests.append((time.monotonic(), body))
        if self.agent_status != 200:
            return web.json_response({"error": {"message": "the model is down", "type": "server_error"}},
                                     status=self.agent_status)
        items = [{"type": "message", "role": "user", "content": body["input"]}] if isinstance(body["input"], str) \
            else body["input"]
        last_user = max(i for i, item in enumerate(items) if item.get("role") == "user")
        question = _text(items[last_user]["content"])
        done = sum(1 for item in items[last_user:] if item.get("type") == "function_call_output")
        searches = self.agent_searches.get(question, [])
        tools = [tool for tool in body.get("tools") or [] if tool.get("type") == "function"]
        if tools and done < len(searches):
            parameters = tools[0].get("parameters") or {}
            argument = (parameters.get("required") or list(parameters.get("properties") or {}) or ["query"])[0]
            output: dict[str, Any] = {"type": "function_call", "id": f"fc_{done}", "call_id": f"call_{done}",
                                      "name": tools[0]["name"], "arguments": json.dumps({argument: searches[done]}),
                                      "status": "completed"}
        else:
            output = {"type": "message", "id": f"msg_{done}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": self.agent_answer, "annotations": []}]}
        usage = {"input_tokens": 30 * len(items), "output_tokens": 9 if output["type"] == "function_call" else 12}
        return web.json_response({
            "id": f"resp_agent_{done}", "object": "response", "created_at": int(time.time()), "model": body["model"],
            "status": "completed", "output": [output], "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": body.get("tools") or [],
            "usage": {**usage, "total_tokens": sum(usage.values()), "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}},
        })

    def close(self) -> None:
        """Close the connections and handlers still open (a slow answer, a waiting client), then stop."""
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


def _supports(chunk: str, sentence: str) -> bool:
    """Two words of five letters or more in common (one, such as "within", is chance)."""
    return len({w.lower() for w in WORD.findall(chunk)} & {w.lower() for w in WORD.findall(sentence)}) >= 2


def grade(prompt: str, *, violate: bool = False) -> dict[str, Any]:
    """judgment.v3's answer by rule, by the numbers the prompt gives chunks and cited sentences (from 1). A supported claim's chunks: those sharing two words of five letters or
    more with it; a cited sentence is supported when one of the chunks it cites does (and the answer is not a
    hallucination); searches read the question well when their every word of four letters or more is in it."""
    match = ANSWER.search(prompt)
    answer = match["answer"] if match else ""
    bad = "HALLUCINATE" in answer or answer in HALLUCINATED_ANSWERS
    refusal = "sorry" in answer.lower()
    texts = {int(m["index"]): m["text"] for m in CHUNK.finditer(prompt)}
    sentences = [s for s in re.split(r"(?<=[.!?。])\s*", MARKER.sub("", answer)) if s.strip()]
    claims = [] if refusal else [
        {"claim": sentence, "verdict": "contradicted" if bad else "supported", "reason": "graded by rule",
         "chunks": [] if bad else [i for i, text in texts.items() if _supports(text, sentence)]}
        for sentence in sentences]
    chunks = [{"index": i, "relevance": 0 if "IRRELEVANT" in text else 3} for i, text in texts.items()]
    citations = [{"index": int(m["index"]), "reason": "graded by rule",
                  "supported": not bad and any(_supports(texts.get(int(i), ""), m["sentence"])
                                               for i in m["chunks"].split(","))} for m in CITED.finditer(prompt)]
    searches = SEARCH.findall(prompt)
    question = QUESTION.search(prompt)
    asked = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", question["question"] if question else "")}
    search = None if not searches else {
        "score": 5 if all(w.lower() in asked for s in searches for w in re.findall(r"[A-Za-z]{4,}", s)) else 2,
        "reason": "graded by rule"}
    return {
        "claims": claims,
        "groundedness": {"score": 7 if violate else 1 if bad else 5, "reason": "graded by rule"},
        "answer_relevancy": {"score": 1 if refusal or "OFFTOPIC" in answer else 5, "reason": "graded by rule"},
        "context_relevance": {"chunks": chunks, "reason": "graded by rule"},
        "citations": citations,
        "search": search,
    }


REFERENCE = re.compile(r"<reference_answer>\n(?P<reference>.*)\n</reference_answer>", re.DOTALL)
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def correctness_grade(prompt: str) -> dict[str, Any]:
    """The probes' correctness prompt, by rule: 1 with HALLUCINATE, 5 when every number of the reference
    answer is in the answer, else 2."""
    answer = (ANSWER.search(prompt) or {"answer": ""})["answer"]  # type: ignore[index]
    reference = (REFERENCE.search(prompt) or {"reference": ""})["reference"]  # type: ignore[index]
    if "HALLUCINATE" in answer:
        return {"score": 1, "reason": "graded by rule: contradicts the reference"}
    missing = set(NUMBER.findall(reference)) - set(NUMBER.findall(answer))
    return {"score": 2 if missing else 5, "reason": "graded by rule" + (f": lacks {sorted(missing)}" if missing else "")}


def naive_grade(prompt: str) -> dict[str, Any]:
    """Answers for the naive claim-split design (bench/bench_judge.py), one question per call."""
    kind = prompt.split("\n", 1)[0]
    if kind == "NAIVE SPLIT":
        answer = ANSWER.search(prompt)
        sentences = re.split(r"(?<=[.!?。])\s*", answer["answer"] if answer else "")
        return {"claims": [s for s in sentences if s.strip()]}
    if kind == "NAIVE VERIFY":
        return {"verdict": "supported", "reason": "the context states it"}
    if kind == "NAIVE RELEVANCY":
        return {"score": 5, "reason": "answers the question"}
    return {"relevance": 3, "reason": "the chunk helps to answer"}
