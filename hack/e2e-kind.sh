#!/usr/bin/env bash
# Runs the chainsaw e2e suite on a kind cluster, for machines with Docker: the
# controllers run as real Deployments from their images, installed with the
# umbrella chart. CI has no Docker engine and runs hack/e2e.sh on the local
# control plane instead; the suite is the same.
#
#   hack/e2e-kind.sh [chainsaw test dir...]
#
# KIND_CLUSTER names the cluster (default cozyplane-e2e); KEEP_CLUSTER=1 keeps
# it afterwards. The kind CLI and the cluster configuration both come from
# tests/kind, which pins sigs.k8s.io/kind.
source "$(dirname "$0")/lib.sh"
command -v docker >/dev/null 2>&1 || die "make e2e-kind needs Docker; without it, run make e2e (the local control plane)"
NAME=${KIND_CLUSTER:-cozyplane-e2e}
DIR="${CACHE}/kind"
TAG=e2e
SUITE="${ROOT}/tests/chainsaw"
mkdir -p "${DIR}"

"${ROOT}/hack/tools.sh" crds helm chainsaw
log "building kind from tests/kind"
(cd "${ROOT}/tests/kind" && GOWORK=off go build -o "${BIN}/kind" sigs.k8s.io/kind)
(cd "${ROOT}/tests/kind" && GOWORK=off go run . config --name "${NAME}") > "${DIR}/cluster.yaml"

if ! kind get clusters 2>/dev/null | grep -qx "${NAME}"; then
  kind create cluster --config "${DIR}/cluster.yaml" --kubeconfig "${DIR}/kubeconfig" --wait 180s
fi
kind get kubeconfig --name "${NAME}" > "${DIR}/kubeconfig"
export KUBECONFIG="${DIR}/kubeconfig"
[[ "${KEEP_CLUSTER:-}" == 1 ]] || trap 'kind delete cluster --name "${NAME}"' EXIT

mapfile -t controllers < <("${ROOT}/hack/controllers.sh" list)
# The generator CLI, for the scenarios that turn a module into a definition.
(cd "${ROOT}/gen" && go build -o "${BIN}/gen" ./cmd/gen)
for c in "${controllers[@]}"; do
  log "image ${c}"
  docker build -q --build-arg CONTROLLER="${c}" -t "ghcr.io/cozyplane/${c}:${TAG}" "${ROOT}" >/dev/null
  kind load docker-image --name "${NAME}" "ghcr.io/cozyplane/${c}:${TAG}"
done

# Third-party CRDs (HelmRelease, Terraform, Gateway API, cert-manager), the
# same as on the local control plane; ours come with the chart.
"${ROOT}/hack/cluster.sh" crds "${DIR}"
[[ -x "${ROOT}/hack/policies.sh" ]] && "${ROOT}/hack/policies.sh" "${DIR}"
# The neighbours the scenarios play (Flux, tofu-controller, cert-manager)
# get the RBAC a real install gives them, as on the local control plane.
"${SUITE}/_scripts/neighbours/rbac.sh"

# install ENABLED...: the umbrella chart with exactly these components.
install() {
  local args=(--set crds.enabled=true) c
  for c in "${controllers[@]}"; do
    local on=false
    [[ " $* " == *" ${c} "* ]] && on=true
    args+=(--set "${c}.enabled=${on}" --set "${c}.image.tag=${TAG}" --set "${c}.image.pullPolicy=Never")
  done
  helm dependency build "${ROOT}/charts/cozyplane" >/dev/null
  helm upgrade --install cozystack "${ROOT}/charts/cozyplane" --namespace cozy-system --create-namespace \
    "${args[@]}" --wait --timeout 5m
}

run() { # run REPORT DIR...
  local report=$1; shift
  chainsaw_run "${CACHE}" "${report}" --config "${SUITE}/.chainsaw.yaml" "$@"
}

# without_envoy_gateway DIR...: sets `kept` to the DIRs whose scenarios need
# no Envoy Gateway. Those under a `.envoy-gateway` file (in the DIR, below it
# or in a folder of the suite above it) are judged by Envoy Gateway's control
# plane, which hack/e2e.sh runs beside the local control plane and this
# cluster does not have: they are left out, and the run says so.
without_envoy_gateway() {
  kept=()
  local d up marked
  for d in "$@"; do
    d=$(cd "${d}" && pwd)
    marked=$(find "${d}" -name .envoy-gateway -print -quit)
    up=${d}
    while [[ -z "${marked}" && "${up}" == "${SUITE}"/* ]]; do
      [[ ! -f "${up}/.envoy-gateway" ]] || marked="${up}/.envoy-gateway"
      up=$(dirname "${up}")
    done
    if [[ -n "${marked}" ]]; then
      log "skipping ${d#"${ROOT}/"}: its scenarios are judged by Envoy Gateway (${marked#"${ROOT}/"}), which make e2e-kind does not install; make e2e runs them"
    else
      kept+=("${d}")
    fi
  done
}

status=0
if [[ $# -gt 0 ]]; then
  without_envoy_gateway "$@"
  [[ ${#kept[@]} -gt 0 ]] || die "nothing left to run on kind: every directory given needs Envoy Gateway (make e2e runs them)"
  install "${controllers[@]}"
  run chainsaw-report-kind "${kept[@]}" || status=$?
  exit ${status}
fi
suite_split "${SUITE}"
without_envoy_gateway "${shared[@]}"
install "${controllers[@]}"
run chainsaw-report-kind "${kept[@]}" || status=$?
for d in "${single[@]}"; do
  # shellcheck disable=SC2046
  install $(cat "${d}/.controllers")
  run "chainsaw-report-kind-$(basename "${d}")" "${d}" || status=$?
done
exit ${status}
