"""The Helm chart, with the real helm: lint and template over several values files, every rendered
manifest valid against the Kubernetes schemas (kubernetes-validate), the rules and dashboards the
generated ones, ragpulse's own config check on the ConfigMap, and wrong values refused by the schema."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from ragpulse.config import load_config
from ragpulse.mixin import dashboards, helm
from ragpulse.mixin.rules import DEFAULTS, render

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "helm" / "ragpulse"
VALUES = sorted((Path(__file__).resolve().parent / "helm").glob("*.yaml"))
KUBERNETES = "1.30.0"


def helm_binary() -> str:
    found = shutil.which(os.environ.get("HELM") or "helm")
    assert found, "helm is missing: scripts/test installs it (scripts/tools.sh, go install) and sets HELM"
    return found


def run_helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm_binary(), *args], capture_output=True, text=True, timeout=120)


def manifests(values: Path) -> list[dict[str, Any]]:
    rendered = run_helm("template", "rp", str(CHART), "--namespace", "rag", "-f", str(values))
    assert rendered.returncode == 0, rendered.stderr
    return [doc for doc in yaml.safe_load_all(rendered.stdout) if doc]


def test_the_chart_files_are_generated_from_the_source() -> None:
    for name, text in helm.render(render(DEFAULTS), dashboards.render(DEFAULTS)).items():
        assert (CHART / name).read_text(encoding="utf-8") == text, f"regenerate: python -m ragpulse.mixin ({name})"


@pytest.mark.parametrize("values", VALUES, ids=[v.stem for v in VALUES])
def test_lint_and_template_give_valid_kubernetes_manifests(values: Path, tmp_path: Path) -> None:
    linted = run_helm("lint", "--strict", str(CHART), "-f", str(values))
    assert linted.returncode == 0, linted.stdout + linted.stderr
    docs = manifests(values)
    kinds = sorted(doc["kind"] for doc in docs)
    for doc in docs:
        if doc["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # CRDs: no schema in kubernetes-validate; checked below
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)
    [deployment] = [doc for doc in docs if doc["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["args"] == ["run", "--config", "/etc/ragpulse/config.yaml"]
    [config_map] = [doc for doc in docs if doc["kind"] == "ConfigMap" and "config.yaml" in doc["data"]]
    # What ragpulse itself makes of it in the pod: the file, and the environment (secrets filled in).
    config_file = tmp_path / "config.yaml"
    config_file.write_text(config_map["data"]["config.yaml"])
    environ = {e["name"]: e.get("value", "from-a-secret") for e in container.get("env", [])}
    config = load_config(config_file, environ=environ)
    assert config.results.sqlite_path == "/var/lib/ragpulse/ragpulse-badcases.sqlite3"
    assert "Service" in kinds and "ServiceAccount" in kinds
    # A disruption budget only where it can be met: one replica with minAvailable 1 would block every drain.
    replicas = (expected_values := yaml.safe_load(values.read_text()) or {}).get("replicaCount", 1)
    if expected_values.get("autoscaling", {}).get("enabled"):
        replicas = expected_values["autoscaling"].get("minReplicas", 1)
    assert ("PodDisruptionBudget" in kinds) == (replicas > 1), (values.stem, replicas)
    secret_env = [e for e in container.get("env", []) if e["name"] == "RAGPULSE_JUDGE__API_KEY"]
    expected = yaml.safe_load(values.read_text()) or {}
    if expected.get("judge", {}).get("existingSecret"):
        assert secret_env[0]["valueFrom"]["secretKeyRef"]["name"] == expected["judge"]["existingSecret"]
    else:
        assert secret_env == []


def test_everything_on_renders_the_generated_rules_and_dashboards() -> None:
    docs = {doc["kind"]: doc for doc in manifests(next(v for v in VALUES if v.stem == "everything"))}
    assert set(docs) >= {"ServiceMonitor", "PrometheusRule", "HorizontalPodAutoscaler", "PodDisruptionBudget"}
    assert docs["PrometheusRule"]["spec"] == yaml.safe_load(render(DEFAULTS))  # the same rules, unchanged
    assert docs["PrometheusRule"]["metadata"]["labels"]["release"] == "prometheus"
    assert docs["ServiceMonitor"]["spec"]["endpoints"][0]["port"] == "http"
    assert "replicas" not in docs["Deployment"]["spec"]  # the HPA owns it
    claim = next(v for v in docs["Deployment"]["spec"]["template"]["spec"]["volumes"] if v["name"] == "data")
    assert claim["persistentVolumeClaim"]["claimName"] == "ragpulse-data"
    boards = [doc for doc in manifests(next(v for v in VALUES if v.stem == "everything"))
              if doc["kind"] == "ConfigMap" and doc["metadata"]["name"].endswith("-dashboards")]
    [board] = boards
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert board["data"] == dashboards.render(DEFAULTS)


@pytest.mark.parametrize(("setting", "message"), [
    ("config.http.port=notaport", "at '/config/http/port': got string, want integer"),
    ("config.nope.option=1", "additional properties 'nope' not allowed"),
    ("config.judge.sample_rate=2", "at '/config/judge/sample_rate'"),
    ("replicaCount=-1", "at '/replicaCount'"),
    ("service.type=Internal", "at '/service/type'"),
    ("serviceMonitor.enabeld=true", "additional properties 'enabeld' not allowed"),
])
def test_a_wrong_value_is_refused_by_the_schema(setting: str, message: str) -> None:
    for command in (("lint", str(CHART)), ("template", "rp", str(CHART))):
        refused = run_helm(*command, "--set", setting)
        assert refused.returncode != 0, setting
        assert message in refused.stdout + refused.stderr, refused.stdout + refused.stderr
