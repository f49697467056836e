"""Scorers: the cheap signals computed on every event (fallback, lexical, citations, embeddings) and the text
analysis they share."""
