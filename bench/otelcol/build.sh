#!/usr/bin/env bash
# Builds the benchmark's OpenTelemetry Collector with the Collector Builder (ocb) from the Go module proxy.
# Prints the binary's path. Used by bench/bench_otlp_collector.py and the interop tests (tests/helpers/otelcol.py);
# rebuilt when builder-config.yaml changes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
builder_version=v0.161.0
gobin="$(go env GOPATH)/bin"
if [[ ! -x "$gobin/builder" ]] || [[ "$("$gobin/builder" version 2>&1)" != *"${builder_version#v}"* ]]; then
  echo "installing the Collector Builder $builder_version" >&2
  go install "go.opentelemetry.io/collector/cmd/builder@$builder_version"
fi
stamp="$(sha256sum "$here/builder-config.yaml" | cut -d' ' -f1)"
mkdir -p "$here/build"
# One build at a time (scripts/test starts one early, in the background; a test may ask meanwhile).
exec 9>"$here/build/.lock"
flock 9
if [[ ! -x "$here/build/otelcol-bench" ]] || [[ "$(cat "$here/build/.config-sha256" 2>/dev/null)" != "$stamp" ]]; then
  echo "building the Collector (about 2 minutes on 2 cores the first time)" >&2
  (cd "$here" && "$gobin/builder" --config builder-config.yaml >&2)
  echo "$stamp" > "$here/build/.config-sha256"
fi
echo "$here/build/otelcol-bench"
