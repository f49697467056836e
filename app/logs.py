"""structlog setup: JSON lines for machines, readable lines on a terminal.

Query, answer and chunk text never go to the logs: components log ids, counts
and reasons only.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog

from ragpulse.config import LoggingConfig


def configure_logging(config: LoggingConfig, stream: TextIO | None = None) -> None:
    stream = stream or sys.stderr
    console = config.format == "console" or (config.format == "auto" and stream.isatty())
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if console else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, config.level.upper())),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=True,
    )
