"""What the Helm chart (helm/ragpulse) takes from the one source: the rules file and the dashboards,
copied into the chart's files/ unchanged, and values.schema.json, whose `config` part is ragpulse's own
config schema (msgspec's, every option, unknown ones refused), so helm refuses on lint, template and
install what `ragpulse config check` would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from ragpulse.config import Config

# Where the chart is committed, from the repository root (the generating command writes there).
CHART_DIR = Path("helm", "ragpulse")

_STRING = {"type": "string"}
_BOOL = {"type": "boolean"}
_PORT = {"type": "integer", "minimum": 1, "maximum": 65535}
_OBJECT = {"type": "object"}  # free-form Kubernetes objects (resources, probes, affinity...)
_SECRET_KEY = {"type": "string", "pattern": "^[-._a-zA-Z0-9]+$"}  # a Secret's data key, as Kubernetes takes it


def _strict(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _config_schema() -> dict[str, Any]:
    """ragpulse's config schema, with its definitions under draft-07's `definitions` (helm's validator
    reads both; older tools only the draft-07 name)."""
    schema = msgspec.json.schema(Config)
    text = json.dumps(schema).replace('"#/$defs/', '"#/definitions/')
    converted = json.loads(text)
    definitions = converted.pop("$defs", {})
    return {"definitions": definitions, **converted}


def values_schema() -> dict[str, Any]:
    config = _config_schema()
    definitions = config.pop("definitions")
    labels = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "ragpulse chart values",
        "definitions": definitions,
        **_strict({
            "replicaCount": {"type": "integer", "minimum": 0},
            "image": _strict({"repository": _STRING, "tag": _STRING,
                              "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]}}, ("repository",)),
            "imagePullSecrets": {"type": "array"},
            "nameOverride": _STRING,
            "fullnameOverride": _STRING,
            "serviceAccount": _strict({"create": _BOOL, "name": _STRING, "annotations": labels}),
            "podAnnotations": labels,
            "podLabels": labels,
            "podSecurityContext": _OBJECT,
            "securityContext": _OBJECT,
            "resources": _OBJECT,
            "service": _strict({"type": {"enum": ["ClusterIP", "NodePort", "LoadBalancer"]}, "httpPort": _PORT,
                                "otlpHttpPort": _PORT, "otlpGrpcPort": _PORT}),
            "headlessService": _strict({"enabled": _BOOL}),
            "judge": _strict({"existingSecret": _STRING, "existingSecretKey": {"type": "string", "minLength": 1}}),
            # The API and review tokens' Secret: the user's, or (empty) one the chart generates.
            "tokens": _strict({"existingSecret": _STRING, "apiTokenKey": _SECRET_KEY, "reviewTokenKey": _SECRET_KEY}),
            "extraEnv": {"type": "array", "items": _OBJECT},
            # A writable store only (no ReadOnlyMany); size a storage quantity, so "1GB" fails at lint, not install.
            "persistence": _strict({
                "enabled": _BOOL, "existingClaim": _STRING, "storageClassName": _STRING, "annotations": labels,
                "size": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?([KMGTPE]i|[kMGTPE])?$"},
                "accessModes": {"type": "array", "minItems": 1, "uniqueItems": True,
                                "items": {"enum": ["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"]}}}),
            "config": config,
            "livenessProbe": _OBJECT,
            "readinessProbe": _OBJECT,
            "serviceMonitor": _strict({"enabled": _BOOL, "namespace": _STRING, "labels": labels, "interval": _STRING,
                                       "scrapeTimeout": _STRING}),
            "prometheusRule": _strict({"enabled": _BOOL, "namespace": _STRING, "labels": labels}),
            "grafanaDashboards": _strict({"enabled": _BOOL, "namespace": _STRING, "labels": labels, "annotations": labels}),
            "podDisruptionBudget": _strict({"enabled": _BOOL, "minAvailable": {"type": ["integer", "string"]}}),
            "autoscaling": _strict({"enabled": _BOOL, "minReplicas": {"type": "integer", "minimum": 1},
                                    "maxReplicas": {"type": "integer", "minimum": 1},
                                    "targetCPUUtilizationPercentage": {"type": "integer", "minimum": 1, "maximum": 100}}),
            "nodeSelector": labels,
            "tolerations": {"type": "array"},
            "affinity": _OBJECT,
        }),
    }


def render(rules_yaml: str, dashboards: dict[str, str]) -> dict[str, str]:
    """Chart-relative path -> text of every generated file of the chart."""
    files = {"values.schema.json": json.dumps(values_schema(), indent=2, sort_keys=True) + "\n",
             "files/ragpulse.rules.yaml": rules_yaml}
    files.update({f"files/dashboards/{name}": text for name, text in dashboards.items()})
    return files
