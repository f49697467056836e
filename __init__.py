"""ragpulse: an online quality-monitoring sidecar for live RAG services.

ragpulse is used as a program, not a library: its public surface is the `ragpulse` command, its configuration
file, the event contract it reads (HTTP, Kafka, OTLP) and the metrics, APIs and files it writes (docs/). The
Python package exports only its version; the subpackages are the sidecar's own and may change between releases.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ragpulse")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
