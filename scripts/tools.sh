#!/usr/bin/env bash
# The command-line tools the tests use besides Python: Prometheus and promtool (the rules' unit
# tests and the end-to-end checks against a real Prometheus), Alertmanager (alerts delivered to a
# webhook), tmux (the review tool driven in a real terminal) and chromium (the report opened as a person
# sees it, tests/test_report_page.py), from Debian's packages (root, or sudo); helm, built with `go install` from the Go module proxy. Each is installed once, when missing.
#
#   scripts/tools.sh            install what is missing; prints where helm is (HELM=...)
#   scripts/tools.sh --no-helm  the same without helm and chromium (the demo needs Prometheus and Alertmanager only)
set -euo pipefail
with_helm=1
[ "${1:-}" = "--no-helm" ] && with_helm=0

missing=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
[ "$with_helm" = 0 ] || command -v chromium >/dev/null 2>&1 || missing+=(chromium)
HELM_VERSION=v3.22.0
helm_bin=$(command -v helm || true)
if [ "$with_helm" = 1 ] && [ -z "$helm_bin" ] && command -v go >/dev/null 2>&1; then
    gobin="$(go env GOPATH)/bin/helm"
    if [ ! -x "$gobin" ]; then
        echo "building helm $HELM_VERSION with go install (a few minutes, once)..." >&2
        go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
    fi
    helm_bin=$gobin
fi
echo "HELM=${helm_bin:-helm}"

[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
echo "installing ${missing[*]} from Debian's packages (apt-get)..." >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >&2
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
# Debian starts the packaged Prometheus as a service; the tests run their own on free ports.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    "${as_root[@]}" systemctl stop prometheus >&2 || true
fi
