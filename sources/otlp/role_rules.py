"""What makes a span a model call, a tool call or a retrieval, as tables: roles.py's span_roles reads them, and the
decoder (native/src/otlp/roles.rs) answers with them while it makes each span's record, so the mapping does not ask
every span of every trace again in Python. Declared here, apart, because the decoder's key filter (keys.py) takes
them and the modules that read spans import that filter."""

from __future__ import annotations

from ragpulse._native import RoleRules

OI_KIND = "openinference.span.kind"
GENAI_OPERATION = "gen_ai.operation.name"
AI_OPERATION = "ai.operationId"  # the AI SDK's operation; its span's name when absent
TRACELOOP_KIND = "traceloop.span.kind"
DB_QUERY_RESULT = "db.query.result"  # a vector store's result event (OpenLLMetry)
AI_SDK_CALLS = frozenset({
    "ai.generateText.doGenerate", "ai.streamText.doStream", "ai.generateObject.doGenerate", "ai.streamObject.doStream",
})
TOOL_CALL = "ai.toolCall"
LLM, TOOL, RETRIEVAL = 1, 2, 4
KIND_ROLES = {"LLM": LLM, "TOOL": TOOL, "RETRIEVER": RETRIEVAL, "RERANKER": RETRIEVAL}
OPERATION_ROLES = {"chat": LLM, "text_completion": LLM, "generate_content": LLM, "execute_tool": TOOL,
                   "retrieval": RETRIEVAL}
CALL_ROLES = {**dict.fromkeys(AI_SDK_CALLS, LLM), TOOL_CALL: TOOL}
EVENT_ROLES = {DB_QUERY_RESULT: RETRIEVAL}
# OpenLLMetry's request type and span kind, GenAI's output messages and retrieved documents: what span_roles reads
# besides the tables' three keys and the events; a span holding one is answered by the Python rules alone.
RARE_KEYS = frozenset({"llm.request.type", "gen_ai.output.messages", "gen_ai.retrieval.documents", TRACELOOP_KIND})

ROLE_RULES = RoleRules((OI_KIND, GENAI_OPERATION, AI_OPERATION), KIND_ROLES, OPERATION_ROLES, CALL_ROLES, EVENT_ROLES,
                       set(RARE_KEYS))
