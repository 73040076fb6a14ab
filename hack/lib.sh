# shellcheck shell=bash
# Common settings for hack/ scripts. Source it; do not run it.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${ROOT}/.cache"
BIN="${CACHE}/bin"
mkdir -p "${BIN}"
export PATH="${BIN}:${PATH}"
export GOTOOLCHAIN=local

KUBE_VERSION=v1.36.3
GATEWAY_API_VERSION=v1.6.3
CERT_MANAGER_VERSION=v1.21.2
HELM_CONTROLLER_API_VERSION=v1.6.3

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# moddir MODULE@VERSION prints the module's directory in the module cache,
# downloading it through the Go module proxy when needed.
moddir() {
  (cd "${ROOT}/hack/tools/kube" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$1") |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}
