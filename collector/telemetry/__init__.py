"""Self-telemetry primitives: lock-free metric families, the label cardinality guard, the /metrics writer."""
