"""Exporters: where the pipeline's processed events go (the fast path's Prometheus series, and the forwarding
role's Kafka topic). Judged results go to ragpulse.results; interop outputs live in ragpulse.interop."""
