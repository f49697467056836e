"""ragpulse's monitoring mixin: Prometheus rules (and, as they land, alerts and dashboards) generated
from one Python source and committed, so a plain Prometheus, the Helm chart and the tests use the
same files. `python -m ragpulse.mixin` writes them; tests/test_mixin.py fails when the committed
files differ from what the generator makes."""
