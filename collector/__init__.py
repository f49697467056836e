"""The collector: event model, config, sources, queue and pipeline, and the service that runs them."""
