#!/usr/bin/env bash
# A real Arize Phoenix server for integration tests, in a virtualenv of its own so
# its many pins never clash with ragpulse's .venv. Made once, then cached.
#   scripts/phoenix.sh venv   -> prints the cached venv's python (creates it if missing)
# Only the python path goes to stdout, so callers can do PY=$(scripts/phoenix.sh venv).
set -euo pipefail
VERSION=${PHOENIX_VERSION:-20.26.1}  # newest arize-phoenix installable on Python 3.11 here
PYTHON=${PYTHON:-python3}
VENV=${RAGPULSE_CACHE:-$HOME/.cache/ragpulse}/phoenix-$VERSION
STAMP=$VENV/.installed  # written last: without it the venv is half-made and is redone

make_venv() {
    [ -f "$STAMP" ] && return
    mkdir -p "$(dirname "$VENV")"
    # One maker at a time (scripts/test starts one early, in the background; a test may ask meanwhile).
    exec 9>"$VENV.lock"
    flock 9
    [ -f "$STAMP" ] && return
    echo "phoenix: installing arize-phoenix==$VERSION into $VENV (about a minute, once)..." >&2
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "arize-phoenix==$VERSION" >&2
    "$VENV/bin/python" -c 'import phoenix.server.main' >&2  # fail here, not in a test
    echo "$VERSION" > "$STAMP"
    echo "phoenix: ready" >&2
}

case ${1:-} in
    venv) make_venv; echo "$VENV/bin/python" ;;
    *) echo "usage: $0 venv" >&2; exit 2 ;;
esac
