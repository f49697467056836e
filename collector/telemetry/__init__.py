"""Self-telemetry primitives: lock-free metric families, the label cardinality guard, the /metrics writer, and the
families several components share (made once per registry)."""
