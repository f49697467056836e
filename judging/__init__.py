"""Judging: the sampler and its budgets, the LLM and local judges, the workers, attribution, calibration
against human reviews, the rate estimators, and the records a judgment leaves."""
