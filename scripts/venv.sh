# Sourced by scripts/test and scripts/demo: make .venv and install ragpulse into it
# as a regular (non-editable) wheel, the way a user gets it, so a subpackage
# missing from pyproject.toml fails here and not in production.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${RAGPULSE_VENV:-$ROOT/.venv}
PYTHON=${PYTHON:-python3}

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "ragpulse needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
    echo "ragpulse: creating the virtualenv $VENV" >&2
    "$PYTHON" -m venv "$VENV"
fi

install_ragpulse() {  # $1: extras, e.g. "[test]" or ""
    local wheels started=$SECONDS
    echo "ragpulse: installing ragpulse$1 and its dependencies into $VENV (about a minute the first time, seconds after)..." >&2
    wheels=$(mktemp -d)
    "$VENV/bin/pip" wheel --quiet --no-deps --wheel-dir "$wheels" "$ROOT"
    local wheel=("$wheels"/ragpulse-*.whl)
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "${wheel[0]}$1"
    # Same version number, new code: replace the installed files.
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "${wheel[0]}"
    rm -rf "$wheels" "$ROOT/build" "$ROOT"/*.egg-info
    echo "ragpulse: installed in $((SECONDS - started)) s" >&2
}
