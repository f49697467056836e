"""What the tests and the benchmarks share, one module a topic: the sidecar as a process (sidecar), its metrics,
events, waiting, ports and HTTP (net), processes, clocks, Kafka (kafka_broker), Prometheus and Alertmanager
(alerting), the fake OpenAI server, OTLP traces, payloads and strategies, the instrumented apps and their data.
No test module imports another: what two of them need lives here.

Tests import it as `from helpers.x import y` (pyproject's `pythonpath` puts tests/ on the path); a benchmark gets
tests/ on its path from bench/common.py. Some modules are programs too, run by path (rag_service.py,
distributed_app.py) or as `python -m helpers.x` with tests/ on the path (instrumented_apps.py, text_snapshot.py)."""
