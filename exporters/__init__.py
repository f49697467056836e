"""Exporters: the fast path's Prometheus exporter, and the sinks judged results go to (the result writer,
SQLite bad-case store and review queue, JSONL, Kafka) with the HTTP APIs that read them."""
