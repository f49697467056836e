"""Config, a leaf: the schema of every section, the loader (YAML, environment, --set) and the checks."""

from ragpulse.config.schema import *  # noqa: F401,F403
