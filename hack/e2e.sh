#!/usr/bin/env bash
# Runs the chainsaw e2e suite against a freshly started local control plane
# with the controllers running, then tears everything down.
#
#   hack/e2e.sh                      the whole suite
#   hack/e2e.sh DIR...               only these test directories
#
# A top-level directory of tests/chainsaw holding a `.controllers` file is a
# single-controller suite: its scenarios prove that the controllers listed in
# that file work on their own, so the whole-suite run gives each such
# directory a fresh control plane with only those controllers running. Every
# other directory runs on one control plane with every controller.
# E2E_CONTROLLERS="a b" overrides the controllers of a run with DIR arguments
# (default: all, or the `.controllers` of a single-controller suite given alone).
#
# Identities: the policies are rendered by the policies chart with
# POLICY_VALUES (default: none, Cozystack's layout), gateway-listeners gets the
# cert-manager namespace of the same values (hack/policies.sh,
# hack/controllers.sh), and the scenarios that play Flux, tofu-controller or
# cert-manager read where they run from FLUX_NAMESPACE, TOFU_NAMESPACE and
# CERT_MANAGER_NAMESPACE (defaults cozy-fluxcd, cozy-fluxcd,
# cozy-cert-manager), and FLUX_ALL_IN_ONE is the ServiceAccount the policies
# trust as Cozystack's all-in-one Flux (flux; a stock Flux has none, and
# values-stock.yaml names helm-controller there). E2E_IDENTITIES=stock sets
# them all for a stock install (charts/policies/values-stock.yaml:
# flux-system, flux-system, cert-manager, helm-controller).
# The whole-suite run ends with the scenarios listed in
# tests/chainsaw/stock-identities.list once more with E2E_IDENTITIES=stock
# (report chainsaw-report-stock-identities*.json);
#
#   hack/e2e.sh --stock-identities   only that pass
#
# A scenario folder holding a `.envoy-gateway` file (or below one) is judged
# by a real Gateway API implementation: a run that includes it starts Envoy
# Gateway's control plane beside the control plane (hack/envoy-gateway.sh)
# and fails when it cannot start. Its ports are fixed, so such runs take a
# machine-wide lock (${TMPDIR:-/tmp}/cozyplane-envoy-gateway.lock) and wait
# for each other.
#
# The suite is cluster-agnostic: it only needs a kubeconfig and running
# controllers, so the same tests run here and on a kind cluster.
source "$(dirname "$0")/lib.sh"
# E2E_DIR (default .cache/e2e) holds the control plane, the lock and the
# reports; with different E2E_DIR and port bases, runs can share a checkout.
E2E="${E2E_DIR:-${CACHE}/e2e}"
REPORTS_DIR=$([[ -n "${E2E_DIR:-}" ]] && echo "${E2E}" || echo "${CACHE}")
mkdir -p "${E2E}"
export PORT_BASE=${E2E_PORT_BASE:-21000}
export CONTROLLER_PORT_BASE=${E2E_CONTROLLER_PORT_BASE:-21600}
SUITE="${ROOT}/tests/chainsaw"

# stock_identities: the identities of a stock install (Flux and tofu-controller
# in flux-system, cert-manager in cert-manager), for this shell.
stock_identities() {
  export POLICY_VALUES="${ROOT}/charts/policies/values-stock.yaml"
  export FLUX_NAMESPACE=flux-system TOFU_NAMESPACE=flux-system CERT_MANAGER_NAMESPACE=cert-manager FLUX_ALL_IN_ONE=helm-controller
}
case "${E2E_IDENTITIES:-}" in
  stock) stock_identities ;;
  ""|cozystack) ;;
  *) die "E2E_IDENTITIES=${E2E_IDENTITIES}: want stock or cozystack" ;;
esac
export FLUX_NAMESPACE=${FLUX_NAMESPACE:-cozy-fluxcd}
export TOFU_NAMESPACE=${TOFU_NAMESPACE:-cozy-fluxcd}
export CERT_MANAGER_NAMESPACE=${CERT_MANAGER_NAMESPACE:-cozy-cert-manager}
export FLUX_ALL_IN_ONE=${FLUX_ALL_IN_ONE:-flux}
[[ -z "${POLICY_VALUES:-}" ]] || export POLICY_VALUES

# One e2e run at a time per E2E_DIR: the runs share ports and that directory.
exec 9>"${E2E}.lock"
if ! flock -n 9; then
  log "another e2e run holds ${E2E}.lock; waiting for it"
  flock 9
fi

cleanup() {
  "${ROOT}/hack/envoy-gateway.sh" stop "${E2E}" || true
  "${ROOT}/hack/controllers.sh" stop "${E2E}" || true
  "${ROOT}/hack/cluster.sh" down "${E2E}" || true
}
trap cleanup EXIT

# Malformed tests fail fast, before a control plane is started.
"${ROOT}/hack/tools.sh" chainsaw
while IFS= read -r f; do
  chainsaw lint test -f "${f}" >/dev/null 2>"${E2E}.lint.err" || { cat "${E2E}.lint.err" >&2; die "invalid chainsaw test ${f}"; }
done < <(find "${SUITE}" -name chainsaw-test.yaml | sort)
"${ROOT}/hack/controllers.sh" build

# needs_envoy_gateway DIR...: true when a scenario of DIRs is judged by Envoy
# Gateway: a `.envoy-gateway` file in a DIR, below it, or in a folder of the
# suite above it.
needs_envoy_gateway() {
  local d up
  for d in "$@"; do
    d=$(cd "${d}" && pwd)
    [[ -z "$(find "${d}" -name .envoy-gateway -print -quit)" ]] || return 0
    up=${d}
    while [[ "${up}" == "${SUITE}"/* ]]; do
      [[ ! -f "${up}/.envoy-gateway" ]] || return 0
      up=$(dirname "${up}")
    done
  done
  return 1
}

# run REPORT CONTROLLERS DIR...: one control plane, CONTROLLERS (a
# space-separated list; empty: all) running as their charts' identities,
# chainsaw over DIRs, report in .cache/REPORT.json.
run() {
  local report=$1 controllers=$2; shift 2
  # A fresh state directory; with E2E_DIR the reports land there too, and
  # the reports of this invocation's earlier runs stay.
  mkdir -p "${E2E}"
  find "${E2E}" -mindepth 1 -maxdepth 1 ! -name 'chainsaw-report*.json' ! -name 'chainsaw-report*.status' -exec rm -rf {} +
  # run is called as `run ... || status=$?`, where bash ignores set -e: each
  # setup step is checked, so a policy the API server refuses fails the run.
  local failed=""
  "${ROOT}/hack/cluster.sh" up "${E2E}" || failed="the control plane did not start"
  # The admission policies, as in production (make dev-up installs them too).
  [[ -n "${failed}" ]] || "${ROOT}/hack/policies.sh" "${E2E}" || failed="the admission policies were not installed"
  # Every controller runs as its chart's ServiceAccount, with only its
  # chart's RBAC: a missing verb fails the suite.
  # shellcheck disable=SC2086
  [[ -n "${failed}" ]] || "${ROOT}/hack/rbac.sh" "${E2E}" ${controllers} || failed="the controllers' RBAC was not applied"
  # The neighbours the scenarios play (Flux, tofu-controller, cert-manager)
  # get the RBAC a real install gives them (tests/chainsaw/_scripts/neighbours).
  [[ -n "${failed}" ]] || KUBECONFIG="${E2E}/kubeconfig" "${SUITE}/_scripts/neighbours/rbac.sh" || failed="the neighbours' RBAC was not applied"
  # shellcheck disable=SC2086
  [[ -n "${failed}" ]] || "${ROOT}/hack/controllers.sh" start "${E2E}" ${controllers} || failed="the controllers did not start"
  local eg=""
  if [[ -z "${failed}" ]] && needs_envoy_gateway "$@"; then
    eg=yes
    exec 8>"${TMPDIR:-/tmp}/cozyplane-envoy-gateway.lock"
    if ! flock -n 8; then
      log "another e2e run is running Envoy Gateway; waiting for it (at most an hour)"
      flock -w 3600 8 || failed="Envoy Gateway's machine-wide lock was not free within an hour"
    fi
    [[ -n "${failed}" ]] || "${ROOT}/hack/envoy-gateway.sh" start "${E2E}" || failed="Envoy Gateway, which scenarios of this run need, did not start"
  fi
  if [[ -n "${failed}" ]]; then
    log "${failed}: ${report} not run"
    chainsaw_not_run "${REPORTS_DIR}" "${report}" "${failed}"
    "${ROOT}/hack/envoy-gateway.sh" stop "${E2E}" || true
    [[ -z "${eg}" ]] || exec 8>&-
    "${ROOT}/hack/controllers.sh" stop "${E2E}" || true
    "${ROOT}/hack/cluster.sh" down "${E2E}" || true
    return 1
  fi
  local policies="default identities"
  [[ -z "${POLICY_VALUES:-}" ]] || policies="values ${POLICY_VALUES#"${ROOT}/"}"
  log "chainsaw: ${*#"${ROOT}/"} with controllers: ${controllers:-all}; Flux in ${FLUX_NAMESPACE}, cert-manager in ${CERT_MANAGER_NAMESPACE}, policies with ${policies}"
  local status=0
  # chainsaw and the kubectl in test scripts read KUBECONFIG; the catch
  # blocks read controller logs from COZY_LOG_DIR.
  KUBECONFIG="${E2E}/kubeconfig" COZY_LOG_DIR="${E2E}" \
    chainsaw_run "${REPORTS_DIR}" "${report}" --config "${SUITE}/.chainsaw.yaml" "$@" || status=$?
  if [[ ${status} -ne 0 ]]; then
    local f
    for f in "${E2E}"/*.log; do
      case "$(basename "${f}")" in etcd.log|kube-apiserver.log|kube-controller-manager.log) continue ;; esac
      echo "---- last lines of $(basename "${f}")"; tail -n 40 "${f}"
    done
  fi
  "${ROOT}/hack/envoy-gateway.sh" stop "${E2E}" || true
  [[ -z "${eg}" ]] || exec 8>&-
  "${ROOT}/hack/controllers.sh" stop "${E2E}" || true
  "${ROOT}/hack/cluster.sh" down "${E2E}" || true
  return ${status}
}

# stock_pass: the scenarios of tests/chainsaw/stock-identities.list (one
# directory a line, relative to tests/chainsaw; # comments; a directory
# that does not exist fails the run, so a renamed scenario cannot silently
# drop out of the pass) with a stock install's identities: those
# of single-controller suites on their own control plane with their
# controllers, the others on one.
stock_pass() {
  local line d top status=0
  local -a shared_dirs=() single_tops=()
  local -A single_dirs=()
  while IFS= read -r line; do
    line=${line%%#*}; line=${line//[[:space:]]/}
    [[ -n "${line}" ]] || continue
    d="${SUITE}/${line%/}"
    [[ -d "${d}" ]] || die "tests/chainsaw/stock-identities.list names ${line}, which does not exist: fix the list"
    top="${SUITE}/${line%%/*}"
    if [[ -f "${top}/.controllers" ]]; then
      [[ -n "${single_dirs[${top}]:-}" ]] || single_tops+=("${top}")
      single_dirs[${top}]+=" ${d}"
    else
      shared_dirs+=("${d}")
    fi
  done < "${SUITE}/stock-identities.list"
  (
    stock_identities
    if [[ ${#shared_dirs[@]} -gt 0 ]]; then
      run chainsaw-report-stock-identities "" "${shared_dirs[@]}" || status=$?
    fi
    for top in "${single_tops[@]}"; do
      # shellcheck disable=SC2086 # the directories, space-separated
      run "chainsaw-report-stock-identities-$(basename "${top}")" "$(tr '\n' ' ' < "${top}/.controllers")" ${single_dirs[${top}]} || status=$?
    done
    exit ${status}
  )
}

rm -f "${REPORTS_DIR}"/chainsaw-report*.json "${REPORTS_DIR}"/chainsaw-report*.status
status=0
if [[ "${1:-}" == --stock-identities ]]; then
  stock_pass || status=$?
  exit ${status}
fi
if [[ $# -gt 0 ]]; then
  controllers=${E2E_CONTROLLERS:-}
  # One single-controller suite given alone runs with its own controllers.
  if [[ -z "${controllers}" && $# -eq 1 && -f "${1%/}/.controllers" ]]; then
    controllers=$(tr '\n' ' ' < "${1%/}/.controllers")
  fi
  run chainsaw-report "${controllers}" "$@" || status=$?
  exit ${status}
fi

suite_split "${SUITE}"
run chainsaw-report "" "${shared[@]}" || status=$?
for d in "${single[@]}"; do
  run "chainsaw-report-$(basename "${d}")" "$(tr '\n' ' ' < "${d}/.controllers")" "${d}" || status=$?
done
stock_pass || status=$?
exit ${status}
