"""The Kafka source and its two client backends (kafka-python, confluent-kafka)."""

from ragpulse.sources.kafka.codecs import item_error, json_codec, otlp_proto_codec
from ragpulse.sources.kafka.source import SOURCE, KafkaSource

__all__ = ["SOURCE", "KafkaSource", "item_error", "json_codec", "otlp_proto_codec"]
