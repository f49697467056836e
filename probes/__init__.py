"""Golden-set probes: a labelled set replayed against the live RAG service (golden, target, runner, store, compare)."""
