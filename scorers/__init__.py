"""Scorers: cheap signals computed on events (fallback detection now; LLM judges later)."""
