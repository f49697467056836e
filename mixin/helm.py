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


def _strict(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


_STRING = {"type": "string"}
_BOOL = {"type": "boolean"}
_PORT = {"type": "integer", "minimum": 1, "maximum": 65535}
_OBJECT = {"type": "object"}  # free-form Kubernetes objects (resources, probes, affinity...)
_SECRET_KEY = {"type": "string", "pattern": "^[-._a-zA-Z0-9]+$"}  # a Secret's data key, as Kubernetes takes it
# The strings the templates write into YAML as they are (names, keys, durations): a pattern per kind, as Kubernetes
# takes them, so "a: b" is refused naming the value instead of breaking the rendered YAML ("" where it may be empty).
_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_NAME = {"type": "string", "maxLength": 253, "pattern": f"^({_LABEL}(\\.{_LABEL})*)?$"}  # a DNS subdomain, or ""
_NAMESPACE = {"type": "string", "maxLength": 63, "pattern": f"^({_LABEL})?$"}
_OVERRIDE = {"type": "string", "pattern": f"^({_LABEL})?$"}  # objects' names: a DNS label (the templates cut it at 63)
_DURATION = {"type": "string",  # the Prometheus Operator's own pattern for a ServiceMonitor's interval
             "pattern": "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"}
_PATH = "[a-z0-9]+([._-]+[a-z0-9]+)*"  # an image repository's path component
_IMAGE = _strict({
    "repository": {"type": "string", "pattern": f"^([A-Za-z0-9.-]+(:[0-9]+)?/)?{_PATH}(/{_PATH})*$"},
    "tag": {"type": "string", "pattern": "^([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(@sha256:[a-f0-9]{64})?)?$"},
    "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]}}, ("repository",))
# What the templates read without a guard (`.Values.x.y` of a missing x, `ternary`, `dig`): missing, helm template
# would stop on a Go template error that helm lint lets pass, so the schema requires them.
_READ_BY_THE_TEMPLATES = ("image", "serviceAccount", "service", "headlessService", "judge", "tokens", "persistence",
                          "serviceMonitor", "prometheusRule", "grafanaDashboards", "podDisruptionBudget", "autoscaling")


def _config_schema() -> dict[str, Any]:
    """ragpulse's config schema, with its definitions under draft-07's `definitions` (helm's validator
    reads both; older tools only the draft-07 name)."""
    schema = msgspec.json.schema(Config)
    text = json.dumps(schema).replace('"#/$defs/', '"#/definitions/')
    converted = json.loads(text)
    definitions = converted.pop("$defs", {})
    return {"definitions": definitions, **converted}


def _at(path: tuple[str, ...], schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` for the value at `path`, which must be there."""
    for key in reversed(path):
        schema = {"properties": {key: schema}, "required": [key]}
    return schema


def _one_writer() -> dict[str, Any]:
    """The templates' `ragpulse.checkPersistence`: with a claim, at most one pod (replicaCount, or maxReplicas when
    the HPA owns the count), since SQLite takes one writer per file."""
    claim = {"anyOf": [_at(("persistence", "enabled"), {"const": True}),
                       _at(("persistence", "existingClaim"), {"minLength": 1})]}
    at_most_one = {"maximum": 1}
    return {"if": claim, "then": {"if": _at(("autoscaling", "enabled"), {"const": True}),
                                  "then": {"properties": {"autoscaling": {"properties": {"maxReplicas": at_most_one}}}},
                                  "else": {"properties": {"replicaCount": at_most_one}}}}


def values_schema() -> dict[str, Any]:
    config = _config_schema()
    definitions = config.pop("definitions")
    labels = {"type": "object", "additionalProperties": {"type": "string"}}
    values = _strict({
        "replicaCount": {"type": "integer", "minimum": 0},
        "image": _IMAGE,
        "imagePullSecrets": {"type": "array"},
        "nameOverride": _OVERRIDE,
        "fullnameOverride": _OVERRIDE,
        "serviceAccount": _strict({"create": _BOOL, "name": _NAME, "annotations": labels}),
        "podAnnotations": labels,
        "podLabels": labels,
        "podSecurityContext": _OBJECT,
        "securityContext": _OBJECT,
        "resources": _OBJECT,
        "service": _strict({"type": {"enum": ["ClusterIP", "NodePort", "LoadBalancer"]}, "httpPort": _PORT,
                            "otlpHttpPort": _PORT, "otlpGrpcPort": _PORT}),
        "headlessService": _strict({"enabled": _BOOL}),
        "judge": _strict({"existingSecret": _NAME, "existingSecretKey": _SECRET_KEY}),
        # The API and review tokens' Secret: the user's, or (empty) one the chart generates.
        "tokens": _strict({"existingSecret": _NAME, "apiTokenKey": _SECRET_KEY, "reviewTokenKey": _SECRET_KEY},
                          ("apiTokenKey", "reviewTokenKey")),
        "extraEnv": {"type": "array", "items": _OBJECT},
        # A writable store only (no ReadOnlyMany); size a storage quantity, so "1GB" fails at lint, not install.
        "persistence": _strict({
            "enabled": _BOOL, "existingClaim": _NAME, "storageClassName": _STRING, "annotations": labels,
            "size": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?([KMGTPE]i|[kMGTPE])?$"},
            "accessModes": {"type": "array", "minItems": 1, "uniqueItems": True,
                            "items": {"enum": ["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"]}}}),
        "config": config,
        "livenessProbe": _OBJECT,
        "readinessProbe": _OBJECT,
        "serviceMonitor": _strict({"enabled": _BOOL, "namespace": _NAMESPACE, "labels": labels, "interval": _DURATION,
                                   "scrapeTimeout": _DURATION}),
        "prometheusRule": _strict({"enabled": _BOOL, "namespace": _NAMESPACE, "labels": labels}),
        "grafanaDashboards": _strict({"enabled": _BOOL, "namespace": _NAMESPACE, "labels": labels,
                                      "annotations": labels}),
        "podDisruptionBudget": _strict({"enabled": _BOOL, "minAvailable": {"anyOf": [
            {"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+%$"}]}}),
        "autoscaling": _strict({"enabled": _BOOL, "minReplicas": {"type": "integer", "minimum": 1},
                                "maxReplicas": {"type": "integer", "minimum": 1},
                                "targetCPUUtilizationPercentage": {"type": "integer", "minimum": 1, "maximum": 100}},
                               ("enabled",)),
        "nodeSelector": labels,
        "tolerations": {"type": "array"},
        "affinity": _OBJECT,
    }, _READ_BY_THE_TEMPLATES)
    return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "ragpulse chart values",
            "definitions": definitions, **values, "allOf": [_one_writer()]}


def render(rules_yaml: str, dashboards: dict[str, str]) -> dict[str, str]:
    """Chart-relative path -> text of every generated file of the chart."""
    files = {"values.schema.json": json.dumps(values_schema(), indent=2, sort_keys=True) + "\n",
             "files/ragpulse.rules.yaml": rules_yaml}
    files.update({f"files/dashboards/{name}": text for name, text in dashboards.items()})
    return files
