#!/usr/bin/env bash
# Runs the chainsaw e2e suite against a freshly started local control plane
# with every controller running, then tears everything down.
#
#   hack/e2e.sh [chainsaw test dir...]   (default: tests/chainsaw)
#
# The suite is cluster-agnostic: it only needs a kubeconfig and running
# controllers, so the same tests run here and on a kind cluster.
source "$(dirname "$0")/lib.sh"
E2E="${CACHE}/e2e"
export PORT_BASE=${E2E_PORT_BASE:-21000}
export CONTROLLER_PORT_BASE=${E2E_CONTROLLER_PORT_BASE:-21600}

# One e2e run at a time per checkout: the runs share ports and .cache/e2e.
exec 9>"${CACHE}/e2e.lock"
if ! flock -n 9; then
  log "another e2e run holds ${CACHE}/e2e.lock; waiting for it"
  flock 9
fi

cleanup() {
  "${ROOT}/hack/controllers.sh" stop "${E2E}" || true
  "${ROOT}/hack/cluster.sh" down "${E2E}" || true
}
trap cleanup EXIT

# Malformed tests fail fast, before a control plane is started.
"${ROOT}/hack/tools.sh" chainsaw
while IFS= read -r f; do
  chainsaw lint test -f "${f}" >/dev/null 2>"${CACHE}/lint.err" || { cat "${CACHE}/lint.err" >&2; die "invalid chainsaw test ${f}"; }
done < <(find "${ROOT}/tests/chainsaw" -name chainsaw-test.yaml | sort)

rm -rf "${E2E}"
mkdir -p "${E2E}"
"${ROOT}/hack/cluster.sh" up "${E2E}"
"${ROOT}/hack/controllers.sh" build
# Every controller runs as its chart's ServiceAccount, with only its chart's
# RBAC: a missing verb fails the suite.
# shellcheck disable=SC2086
"${ROOT}/hack/rbac.sh" "${E2E}" ${E2E_CONTROLLERS:-}
# E2E_CONTROLLERS="a b" runs only those controllers (a controller's scenarios
# must pass without the others).
# shellcheck disable=SC2086
"${ROOT}/hack/controllers.sh" start "${E2E}" ${E2E_CONTROLLERS:-}

dirs=("$@")
[[ ${#dirs[@]} -gt 0 ]] || dirs=("${ROOT}/tests/chainsaw")
status=0
# chainsaw and the kubectl in test scripts read KUBECONFIG; the catch blocks
# read controller logs from COZY_LOG_DIR.
export KUBECONFIG="${E2E}/kubeconfig" COZY_LOG_DIR="${E2E}"
chainsaw test --no-color --config "${ROOT}/tests/chainsaw/.chainsaw.yaml" \
  --report-format JSON --report-path "${CACHE}" --report-name chainsaw-report \
  "${dirs[@]}" || status=$?
if [[ ${status} -ne 0 ]]; then
  for f in "${E2E}"/*.log; do
    case "$(basename "${f}")" in etcd.log|kube-apiserver.log|kube-controller-manager.log) continue ;; esac
    echo "---- last lines of $(basename "${f}")"; tail -n 40 "${f}"
  done
fi
exit ${status}
