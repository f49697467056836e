"""Results: where judged results are kept and read: the result writer's thread and its sinks (the SQLite
bad-case store, the review queue, the golden-set candidates table, JSONL files, Kafka topics), and the HTTP APIs
and terminal views that read the store."""
