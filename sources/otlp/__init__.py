"""The OTLP source: receives spans from instrumented RAG apps and assembles them into trace events.

    spans.py      OTLP protobuf / JSON -> Span (ids in hex, attributes as Python values)
    assembler.py  spans grouped by trace, assembled after the root's grace period or a TTL
    mapping.py    a trace's spans -> a v1 TraceEvent (OpenInference, OpenTelemetry GenAI)
    roles.py      what each span is to the mapping: a model call, a tool call, a retrieval
    intake.py     one span intake per process: assembler + timer -> pipeline queue
    receiver.py   the OTLP/gRPC (TraceService/Export) and OTLP/HTTP (POST /v1/traces) receivers
"""
