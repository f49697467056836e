#!/usr/bin/env bash
# Builds the benchmark's OpenTelemetry Collector with the Collector Builder (ocb) from the Go module proxy.
# Prints the binary's path. Not part of CI: only bench/bench_otlp_collector.py needs it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
builder_version=v0.165.0
gobin="$(go env GOPATH)/bin"
if [[ ! -x "$gobin/builder" ]] || [[ "$("$gobin/builder" version 2>/dev/null)" != *"${builder_version#v}"* ]]; then
  echo "installing the Collector Builder $builder_version" >&2
  go install "go.opentelemetry.io/collector/cmd/builder@$builder_version"
fi
if [[ ! -x "$here/build/otelcol-bench" ]]; then
  echo "building the Collector (a few minutes the first time)" >&2
  (cd "$here" && "$gobin/builder" --config builder-config.yaml >&2)
fi
echo "$here/build/otelcol-bench"
