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

# What the wheel is built from (pyproject's packages and package data): a hash of it says whether an install is stale.
package_hash() {
    (cd "$ROOT" && find pyproject.toml README.md ./*.py ./*.pyi app collector config sources scorers feedback judging probes report exporters results interop \
        mixin native -path native/target -prune -o -type f ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z \
        | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

install_ragpulse() {  # $1: extras, e.g. "[test]" or ""
    local wheels started=$SECONDS hash stamp="$VENV/.ragpulse-installed"
    hash=$(package_hash)
    # Installed from these very files, with these extras (or, for none, with any): nothing to do.
    if [ -f "$stamp" ] && { grep -qxF "$hash $1" "$stamp" || { [ -z "$1" ] && grep -q "^$hash " "$stamp"; }; }; then
        echo "ragpulse: installed and unchanged since (delete $stamp to force a reinstall)" >&2
        return
    fi
    if ! command -v cargo >/dev/null; then
        echo "ragpulse: building needs a Rust toolchain (cargo on the PATH, Rust 1.85 or newer) for its compiled core, native/" >&2
        return 1
    fi
    echo "ragpulse: installing ragpulse$1 and its dependencies into $VENV (about a minute the first time, seconds after)..." >&2
    wheels=$(mktemp -d)
    "$VENV/bin/pip" wheel --quiet --no-deps --wheel-dir "$wheels" "$ROOT"
    local wheel=("$wheels"/ragpulse-*.whl)
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "${wheel[0]}$1"
    # Same version number, new code: replace the installed files.
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "${wheel[0]}"
    rm -rf "$wheels" "$ROOT/build" "$ROOT"/*.egg-info
    { grep "^$hash " "$stamp" 2>/dev/null || true; echo "$hash $1"; } > "$stamp.new" && mv "$stamp.new" "$stamp"
    echo "ragpulse: installed in $((SECONDS - started)) s" >&2
}
