"""Sources: where events come from (HTTP now; Kafka and OTLP in their own modules)."""
