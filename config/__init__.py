"""Config, a leaf: it imports nothing of ragpulse but the error types.

A section's checks that msgspec cannot express sit beside its fields, in its `validate()` (as an
OpenTelemetry Collector component's config has `Validate()`); `Config.validate()` runs them all,
then the checks that span sections.

- schema.py: `Config` and its sections but those below; `pattern_error` and `re2_options` (how phrase
  patterns are compiled, shared with the fallback detector), `Price`.
- sources.py: the Kafka consumer's and the OTLP receivers' sections, and the forwarding role's producer.
- probes.py: the probe targets' and schedules' sections.
- report.py: the quality report's schedule and webhook.
- interop.py: the outputs to other tools (OTel evaluation events, OTLP metrics push, Phoenix annotations).
- base.py: what the section modules share: the `_Section` base, the constrained value types,
  `read_secret`, the file and secret checks.
- loader.py: `load_config` (defaults, YAML file, RAGPULSE_* environment, `--set`), `parse_config`,
  `ignored_environment` (the RAGPULSE_ variables that name no option: the scripts' own),
  and msgspec's errors turned into problems by dotted path.
"""

from ragpulse.config.interop import EvaluationEventsConfig, InteropConfig, OtlpEndpointConfig, OtlpMetricsConfig, PhoenixConfig
from ragpulse.config.loader import default_config_dict, ignored_environment, load_config, parse_config
from ragpulse.config.probes import ProbeResponse, ProbeTarget
from ragpulse.config.report import ReportConfig, ReportSchedule
from ragpulse.config.schema import (
    CalibrationConfig,
    Config,
    JudgeConfig,
    LimitsConfig,
    LoggingConfig,
    MetricsConfig,
    Price,
    SatisfactionConfig,
    re2_options,
)
from ragpulse.config.sources import ForwardConfig, KafkaConfig, KafkaTopic, OtlpConfig

__all__ = [
    "CalibrationConfig",
    "Config",
    "EvaluationEventsConfig",
    "ForwardConfig",
    "InteropConfig",
    "JudgeConfig",
    "KafkaConfig",
    "KafkaTopic",
    "LimitsConfig",
    "LoggingConfig",
    "MetricsConfig",
    "OtlpConfig",
    "OtlpEndpointConfig",
    "OtlpMetricsConfig",
    "PhoenixConfig",
    "Price",
    "ProbeResponse",
    "ProbeTarget",
    "ReportConfig",
    "ReportSchedule",
    "SatisfactionConfig",
    "default_config_dict",
    "ignored_environment",
    "load_config",
    "parse_config",
    "re2_options",
]
