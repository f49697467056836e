// A LangGraph.js ReAct agent (createReactAgent) on ChatOpenAI with a retriever tool, under OpenInference's LangChain.js
// instrumentation as its README sets it up (manuallyInstrument on the callbacks module), exporting through the
// OTLP/HTTP protobuf exporter. With "detached" as its sixth argument the tool calls retriever.invoke(query) without
// passing on its config, as a tool is easily written: the retriever's spans then begin a trace of their own.
//   node app.mjs OTLP_ENDPOINT OPENAI_BASE_URL SERVICE_NAME MODEL QUESTION [detached]
import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { Document } from "@langchain/core/documents";
import { BaseRetriever } from "@langchain/core/retrievers";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { z } from "zod";

const [endpoint, baseURL, service, model, question, variant] = process.argv.slice(2);
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": service, "service.version": "1.0" }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
});
provider.register();
new LangChainInstrumentation().manuallyInstrument(CallbackManagerModule);

const knowledge = {
  "kb-fr": "Paris is the capital and largest city of France.",
  "kb-de": "Berlin is the capital of Germany.",
};

class KnowledgeRetriever extends BaseRetriever {
  lc_namespace = ["ragpulse", "tests"];

  async _getRelevantDocuments() {
    return Object.entries(knowledge).map(([id, text]) => new Document({ id, pageContent: text, metadata: { id } }));
  }
}

const retriever = new KnowledgeRetriever();
const searchDocs = tool(
  async ({ query }, config) => {
    const documents = variant === "detached" ? await retriever.invoke(query) : await retriever.invoke(query, config);
    return documents.map((d) => d.pageContent).join("\n");
  },
  { name: "search_docs", description: "Search the knowledge base.", schema: z.object({ query: z.string() }) },
);
const agent = createReactAgent({
  llm: new ChatOpenAI({ model, apiKey: "not-needed", configuration: { baseURL } }),
  tools: [searchDocs],
});
const result = await agent.invoke({ messages: [{ role: "user", content: question }] });
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ answer: result.messages.at(-1).content }));
