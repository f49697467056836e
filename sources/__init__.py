"""Sources: where events come from: HTTP ingest, Kafka (two clients) and OTLP (HTTP and gRPC receivers,
span assembly and mapping)."""
