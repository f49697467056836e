"""The configured Kafka client library, for the source's consumer and the forwarder's producer alike."""

from __future__ import annotations

from ragpulse.config import KafkaConfig
from ragpulse.sources.kafka.client import Backend


def backend(config: KafkaConfig) -> Backend:
    """The configured client library; confluent-kafka is imported only when chosen."""
    if config.client == "confluent-kafka":
        from ragpulse.sources.kafka.confluent import ConfluentBackend

        return ConfluentBackend(config)
    from ragpulse.sources.kafka.kafka_python import KafkaPythonBackend

    return KafkaPythonBackend(config)
