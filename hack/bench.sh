#!/usr/bin/env bash
# Measures the Helm backend and the gateway controllers against the design's
# performance budget on a private local control plane (etcd on tmpfs), and
# prints the figures.
#
#   hack/bench.sh [N]     N instances (default 2000; the budget's memory
#                         figure is defined at 10000); BENCH_ROUTES routes
#                         for route-conflicts (default 5000)
#
# First the appdef and helm controllers: the baseline client uses the
# controller's own QPS, burst and worker count, so the ratios compare like
# with like. Then the four gateway controllers.
source "$(dirname "$0")/lib.sh"
N=${1:-2000}
DIR="${CACHE}/bench"
export PORT_BASE=${BENCH_PORT_BASE:-22000} CONTROLLER_PORT_BASE=${BENCH_CONTROLLER_PORT_BASE:-22600}
QPS=50 BURST=100 WORKERS=4 RESYNC=30s

cleanup() {
  "${ROOT}/hack/controllers.sh" stop "${DIR}" || true
  "${ROOT}/hack/cluster.sh" down "${DIR}" || true
}
trap cleanup EXIT
rm -rf "${DIR}" && mkdir -p "${DIR}"
"${ROOT}/hack/cluster.sh" up "${DIR}"
"${ROOT}/hack/controllers.sh" build
CONTROLLER_ARGS="--kube-api-qps=${QPS} --kube-api-burst=${BURST} --workers=${WORKERS}" RESYNC_PERIOD=${RESYNC} \
  "${ROOT}/hack/controllers.sh" start "${DIR}" appdef helm
# controllers.sh gives the i-th named controller metrics port base+2i.
metrics="http://127.0.0.1:$((CONTROLLER_PORT_BASE + 4))/metrics"
(cd "${ROOT}/bench" && GOWORK=off go build -o "${BIN}/bench" ./cmd/bench)
"${BIN}/bench" --kubeconfig "${DIR}/kubeconfig" --n "${N}" --qps "${QPS}" --burst "${BURST}" --workers "${WORKERS}" \
  --metrics "${metrics}" --pid "$(cat "${DIR}/helm.pid")" --resync "${RESYNC}"

# The gateway controllers: a TenantGateway with 60 routes, route-conflicts
# over ROUTES routes, idle writes and memory. Started on their own metrics
# ports (controllers.sh numbers the controllers of one start call from 1).
ROUTES=${BENCH_ROUTES:-5000}
gateway=(gateway-listeners gateway-certs ns-labels route-conflicts)
GW_PORT_BASE=$((CONTROLLER_PORT_BASE + 100))
CONTROLLER_PORT_BASE=${GW_PORT_BASE} CONTROLLER_ARGS="--kube-api-qps=${QPS} --kube-api-burst=${BURST} --workers=${WORKERS}" \
  RESYNC_PERIOD=${RESYNC} "${ROOT}/hack/controllers.sh" start "${DIR}" "${gateway[@]}"
metrics=() pids=() i=0
for c in "${gateway[@]}"; do
  i=$((i + 1))
  metrics+=("${c}=http://127.0.0.1:$((GW_PORT_BASE + 2 * i))/metrics")
  pids+=("${c}=$(cat "${DIR}/${c}.pid")")
done
(cd "${ROOT}/bench" && GOWORK=off go build -o "${BIN}/gatewaybench" ./cmd/gatewaybench)
"${BIN}/gatewaybench" --kubeconfig "${DIR}/kubeconfig" --routes "${ROUTES}" --resync "${RESYNC}" \
  --metrics "$(IFS=,; echo "${metrics[*]}")" --pids "$(IFS=,; echo "${pids[*]}")"
