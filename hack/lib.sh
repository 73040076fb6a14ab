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

# suite_split DIR: fills the arrays `shared` and `single` with the scenario
# folders of the chainsaw suite DIR (folders starting with _ are helpers):
# a folder holding a `.controllers` file is a single-controller suite, run on
# its own control plane with only those controllers; the others share one.
suite_split() {
  shared=() single=()
  local d
  for d in "$1"/*/; do
    d=${d%/}
    case "$(basename "${d}")" in _*) continue ;; esac
    if [[ -f "${d}/.controllers" ]]; then single+=("${d}"); else shared+=("${d}"); fi
  done
}

# chainsaw_run DIR REPORT ARGS...: `chainsaw test ARGS...` with its JSON
# report in DIR/REPORT.json, and the run's outcome in DIR/REPORT.status: the
# exit code on the first line, then the lines of chainsaw's output that name
# a failure. chainsaw's report is written as each test's steps end, so a
# failure after them (the test namespace's deletion timing out in cleanup)
# fails the run but not the report: the status file keeps it, and
# hack/tools/testsum counts it.
chainsaw_run() {
  local dir=$1 report=$2; shift 2
  local out status=0
  out=$(mktemp)
  chainsaw test --no-color --report-format JSON --report-path "${dir}" --report-name "${report}" "$@" 2>&1 |
    tee "${out}" || status=${PIPESTATUS[0]}
  { echo "${status}"; grep -E -e '--- FAIL|^Done with|^Error: ' "${out}" || true; } > "${dir}/${report}.status"
  rm -f "${out}"
  return "${status}"
}

# chainsaw_not_run DIR REPORT WHY: records in DIR/REPORT.status that the
# run REPORT could not start, and why.
chainsaw_not_run() {
  printf '1\nnot run: %s\n' "$3" > "$1/$2.status"
}
