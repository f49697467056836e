"""The core: the event model, decoding, dedup, the bounded queue, the pipeline and its supervisor, and the
self-telemetry primitives every component uses (collector/telemetry). It knows no component."""
