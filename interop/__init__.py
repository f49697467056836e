"""Interop: judgments and metrics sent where teams already look: OpenTelemetry evaluation events, the metrics
over OTLP, and span annotations in Arize Phoenix."""
