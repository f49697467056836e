"""ragpulse's monitoring mixin: Prometheus recording rules, alerts and their runbook, generated from one
Python source (rules.py, alerts.py, settings.py) and committed, so a plain Prometheus, the Helm chart
and the tests use the same files. `python -m ragpulse.mixin` writes them; tests/test_mixin.py fails
when the committed files differ from what the generator makes."""
