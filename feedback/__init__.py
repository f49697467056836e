"""Feedback: what users did about an answer: the feedback join (every answer meets its user signals in one
bounded state) and the satisfaction signals derived from it, which judging, probes and the result sinks consult."""
