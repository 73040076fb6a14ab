#!/usr/bin/env bash
# Runs Envoy Gateway's control plane (a real Gateway API implementation;
# provider Kubernetes, no data plane) out of cluster against the local control
# plane in DIR, so that the e2e scenarios of tests/chainsaw/gateway-implementation
# have their Gateways, listeners and routes judged by it rather than by the test.
#
#   hack/envoy-gateway.sh start DIR   install its CRDs, certificates and GatewayClass,
#                                     start it and wait until it is ready
#   hack/envoy-gateway.sh stop DIR    stop it
#
# It reads DIR/kubeconfig (the local admin: it needs no RBAC of its own) and
# logs to DIR/envoy-gateway.log. Its GatewayClass is envoy-gateway
# (ENVOY_GATEWAY_CLASS), controller gateway.envoyproxy.io/gatewayclass-controller.
#
# What it needs from the machine, and how it is given without touching it:
# it reads its xDS certificates from the fixed path /certs and keeps a Wasm
# cache under /var/lib, so it runs as root in a private mount namespace
# (unshare -m), chrooted into DIR/envoy-gateway/root, a tree of read-only bind
# mounts of the system folders plus its own /certs and an empty /var/lib. Its
# health (:8081) and metrics (:8080) ports are fixed: only one run per machine
# can hold them, which hack/e2e.sh serialises with a machine-wide lock; a port
# already taken fails the start with the process that holds it named.
source "$(dirname "$0")/lib.sh"

cmd=${1:-}
DIR=$(cd "${2:?usage: $0 start|stop DIR}" && pwd)
EG="${DIR}/envoy-gateway"
PIDFILE="${DIR}/envoy-gateway.pid"
NS=envoy-gateway-system
CLASS=${ENVOY_GATEWAY_CLASS:-envoy-gateway}
CONTROLLER_NAME=gateway.envoyproxy.io/gatewayclass-controller
# The admin server's port is configurable: beside the API server's ports.
ADMIN_PORT=$(( ${PORT_BASE:-20000} + 519 ))
export KUBECONFIG="${DIR}/kubeconfig"

stop() {
  [[ -f "${PIDFILE}" ]] || return 0
  local pid; pid=$(cat "${PIDFILE}")
  if kill -0 "${pid}" 2>/dev/null; then
    kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-${pid}" 2>/dev/null || kill -KILL "${pid}" 2>/dev/null || true
  fi
  rm -f "${PIDFILE}"
}

# port_free PORT fails, naming the holder, when something listens on PORT.
port_free() {
  local holder; holder=$(ss -Hltnp "sport = :$1" 2>/dev/null || true)
  [[ -z "${holder}" ]] && return 0
  log "port $1, which Envoy Gateway needs, is taken: ${holder}"
  return 1
}

# rootfs builds the tree Envoy Gateway is chrooted into; it is mounted in
# the private mount namespace only (see run_in_namespace).
rootfs() {
  rm -rf "${EG}/root"
  mkdir -p "${EG}/root" "${EG}/certs"
  local d
  for d in bin sbin lib lib32 lib64 libx32; do
    if [[ -L "/${d}" ]]; then ln -s "$(readlink "/${d}")" "${EG}/root/${d}"
    elif [[ -d "/${d}" ]]; then mkdir -p "${EG}/root/${d}"; fi
  done
  mkdir -p "${EG}/root"/{usr,etc,dev,proc,sys,tmp,certs,var/lib} "${EG}/root${DIR}" "${EG}/root${BIN}"
}

# The script run as root inside `unshare -m`: nothing it mounts is seen
# outside, and it all goes when Envoy Gateway exits.
read -r -d '' NAMESPACE_SCRIPT <<'SH' || true
set -eu
root=$1; dir=$2; bin=$3; shift 3
mount --make-rprivate /
for d in usr etc bin sbin lib lib32 lib64 libx32; do
  [ -d "/$d" ] && [ ! -L "/$d" ] && mount --bind "/$d" "$root/$d" && mount -o remount,bind,ro "$root/$d"
done
mount --rbind /dev "$root/dev"
mount --rbind /proc "$root/proc"
mount --rbind /sys "$root/sys"
mount -t tmpfs tmpfs "$root/tmp"
# DIR and BIN may lie under /tmp (a checkout there): their mount points are
# made again on the fresh tmpfs, which hides those made before.
mkdir -p "$root$dir" "$root$bin"
mount --bind "$dir" "$root$dir"
mount --bind "$bin" "$root$bin"
mount --bind "$dir/envoy-gateway/certs" "$root/certs"
exec chroot "$root" "$@"
SH

start() {
  [[ $(id -u) -eq 0 ]] || die "Envoy Gateway needs root here: it runs in a private mount namespace with its own /certs"
  command -v unshare >/dev/null || die "unshare (util-linux) is needed to run Envoy Gateway"
  "${ROOT}/hack/tools.sh" envoy-gateway
  stop
  local p
  for p in 8080 8081; do port_free "${p}" || die "Envoy Gateway cannot start: free port ${p} (another e2e run's Envoy Gateway?)"; done
  port_free "${ADMIN_PORT}" || die "Envoy Gateway cannot start: free port ${ADMIN_PORT}"

  local mod
  mod=$(cd "${ROOT}/hack/tools/envoy-gateway" && GOWORK=off GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/envoyproxy/gateway)
  [[ -d "${mod}/charts/gateway-helm/charts/crds/crds/generated" ]] || die "Envoy Gateway's module has no CRDs at ${mod}/charts/gateway-helm/charts/crds/crds/generated"
  # Its own CRDs (EnvoyProxy is 1.4 MB: server-side). The Gateway API CRDs
  # stay the control plane's own (hack/cluster.sh).
  log "Envoy Gateway: CRDs, certificates and GatewayClass ${CLASS}"
  kubectl apply --server-side --force-conflicts -f "${mod}/charts/gateway-helm/charts/crds/crds/generated/" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null
  kubectl create namespace "${NS}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  # Its xDS server's certificates, as Secrets (not --local: files only the
  # Host provider reads); the topology injector's webhook does not exist.
  ENVOY_GATEWAY_NAMESPACE="${NS}" envoy-gateway certgen --disable-topology-injector >"${EG}.certgen.log" 2>&1 ||
    { cat "${EG}.certgen.log" >&2; die "Envoy Gateway's certgen failed"; }
  rootfs
  local key
  for key in tls.crt tls.key ca.crt; do
    kubectl -n "${NS}" get secret envoy-gateway -o "jsonpath={.data.${key//./\\.}}" | base64 -d > "${EG}/certs/${key}"
    [[ -s "${EG}/certs/${key}" ]] || die "Envoy Gateway's Secret ${NS}/envoy-gateway has no ${key}"
  done
  # Misspelt keys are ignored silently: these are checked against
  # api/v1alpha1/envoygateway_types.go of v1.9.1.
  cat > "${EG}/config.yaml" <<EOF
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyGateway
gateway:
  controllerName: ${CONTROLLER_NAME}
provider:
  type: Kubernetes
  kubernetes:
    leaderElection:
      disable: true
    proxyTopologyInjector:
      disabled: true
admin:
  address:
    host: 127.0.0.1
    port: ${ADMIN_PORT}
telemetry:
  metrics:
    prometheus:
      disable: true
EOF
  kubectl apply -f - >/dev/null <<EOF
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: ${CLASS}
spec:
  controllerName: ${CONTROLLER_NAME}
EOF

  local started=${SECONDS}
  setsid env ENVOY_GATEWAY_NAMESPACE="${NS}" KUBECONFIG="${KUBECONFIG}" \
    unshare -m sh -c "${NAMESPACE_SCRIPT}" envoy-gateway "${EG}/root" "${DIR}" "${BIN}" \
    "${BIN}/envoy-gateway" server --config-path "${EG}/config.yaml" \
    >"${DIR}/envoy-gateway.log" 2>&1 </dev/null 8>&- 9>&- &
  echo $! > "${PIDFILE}"
  local pid=$!
  for _ in $(seq 1 600); do
    kill -0 "${pid}" 2>/dev/null || { tail -n 30 "${DIR}/envoy-gateway.log" >&2; die "Envoy Gateway exited; see ${DIR}/envoy-gateway.log"; }
    if curl -fsS http://127.0.0.1:8081/readyz >/dev/null 2>&1; then break; fi
    sleep 0.2
  done
  curl -fsS http://127.0.0.1:8081/readyz >/dev/null 2>&1 || { stop; die "Envoy Gateway was not ready in 120s; see ${DIR}/envoy-gateway.log"; }
  # Ready means running; accepting its GatewayClass means it reconciles.
  kubectl wait --for=condition=Accepted --timeout=120s "gatewayclass/${CLASS}" >/dev/null ||
    { stop; die "Envoy Gateway did not accept GatewayClass ${CLASS} in 120s; see ${DIR}/envoy-gateway.log"; }
  log "Envoy Gateway ready in $((SECONDS - started))s (GatewayClass ${CLASS}; log ${DIR}/envoy-gateway.log)"
}

case "${cmd}" in
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 start|stop DIR" ;;
esac
