"""Configuration: defaults, file, environment, flags, and errors that say what to fix."""

from __future__ import annotations

import os
import subprocess
from importlib import resources
from pathlib import Path

import msgspec
import pytest
import yaml
from helpers.sidecar import ragpulse_command

from ragpulse.app.cli import main
from ragpulse.config import Config, default_config_dict, ignored_environment, load_config, parse_config
from ragpulse.errors import ConfigError


def problems(data: object) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(data)
    return [str(p) for p in info.value.problems]


@pytest.mark.unit
def test_no_file_runs_on_defaults() -> None:
    assert load_config(None, environ={}) == Config()


@pytest.mark.unit
def test_example_file_documents_exactly_the_defaults() -> None:
    text = resources.files("ragpulse.config").joinpath("ragpulse.example.yaml").read_text(encoding="utf-8")
    assert parse_config(yaml.safe_load(text)) == Config()
    # Every option of every section appears in the example (rules are listed by name, being long).
    example = yaml.safe_load(text)
    for section, options in default_config_dict().items():
        missing = set(options) - set(example[section]) - {"rules"}
        assert not missing, f"{section}: {missing} not documented in ragpulse.example.yaml"


@pytest.mark.unit
def test_precedence_file_then_environment_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "ragpulse.yaml"
    path.write_text("http:\n  port: 9001\n  host: 127.0.0.1\nmetrics:\n  labels: [app]\n")
    config = load_config(
        path,
        environ={"RAGPULSE_HTTP__PORT": "9002", "RAGPULSE_METRICS__LABELS": "[app, route]", "RAGPULSE_HTTP__AUTH_TOKEN": "0123"},
        overrides={"http.port": "9003"},
    )
    assert (config.http.host, config.http.port, config.metrics.labels) == ("127.0.0.1", 9003, ["app", "route"])
    assert config.http.auth_token == "0123"  # stays a string


@pytest.mark.unit
def test_only_option_variables_are_read_and_a_mistyped_option_is_refused_by_name() -> None:
    # The project's scripts' variables name no option: they are not read, and do not stop the sidecar.
    scripts = {"RAGPULSE_KAFKA_HOME": "/x", "RAGPULSE_VENV": "/v", "RAGPULSE_CACHE": "/c", "RAGPULSE_DEMO_PORT": "8081"}
    assert load_config(None, environ={**scripts, "RAGPULSE_HTTP__PORT": "9002"}).http.port == 9002
    assert ignored_environment({**scripts, "RAGPULSE_HTTP__PORT": "9002", "RAGPULSE_CONFIG": "", "HOME": "/h"}) == [
        "RAGPULSE_CACHE", "RAGPULSE_DEMO_PORT", "RAGPULSE_KAFKA_HOME", "RAGPULSE_VENV"]
    for environ, expected in (
        ({"RAGPULSE_HTTP__PORTT": "1"}, "http.portt: unknown option 'portt'; did you mean 'port'? (from RAGPULSE_HTTP__PORTT)"),
        ({"RAGPULSE_KAFKAA__TOPICS": "[t]"}, "kafkaa: unknown section 'kafkaa'; did you mean 'kafka'? (from RAGPULSE_KAFKAA__TOPICS)"),
        ({"RAGPULSE_HTTP_PORT": "1"}, "http.port: RAGPULSE_HTTP_PORT is no option: an option's variable is "
                                      "RAGPULSE_<SECTION>__<OPTION>; did you mean RAGPULSE_HTTP__PORT?"),
        ({"RAGPULSE_LOCAL_SCORERS_ENABLED": "false"}, "local_scorers.enabled: RAGPULSE_LOCAL_SCORERS_ENABLED is no "
         "option: an option's variable is RAGPULSE_<SECTION>__<OPTION>; did you mean RAGPULSE_LOCAL_SCORERS__ENABLED?"),
        ({"RAGPULSE_JUDGE": "gpt"}, "judge: must be a mapping of options, got str (from RAGPULSE_JUDGE)"),
    ):
        with pytest.raises(ConfigError) as caught:
            load_config(None, environ={**scripts, **environ})
        assert [str(problem) for problem in caught.value.problems] == [expected]


@pytest.mark.unit
def test_config_file_from_environment(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("dedup:\n  window_seconds: 5\n")
    assert load_config(None, environ={"RAGPULSE_CONFIG": str(path)}).dedup.window_seconds == 5.0


@pytest.mark.unit
@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"http": {"prot": 1}}, ["http.prot: unknown option 'prot'; did you mean 'port'?"]),
        ({"htp": {}}, ["htp: unknown section 'htp'; did you mean 'http'?"]),
        ({"http": {"zzz": 1}}, ["http.zzz: unknown option 'zzz' (known: host, port, max_body_bytes, auth_token, "
                                "auth_token_file, api_token, api_token_file, review_token, review_token_file, "
                                "allow_unauthenticated_user_data, retry_after_seconds, idle_timeout_seconds, "
                                "body_timeout_seconds, max_connections)"]),
        ({"http": {"port": 70000}}, ["http.port: Expected `int` <= 65535; for example 8080 (the default)"]),
        ({"http": {"port": "eighty"}}, ["http.port: Expected `int`, got `str`; for example 8080 (the default)"]),
        ({"http": {"port": 9000.0}}, ["http.port: expected a whole number, got 9000.0"]),
        # Every problem at once: types, unknown names and the checks across options.
        ({"http": {"hots": "x", "port": "abc"}, "judge": {"sample_rate": 5, "concurrency": "many"}, "nonsense": {},
          "fallback": {"extra_rules": [{"name": "x", "pattern": "("}]}},
         ["http.hots: unknown option 'hots'; did you mean 'host'?",
          "http.port: Expected `int`, got `str`; for example 8080 (the default)",
          "judge.sample_rate: Expected `float` <= 1.0; for example 0.05 (the default)",
          "judge.concurrency: Expected `int`, got `str`; for example 4 (the default)",
          "nonsense: unknown section 'nonsense' (known: http, pipeline, limits, dedup, fallback, metrics, kafka, forward, otlp, "
          "local_scorers, embeddings, judge, results, calibration, satisfaction, probes, interop, report, logging)",
          "fallback.extra_rules[0].pattern: invalid regular expression (RE2 syntax): missing ): ("]),
        ({"limits": {"on_oversize": "drop"}}, ["limits.on_oversize: Invalid enum value 'drop'"]),
        ({"metrics": {"labels": ["app", "user_id"]}}, ["metrics.labels[1]: Invalid enum value 'user_id'"]),
        ({"fallback": {"extra_rules": [{"name": "Bad Name", "pattern": "x"}]}},
         ["fallback.extra_rules[0].name: Expected `str` matching regex '^[a-z][a-z0-9_]{0,62}$'"]),
        ({"fallback": {"extra_rules": [{"name": "x", "pattern": "("}, {"name": "en_not_found", "pattern": "y"}]}},
         ["fallback.extra_rules[0].pattern: invalid regular expression (RE2 syntax): missing ): (",
          "fallback.extra_rules[1].name: duplicate rule name 'en_not_found'"]),
        ({"fallback": {"rules": [{"name": "explicit", "pattern": "x"}]}},
         ["fallback.rules[0].name: 'explicit' is reserved for built-in signals"]),
        ({"metrics": {"score_buckets": [0.5, 0.1]}, "pipeline": {"queue_capacity_events": 10, "max_batch_events": 20}},
         ["pipeline.max_batch_events: must not exceed pipeline.queue_capacity_events",
          "metrics.score_buckets: must be a non-empty, strictly increasing list"]),
        ({"http": {"auth_token": "  "}}, ["http.auth_token: must not be empty; leave it unset to turn auth off"]),
        ({"http": {"api_token": "", "review_token": "r", "review_token_file": "/nonexistent/review"}},
         ["http.api_token: must not be empty; leave it unset for no token (its scope is then open on a loopback "
          "http.host only)", "http.review_token_file: set review_token or review_token_file, not both",
          "http.review_token_file: no such file: /nonexistent/review"]),
        ([1, 2], ["<root>: Expected `object`, got `array`"]),
        ({"kafka": {"bootstrap_servers": "b:9092", "topics": []}},
         ["kafka.topics: list at least one topic to consume (an empty list only with forward.topic: the connection is "
          "then the forwarder's alone)"]),
        ({"forward": {"topic": "events"}}, ["forward.topic: needs kafka.bootstrap_servers (the broker it publishes to)"]),
        ({"kafka": {"bootstrap_servers": "b:9092"}, "forward": {"topic": "ragpulse-events"}},
         ["forward.topic: is one of kafka.topics: a forwarding replica would read back what it publishes; set "
          "kafka.topics: [] on it"]),
        ({"kafka": {"bootstrap_servers": "b:9092", "topics": []}, "forward": {"topic": "e", "batch_events": 10, "max_queue_events": 5},
          "embeddings": {"enabled": True}},
         ["forward.batch_events: must be at most forward.max_queue_events (5)",
          "embeddings.enabled: is for the analysing replicas: a forwarding one (forward.topic) judges and exports nothing "
          "of its own"]),
        ({"kafka": {"bootstrap_servers": "b:9092", "topics": [{"name": "a"}], "dead_letter_topic": "a"}},
         ["kafka.dead_letter_topic: must not be one of the consumed topics"]),
        ({"kafka": {"bootstrap_servers": "b:9092", "security_protocol": "SASL_SSL"}},
         ["kafka.sasl_mechanism: security_protocol SASL_SSL needs sasl_mechanism and sasl_username",
          "kafka.sasl_password: SASL needs sasl_password or sasl_password_file"]),
        ({"kafka": {"bootstrap_servers": "b:9092", "sasl_mechanism": "PLAIN"}},
         ["kafka.sasl_mechanism: is set but security_protocol is not SASL_PLAINTEXT or SASL_SSL"]),
        ({"kafka": {"topics": [{"name": "a", "encoding": "avro"}]}}, ["kafka.topics[0].encoding: Invalid enum value 'avro'"]),
        ({"kafka": {"bootstrap_servers": "b:9092", "topics": [{"name": "a"}]}, "judge": {"replicas": 3}},
         ["judge.replicas: is for replicas behind a load balancer: a Kafka consumer's share of the traffic is its share "
          "of the topics' partitions (leave it at 1)"]),
        ({"judge": {"replicas": 0}, "satisfaction": {"reorder_seconds": 600}},
         ["judge.replicas: Expected `int` >= 1; for example 1 (the default)",
          "satisfaction.reorder_seconds: Expected `float` <= 60.0; for example 5.0 (the default)"]),
    ],
)
def test_errors_name_the_option_and_what_to_fix(data: object, expected: list[str]) -> None:
    assert problems(data) == expected


@pytest.mark.unit
def test_auth_token_file_is_read(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    assert parse_config({"http": {"auth_token_file": str(token)}}).auth_token() == "s3cret"
    assert problems({"http": {"auth_token_file": str(tmp_path / "missing")}}) == [
        f"http.auth_token_file: no such file: {tmp_path / 'missing'}"
    ]


@pytest.mark.unit
def test_config_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad, broken = tmp_path / "good.yaml", tmp_path / "bad.yaml", tmp_path / "broken.yaml"
    good.write_text("http:\n  port: 9000\n")
    bad.write_text("http:\n  port: 9000\n  hots: x\n")
    broken.write_text("http: [\n")
    assert main(["config", "check", str(good)]) == 0
    assert "OK" in capsys.readouterr().out
    assert main(["config", "check", str(bad)]) == 2
    assert f"invalid configuration ({bad})" in (err := capsys.readouterr().err) and "http.hots: unknown option 'hots'; did you mean 'host'?" in err
    assert main(["config", "check", str(broken)]) == 2
    assert "invalid YAML at line 2, column 1" in capsys.readouterr().err
    assert main(["config", "check", str(tmp_path / "absent.yaml")]) == 2
    assert "cannot read file: No such file or directory" in capsys.readouterr().err


@pytest.mark.unit
def test_config_show_redacts_secrets(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_HTTP__AUTH_TOKEN", "s3cret")
    monkeypatch.setenv("RAGPULSE_HTTP__API_TOKEN", "ap1-token")
    monkeypatch.setenv("RAGPULSE_HTTP__REVIEW_TOKEN", "rev1ew-token")
    monkeypatch.setenv("RAGPULSE_KAFKA__SASL_PASSWORD", "k4fka")
    monkeypatch.setenv("RAGPULSE_JUDGE__API_KEY", "sk-judge")
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert [secret for secret in ("s3cret", "ap1-token", "rev1ew-token", "k4fka", "sk-judge") if secret in out] == []
    shown = yaml.safe_load(out)
    secrets = [("http", "auth_token"), ("http", "api_token"), ("http", "review_token"), ("kafka", "sasl_password"),
               ("judge", "api_key")]
    assert [shown[section][option] for section, option in secrets] == ["<redacted>"] * 5
    for section, option in secrets:
        shown[section][option] = None
    assert msgspec.convert(shown, Config) == Config()


@pytest.mark.unit
def test_kafka_security_settings_and_secret_files(tmp_path: Path) -> None:
    from ragpulse.sources.kafka.kafka_python import client_settings

    secret = tmp_path / "sasl"
    secret.write_text("from-file\n")
    config = parse_config({"kafka": {"bootstrap_servers": "b1:9092, b2:9092", "security_protocol": "SASL_SSL",
                                     "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "rag",
                                     "sasl_password_file": str(secret)}})
    settings = client_settings(config.kafka)
    assert settings["bootstrap_servers"] == ["b1:9092", "b2:9092"]
    assert (settings["security_protocol"], settings["sasl_mechanism"]) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (settings["sasl_plain_username"], settings["sasl_plain_password"]) == ("rag", "from-file")
    assert settings["ssl_check_hostname"] is True


@pytest.mark.unit
def test_kafka_security_settings_in_librdkafka_names(tmp_path: Path) -> None:
    from ragpulse.sources.kafka.confluent import client_settings

    secret, ca = tmp_path / "sasl", tmp_path / "ca.pem"
    secret.write_text("from-file\n")
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    config = parse_config({"kafka": {"bootstrap_servers": "b1:9092, b2:9092", "client": "confluent-kafka",
                                     "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                                     "sasl_username": "rag", "sasl_password_file": str(secret), "ssl_cafile": str(ca),
                                     "ssl_check_hostname": False}})
    settings = client_settings(config.kafka)
    assert settings["bootstrap.servers"] == "b1:9092,b2:9092"
    assert (settings["security.protocol"], settings["sasl.mechanism"]) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (settings["sasl.username"], settings["sasl.password"]) == ("rag", "from-file")
    assert settings["ssl.ca.location"] == str(ca)
    assert settings["ssl.endpoint.identification.algorithm"] == "none"
    assert "ssl.certificate.location" not in settings  # unset options are left to librdkafka's defaults


@pytest.mark.unit
@pytest.mark.parametrize(
    ("overrides", "path", "message"),
    [
        ({"judge.mode": "llm"}, "judge.mode", "llm needs judge.base_url or an API key"),
        ({"judge.always_judge": "[{}]"}, "judge.always_judge[0]", "give at least one field"),
        ({"judge.always_judge": '[{"query_pattern": "(refund"}]'}, "judge.always_judge[0].query_pattern", "invalid regular expression"),
        ({"judge.sample_rate_overrides": "[{rate: 0.5}]"}, "judge.sample_rate_overrides[0]", "give an app, a route or both"),
        ({"judge.max_cost_per_day": "5"}, "judge.prices", "a cost budget needs the price of the judge model 'gpt-4o-mini'"),
        ({"results.kafka_topic": "judgments"}, "results.kafka_topic", "needs kafka.bootstrap_servers"),
        ({"judge.sample_rate": "1.5"}, "judge.sample_rate", "Expected `float` <= 1"),
    ],
)
def test_judging_options_are_validated(overrides: dict[str, str], path: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, overrides=overrides)
    problems = {problem.path: problem.message for problem in caught.value.problems}
    assert path in problems, problems
    assert message in problems[path]


def test_problems_from_the_environment_and_flags_name_them_and_never_echo_a_secret() -> None:
    def ragpulse(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ragpulse_command(), *args], capture_output=True, text=True, timeout=60,
                              env={**os.environ, **(env or {})})

    result = ragpulse("config", "show", env={"RAGPULSE_HTTP__PORT": "abc"})
    assert result.returncode == 2
    assert "invalid configuration (environment):" in result.stderr
    assert "http.port: Expected `int`, got `str`; for example 8080 (the default) (from RAGPULSE_HTTP__PORT)" in result.stderr
    result = ragpulse("config", "show", "--set", "judge.api_key=sk-SECRET-1", "--set", "judge.concurrency=0")
    assert result.returncode == 2 and "sk-SECRET-1" not in result.stdout + result.stderr
    assert "judge.concurrency: Expected `int` >= 1; for example 4 (the default) (from --set judge.concurrency)" in result.stderr
    result = ragpulse("config", "show", "--set", "judge.api_key=sk-SECRET-1")
    assert result.returncode == 0 and "sk-SECRET-1" not in result.stdout and "api_key: <redacted>" in result.stdout
    result = ragpulse("run", "--set", "judge.api_key")  # no value: the item is not echoed either
    assert result.returncode == 2 and "judge.api_key: expected --set PATH=VALUE" in result.stderr
