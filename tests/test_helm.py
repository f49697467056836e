"""The Helm chart, with the real helm: lint and template over several values files, every rendered
manifest valid against the Kubernetes schemas (kubernetes-validate), the rules and dashboards the
generated ones, ragpulse's own config check on the ConfigMap, and wrong values refused by the schema."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tomllib
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
# The test's values files, and the examples of ragpulse's own values (the two tiers of docs/scaling-out.md).
VALUES = [*sorted((Path(__file__).resolve().parent / "helm").glob("*.yaml")), *sorted((ROOT / "helm" / "examples").glob("ragpulse-*.yaml"))]
KUBERNETES = "1.30.0"


def helm_binary() -> str:
    found = shutil.which(os.environ.get("HELM") or "helm")
    assert found, "helm is missing: scripts/test installs it (scripts/tools.sh, go install) and sets HELM"
    return found


def run_helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm_binary(), *args], capture_output=True, text=True, timeout=120)


def template(*args: str) -> list[dict[str, Any]]:
    rendered = run_helm("template", "rp", str(CHART), "--namespace", "rag", *args)
    assert rendered.returncode == 0, rendered.stderr
    return [doc for doc in yaml.safe_load_all(rendered.stdout) if doc]


def manifests(values: Path) -> list[dict[str, Any]]:
    return template("-f", str(values))


def deployment_spec(docs: list[dict[str, Any]]) -> dict[str, Any]:
    [deployment] = [doc for doc in docs if doc["kind"] == "Deployment"]
    return deployment["spec"]


def data_volume(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The pod's volume for /var/lib/ragpulse (the bad-case store)."""
    pod = deployment_spec(docs)["template"]["spec"]
    [mount] = [m for m in pod["containers"][0]["volumeMounts"] if m["mountPath"] == "/var/lib/ragpulse"]
    [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    return volume


def claims(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["kind"] == "PersistentVolumeClaim"]


@pytest.mark.unit
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
    # The pod listens on 0.0.0.0: user data is refused there without the API and review tokens, so it always has them.
    tokens = {"existingSecret": "", "apiTokenKey": "api-token", "reviewTokenKey": "review-token", **expected.get("tokens", {})}
    secret = tokens["existingSecret"] or "rp-ragpulse-tokens"
    assert {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"] if e["name"].startswith("RAGPULSE_HTTP__")} == {
        "RAGPULSE_HTTP__API_TOKEN": {"name": secret, "key": tokens["apiTokenKey"]},
        "RAGPULSE_HTTP__REVIEW_TOKEN": {"name": secret, "key": tokens["reviewTokenKey"]}}
    assert (config.api_token(), config.review_token()) == ("from-a-secret", "from-a-secret")
    generated = [doc["metadata"]["name"] for doc in docs if doc["kind"] == "Secret"]
    assert generated == ([] if tokens["existingSecret"] else ["rp-ragpulse-tokens"])


def test_everything_on_renders_the_generated_rules_and_dashboards() -> None:
    docs = {doc["kind"]: doc for doc in manifests(next(v for v in VALUES if v.stem == "everything"))}
    assert set(docs) >= {"ServiceMonitor", "PrometheusRule", "HorizontalPodAutoscaler", "PodDisruptionBudget"}
    assert docs["PrometheusRule"]["spec"] == yaml.safe_load(render(DEFAULTS))  # the same rules, unchanged
    assert docs["PrometheusRule"]["metadata"]["labels"]["release"] == "prometheus"
    assert docs["ServiceMonitor"]["spec"]["endpoints"][0]["port"] == "http"
    assert "replicas" not in docs["Deployment"]["spec"]  # the HPA owns it
    assert data_volume(list(docs.values())) == {"name": "data", "emptyDir": {}}  # several replicas: no claim
    boards = [doc for doc in manifests(next(v for v in VALUES if v.stem == "everything"))
              if doc["kind"] == "ConfigMap" and doc["metadata"]["name"].endswith("-dashboards")]
    [board] = boards
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert board["data"] == dashboards.render(DEFAULTS)


def nested(settings: dict[str, Any]) -> dict[str, Any]:
    """{"a.b": 1} -> {"a": {"b": 1}}: a values file's content from dotted keys (None: the key left out)."""
    values: dict[str, Any] = {}
    for key, value in settings.items():
        *parents, leaf = key.split(".")
        node = values
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return values


BREAKS_YAML = "a: b"  # written into the manifest as it is, it would end the line's mapping
# Every way `helm template` refuses values, each with the message both it and `helm lint --strict` must give, naming
# the value: the templates' one `fail`, the values they read unguarded, the strings they write into YAML as they are,
# and wrong types, enums and ranges. The shipped values (tests/helm/minimal.yaml) and the examples pass both:
# test_lint_and_template_give_valid_kubernetes_manifests.
REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    # ragpulse.checkPersistence: one writer on the SQLite file. Before the schema said so, lint --strict passed these.
    "claim-2-replicas": ({"persistence.enabled": True, "replicaCount": 2}, "at '/replicaCount': maximum: got 2, want 1"),
    "existing-claim-2-replicas": ({"persistence.existingClaim": "data", "replicaCount": 2},
                                  "at '/replicaCount': maximum: got 2, want 1"),
    "claim-autoscaled": ({"persistence.enabled": True, "autoscaling.enabled": True},
                         "at '/autoscaling/maxReplicas': maximum: got 4, want 1"),
    "existing-claim-autoscaled": ({"persistence.existingClaim": "data", "autoscaling.enabled": True,
                                   "autoscaling.maxReplicas": 3}, "at '/autoscaling/maxReplicas': maximum: got 3, want 1"),
    # Read unguarded (a nil pointer, `ternary` of nothing, `dig` of nothing): lint --strict passed these too.
    **{f"no-{key}": ({key: None}, f"at '': missing property '{key}'") for key in (
        "image", "serviceAccount", "service", "headlessService", "judge", "tokens", "persistence", "serviceMonitor",
        "prometheusRule", "grafanaDashboards", "podDisruptionBudget", "autoscaling")},
    "no-image.repository": ({"image.repository": None}, "at '/image': missing property 'repository'"),
    "no-tokens.apiTokenKey": ({"tokens.apiTokenKey": None}, "at '/tokens': missing property 'apiTokenKey'"),
    "no-tokens.reviewTokenKey": ({"tokens.reviewTokenKey": None}, "at '/tokens': missing property 'reviewTokenKey'"),
    "no-autoscaling.enabled": ({"autoscaling.enabled": None}, "at '/autoscaling': missing property 'enabled'"),
    # Written into YAML as they are: both refused these before, with a YAML parse error naming no value.
    **{f"yaml-{key}": ({key: value, **enabling}, f"at '/{key.replace('.', '/')}': '{value}' does not match pattern")
       for key, value, enabling in (
           ("nameOverride", BREAKS_YAML, {}), ("fullnameOverride", BREAKS_YAML, {}),
           ("image.repository", 'ragpulse"', {}), ("image.tag", '1.0"', {}),
           ("serviceAccount.name", BREAKS_YAML, {}),
           ("judge.existingSecret", BREAKS_YAML, {}),
           ("judge.existingSecretKey", BREAKS_YAML, {"judge.existingSecret": "judge"}),
           ("tokens.existingSecret", BREAKS_YAML, {}),
           ("persistence.existingClaim", BREAKS_YAML, {}),
           ("serviceMonitor.namespace", BREAKS_YAML, {"serviceMonitor.enabled": True}),
           ("serviceMonitor.interval", BREAKS_YAML, {"serviceMonitor.enabled": True}),
           ("serviceMonitor.scrapeTimeout", BREAKS_YAML, {"serviceMonitor.enabled": True}),
           ("prometheusRule.namespace", BREAKS_YAML, {"prometheusRule.enabled": True}),
           ("grafanaDashboards.namespace", BREAKS_YAML, {"grafanaDashboards.enabled": True}))},
    "yaml-podDisruptionBudget.minAvailable": ({"podDisruptionBudget.minAvailable": BREAKS_YAML, "replicaCount": 2},
                                              "at '/podDisruptionBudget/minAvailable': 'anyOf' failed"),
    # Wrong types, enums and ranges (ternary takes a bool, dig string keys), keys that do not exist.
    "autoscaling.enabled-not-bool": ({"autoscaling.enabled": "yes"}, "at '/autoscaling/enabled': got string, want boolean"),
    "replicaCount-string": ({"replicaCount": "2"}, "at '/replicaCount': got string, want integer"),
    "replicaCount-negative": ({"replicaCount": -1}, "at '/replicaCount': minimum: got -1, want 0"),
    "apiTokenKey-number": ({"tokens.apiTokenKey": 1}, "at '/tokens/apiTokenKey': got number, want string"),
    "apiTokenKey-slash": ({"tokens.apiTokenKey": "api/token"}, "at '/tokens/apiTokenKey': 'api/token' does not match pattern"),
    "service.type": ({"service.type": "Internal"}, "at '/service/type'"),
    "http.port": ({"config.http.port": "notaport"}, "at '/config/http/port': got string, want integer"),
    "config-unknown": ({"config.nope.option": 1}, "additional properties 'nope' not allowed"),
    "sample_rate": ({"config.judge.sample_rate": 2}, "at '/config/judge/sample_rate'"),
    "temporality": ({"config.interop.otlp_metrics.temporality": "weekly"}, "at '/config/interop/otlp_metrics/temporality'"),
    "phoenix-typo": ({"config.interop.phoenix.base_ur": "http://phoenix:6006"}, "additional properties 'base_ur' not allowed"),
    "serviceMonitor-typo": ({"serviceMonitor.enabeld": True}, "additional properties 'enabeld' not allowed"),
    "tokens-typo": ({"tokens.existingSecert": "mine"}, "additional properties 'existingSecert' not allowed"),
    "persistence.size": ({"persistence.size": "1GB"}, "at '/persistence/size': '1GB' does not match pattern"),
    "read-only-store": ({"persistence.accessModes": ["ReadOnlyMany"]}, "at '/persistence/accessModes/0'"),
}


@pytest.mark.parametrize(("settings", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_lint_strict_refuses_what_template_refuses_naming_the_value(settings: dict[str, Any], message: str,
                                                                      tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(nested(settings)))
    for command in (("lint", "--strict", str(CHART)), ("template", "rp", str(CHART))):
        refused = run_helm(*command, "-f", str(values))
        assert refused.returncode != 0, (command[0], settings)
        assert message in refused.stdout + refused.stderr, (command[0], refused.stdout + refused.stderr)


def test_the_api_and_review_tokens_are_generated_random_and_apart() -> None:
    """No cluster to look the last install's Secret up in (helm template): each render generates new tokens."""
    renders = [[doc for doc in template() if doc["kind"] == "Secret"] for _ in range(2)]
    tokens = [base64.b64decode(value).decode() for [secret] in renders for value in secret["data"].values()]
    assert [sorted(secret["data"]) for [secret] in renders] == [["api-token", "review-token"]] * 2
    assert all(re.fullmatch("[A-Za-z0-9]{40}", token) for token in tokens), tokens
    assert len(set(tokens)) == 4  # the two scopes' tokens differ, and so do two installs'
    kubernetes_validate.validate(renders[0][0], KUBERNETES, strict=True)


def test_the_store_is_on_an_emptydir_by_default() -> None:
    docs = template()
    assert claims(docs) == []
    assert data_volume(docs) == {"name": "data", "emptyDir": {}}
    assert "strategy" not in deployment_spec(docs)  # Kubernetes' RollingUpdate


def test_persistence_enabled_creates_the_claim_the_pod_mounts() -> None:
    docs = manifests(next(v for v in VALUES if v.stem == "persistence"))
    [claim] = claims(docs)
    assert claim["metadata"]["name"] == "rp-ragpulse"
    assert claim["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert claim["spec"] == {"accessModes": ["ReadWriteOncePod"], "storageClassName": "fast-ssd",
                             "resources": {"requests": {"storage": "5Gi"}}}
    assert data_volume(docs) == {"name": "data", "persistentVolumeClaim": {"claimName": "rp-ragpulse"}}
    # One writer on the SQLite file: the old pod goes before the new one starts.
    assert deployment_spec(docs)["strategy"] == {"type": "Recreate"}
    assert deployment_spec(docs)["replicas"] == 1


def test_the_chart_claim_defaults_to_1gi_readwriteonce_on_the_default_storage_class() -> None:
    [claim] = claims(template("--set", "persistence.enabled=true"))
    assert "annotations" not in claim["metadata"]
    # No storageClassName at all: "" would mean "no class" (static volumes only), not the cluster's default.
    assert claim["spec"] == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}


@pytest.mark.parametrize("enabled", ["false", "true"])
def test_an_existing_claim_is_mounted_and_none_created(enabled: str) -> None:
    docs = template("--set", "persistence.existingClaim=ragpulse-data", "--set", f"persistence.enabled={enabled}")
    assert claims(docs) == []
    assert data_volume(docs) == {"name": "data", "persistentVolumeClaim": {"claimName": "ragpulse-data"}}
    assert deployment_spec(docs)["strategy"] == {"type": "Recreate"}


ONE_WRITER = ("persistence needs a single replica: the bad-case store is one SQLite file, which takes one writer, "
              "and this would run up to {} pods on its claim. Run one replica (replicaCount: 1, and "
              "autoscaling.enabled: false or autoscaling.maxReplicas: 1), or turn persistence off "
              '(persistence.enabled: false, persistence.existingClaim: ""; each replica then keeps its own store '
              "on an emptyDir).")


@pytest.mark.parametrize(("settings", "pods"), [
    (("persistence.enabled=true", "replicaCount=2"), 2),
    (("persistence.existingClaim=ragpulse-data", "replicaCount=2"), 2),
    (("persistence.enabled=true", "autoscaling.enabled=true"), 4),  # the HPA may scale to maxReplicas
])
def test_persistence_with_several_replicas_fails_to_render(settings: tuple[str, ...], pods: int) -> None:
    """The schema refuses these first (test_lint_strict_refuses_what_template_refuses_naming_the_value); without it
    the template's own check still does, and says why."""
    refused = run_helm("template", "rp", str(CHART), "--skip-schema-validation",
                       *(arg for s in settings for arg in ("--set", s)))
    assert refused.returncode != 0, settings
    assert ONE_WRITER.format(pods) in refused.stderr, refused.stderr


def test_persistence_with_an_autoscaler_capped_at_one_replica_renders() -> None:
    docs = template("--set", "persistence.enabled=true", "--set", "autoscaling.enabled=true",
                    "--set", "autoscaling.maxReplicas=1")
    assert data_volume(docs) == {"name": "data", "persistentVolumeClaim": {"claimName": "rp-ragpulse"}}


# The extras that a value under the chart's `config:` needs in the image: extra -> (config path, value,
# the distribution the extra must bring).
IMAGE_EXTRAS = {"confluent": (("kafka", "client"), "confluent-kafka", "confluent-kafka"),
                "report": (("report", "schedule", "daily"), True, "matplotlib")}
# Kept out of the image on purpose: embeddings brings torch (build your own image for embeddings.enabled);
# mixin and test are for development. A new extra in pyproject must be put in one of the two.
NOT_IN_THE_IMAGE = {"embeddings", "mixin", "test"}


def dockerfile_extras() -> set[str]:
    """The extras of the Dockerfile's `pip install "ragpulse[a,b]"` (or `".[a,b]"`; continuation lines joined,
    comments skipped)."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    installs = [line for line in text.splitlines() if "pip install" in line and not line.lstrip().startswith("#")]
    assert installs, "no pip install in the Dockerfile"
    return {extra.strip() for line in installs for spec in re.findall(r"(?:\.|ragpulse)\[([^\]]*)\]", line)
            for extra in spec.split(",") if extra.strip()}


def schema_at(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The values schema's node for a key path under `config`, through its $refs."""
    def resolved(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = schema["definitions"][node["$ref"].removeprefix("#/definitions/")]
        return node

    node = schema["properties"]["config"]
    for key in path:
        node = resolved(node)["properties"][key]
    return resolved(node)


@pytest.mark.unit
def test_the_image_installs_the_extras_the_chart_can_select() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    schema = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    assert set(extras) == set(IMAGE_EXTRAS) | NOT_IN_THE_IMAGE, "a new extra: does the image need it?"
    for extra, (path, value, distribution) in IMAGE_EXTRAS.items():
        node = schema_at(schema, path)  # the chart's values can choose it: an enum's value, or a switch
        assert value in node["enum"] if "enum" in node else (node["type"], value) == ("boolean", True), (path, value)
        assert any(re.match(rf"{distribution}\b", req) for req in extras[extra]), (extra, extras[extra])
    installed = dockerfile_extras()
    assert installed <= set(extras), f"the Dockerfile names extras pyproject lacks: {installed - set(extras)}"
    assert installed == set(IMAGE_EXTRAS), f"the image installs {installed}, the chart needs {set(IMAGE_EXTRAS)}"


def test_the_headless_service_names_every_replica_for_the_collectors_load_balancer() -> None:
    assert not [d for d in template() if d["kind"] == "Service" and d["metadata"]["name"].endswith("-headless")]
    docs = template("--set", "headlessService.enabled=true", "--set", "replicaCount=3")
    [headless] = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"].endswith("-headless")]
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    assert headless["spec"]["clusterIP"] == "None" and deployment["spec"]["replicas"] == 3
    assert headless["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert [(p["name"], p["port"], p["targetPort"]) for p in headless["spec"]["ports"]] == [("otlp-grpc", 4317, "otlp-grpc")]
    kubernetes_validate.validate(headless, KUBERNETES, strict=True)


def test_the_two_tier_examples_fit_together(tmp_path: Path) -> None:
    """helm/examples/ragpulse-forward.yaml publishes to the topic ragpulse-analyse.yaml consumes, on the same broker;
    the forwarders have the headless Service the Collector's load balancer resolves, and consume nothing."""
    configs = {}
    for role in ("forward", "analyse"):
        docs = manifests(ROOT / "helm" / "examples" / f"ragpulse-{role}.yaml")
        [config_map] = [doc for doc in docs if doc["kind"] == "ConfigMap" and "config.yaml" in doc["data"]]
        (tmp_path / f"{role}.yaml").write_text(config_map["data"]["config.yaml"])
        configs[role] = (load_config(tmp_path / f"{role}.yaml", environ={}), docs)
    (forward, forward_docs), (analyse, _) = configs["forward"], configs["analyse"]
    assert forward.kafka.topics == [] and [t.name for t in analyse.kafka.topics] == [forward.forward.topic]
    assert forward.kafka.bootstrap_servers == analyse.kafka.bootstrap_servers and analyse.forward.topic is None
    assert sorted(d["metadata"]["name"] for d in forward_docs if d["kind"] == "Service") == ["rp-ragpulse", "rp-ragpulse-headless"]


def test_the_example_collector_values_hold_a_config_the_collector_accepts(tmp_path: Path) -> None:
    """helm/examples/otel-collector-loadbalancing.yaml: its `config`, as the upstream chart hands it to the
    Collector, validated by the Collector this repository builds (bench/otelcol), load balancer included; a
    wrong routing key is refused the same way."""
    from helpers.otelcol import collector_binary

    example = yaml.safe_load((ROOT / "helm" / "examples" / "otel-collector-loadbalancing.yaml").read_text())
    exporter = example["config"]["exporters"]["load_balancing"]
    assert exporter["resolver"]["dns"]["hostname"].startswith("ragpulse-headless.")
    for routing_key, accepted in (("traceID", True), ("sessionID", False)):
        exporter["routing_key"] = routing_key
        config = tmp_path / f"collector-{routing_key}.json"
        config.write_text(json.dumps(example["config"]))
        checked = subprocess.run([collector_binary(), "validate", f"--config={config}"], capture_output=True, text=True,
                                 timeout=60)
        assert (checked.returncode == 0) is accepted, checked.stdout + checked.stderr


@pytest.mark.parametrize(("args", "replicas"), [
    ((), 1),
    (("--set", "replicaCount=3"), 3),  # behind a load balancer: the routine floor counts 3 replicas' traffic
    (("--set", "replicaCount=3", "--set", "config.judge.replicas=5"), 5),  # given: it wins
    (("-f", str(ROOT / "tests" / "helm" / "everything.yaml")), 2),  # the autoscaler: its minReplicas
    (("-f", str(ROOT / "helm" / "examples" / "ragpulse-analyse.yaml")), 1),  # a consumer group: each its partitions' share
    (("-f", str(ROOT / "helm" / "examples" / "ragpulse-forward.yaml")), 1),  # forwarders judge nothing
])
def test_the_replicas_behind_a_load_balancer_draw_one_routine_floor(args: tuple[str, ...], replicas: int, tmp_path: Path) -> None:
    [config_map] = [doc for doc in template(*args) if doc["kind"] == "ConfigMap" and "config.yaml" in doc["data"]]
    (tmp_path / "config.yaml").write_text(config_map["data"]["config.yaml"])
    assert load_config(tmp_path / "config.yaml", environ={}).judge.replicas == replicas
