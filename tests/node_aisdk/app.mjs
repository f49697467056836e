// An agent on the Vercel AI SDK 7 with its OpenTelemetry integration (@ai-sdk/otel), exporting through the
// OTLP/HTTP protobuf exporter: the model searches a knowledge base with a tool, then answers. The turn runs in
// a span of the app's own carrying the conversation id (the integration records none).
// With "openinference" as its sixth argument, as @arizeai/openinference-vercel's README sets it up: its span
// processor turns the spans into OpenInference ones before export, and the session and user ride on the AI
// SDK's runtime context (recorded by the integration with runtimeContext: true), with no span of the app's own.
// With "json", it exports through the OTLP/HTTP JSON exporter (@opentelemetry/exporter-trace-otlp-http) instead.
//   node app.mjs OTLP_ENDPOINT OPENAI_BASE_URL SERVICE_NAME MODEL QUESTION [openinference|json]
import { generateText, registerTelemetry, stepCountIs, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { OpenInferenceSimpleSpanProcessor } from "@arizeai/openinference-vercel";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { z } from "zod";

const [endpoint, baseURL, service, model, question, variant] = process.argv.slice(2);
const openinference = variant === "openinference";
const exporter = variant === "json" ? new JsonExporter({ url: endpoint }) : new OTLPTraceExporter({ url: endpoint });
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": service, "service.version": "1.0" }),
  spanProcessors: [openinference ? new OpenInferenceSimpleSpanProcessor({ exporter }) : new SimpleSpanProcessor(exporter)],
});
provider.register();
registerTelemetry(new OpenTelemetry(openinference ? { usage: true, runtimeContext: true } : {}));

const documents = [
  { id: "kb-fr", pageContent: "Paris is the capital and largest city of France.", score: 0.91 },
  { id: "kb-de", pageContent: "Berlin is the capital of Germany.", score: 0.42 },
];
const openai = createOpenAI({ baseURL, apiKey: "not-needed" });
const tracer = provider.getTracer("aisdk-app");
const ask = () => generateText({
  model: openai.chat(model),
  prompt: question,
  tools: {
    search_knowledge: tool({
      description: "Search the knowledge base.",
      inputSchema: z.object({ query: z.string() }),
      execute: async () => documents,
    }),
  },
  stopWhen: stepCountIs(3),
  // Runtime context reaches telemetry only for the keys the call includes.
  ...(openinference ? {
    runtimeContext: { sessionId: "oi-session", userId: "oi-user" },
    telemetry: { includeRuntimeContext: { sessionId: true, userId: true } },
  } : {}),
});
const answer = openinference
  ? (await ask()).text
  : await tracer.startActiveSpan("chat turn", { attributes: { "gen_ai.conversation.id": "aisdk-session" } },
    async (span) => {
      try {
        return (await ask()).text;
      } finally {
        span.end();
      }
    });
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ answer }));
