"""Scorers: the cheap signals computed on every event (fallback, lexical, embeddings), the text analysis they
share, and the feedback join that turns user signals into satisfaction."""
