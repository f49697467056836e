"""Exporters: Prometheus metrics now; result sinks for judgments later."""
