"""ragpulse: an online quality-monitoring sidecar for live RAG services.

The public surface is small on purpose: the event model, the config loader,
the service that wires sources, stages and exporters, and the error types.
Everything else lives in private-by-convention modules under
``ragpulse.collector``, ``ragpulse.scorers`` and ``ragpulse.exporters``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ragpulse")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
