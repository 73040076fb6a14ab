#!/usr/bin/env bash
# A real, local Kubernetes control plane: etcd, kube-apiserver (RBAC,
# ValidatingAdmissionPolicy) and kube-controller-manager (garbage collector,
# namespace lifecycle, service accounts, ClusterRole aggregation: the built-in
# edit, admin and view roles hold what they hold on every real cluster; resource
# quotas: the API server's ResourceQuota admission enforces a quota only once
# this controller has computed its usage), on loopback, with generated
# certificates, our CRDs and the third-party CRDs the controllers work with.
# No kubelet: nothing runs pods.
#
#   hack/cluster.sh up   [DIR]   start (idempotent) and wait until ready
#   hack/cluster.sh down [DIR]   stop everything `up` started in DIR
#   hack/cluster.sh crds [DIR]   (re)install CRDs
#
# DIR (default .dev) holds certificates, logs, pids and kubeconfig; etcd's data
# lives on tmpfs (/dev/shm) for fast fsyncs. PORT_BASE (default 20000) picks the
# ports (below the ephemeral range, so no outgoing connection holds them), so a test cluster and a dev cluster can run side by side.
# CLUSTER_CRDS=none starts it with no CRD at all (an empty cluster, as before
# the platform or its neighbours are installed); `crds` installs them later.
# CONTROLLER_MANAGER_QPS (default 20, kube-controller-manager's own) is the
# controller manager's client rate, its burst twice that, for a bench that
# deletes thousands of owners at once. APISERVER_FEATURE_GATES (default none)
# is passed to kube-apiserver's --feature-gates.
source "$(dirname "$0")/lib.sh"

cmd=${1:-up}
DIR=$(mkdir -p "${2:-${ROOT}/.dev}" && cd "${2:-${ROOT}/.dev}" && pwd)
PORT_BASE=${PORT_BASE:-20000}
ETCD_PORT=$((PORT_BASE + 379))
ETCD_PEER_PORT=$((PORT_BASE + 380))
API_PORT=$((PORT_BASE + 443))
KUBECONFIG_FILE="${DIR}/kubeconfig"
ETCD_DATA="/dev/shm/cozyplane-etcd-$(echo "${DIR}" | sha256sum | cut -c1-12)"

pidfile() { echo "${DIR}/$1.pid"; }
running() { [[ -f "$(pidfile "$1")" ]] && kill -0 "$(cat "$(pidfile "$1")")" 2>/dev/null; }

start() { # start NAME CMD...: runs CMD in the background, logs to DIR/NAME.log.
  local name=$1; shift
  running "${name}" && return 0
  setsid "$@" >"${DIR}/${name}.log" 2>&1 </dev/null 9>&- &
  echo $! > "$(pidfile "${name}")"
}

stop() {
  local name=$1 pid
  [[ -f "$(pidfile "${name}")" ]] || return 0
  pid=$(cat "$(pidfile "${name}")")
  if kill -0 "${pid}" 2>/dev/null; then
    kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-${pid}" 2>/dev/null || kill -KILL "${pid}" 2>/dev/null || true
  fi
  rm -f "$(pidfile "${name}")"
}

certs() {
  local pki="${DIR}/pki"
  [[ -f "${pki}/admin.crt" ]] && return 0
  mkdir -p "${pki}"
  log "generating certificates in ${pki}"
  (
    cd "${pki}"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=cozyplane-local-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    issue() { # issue NAME SUBJECT [SAN]
      openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
      if [[ -n "${3:-}" ]]; then
        printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3" > "$1.ext"
      else
        printf 'extendedKeyUsage=clientAuth\n' > "$1.ext"
      fi
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    issue apiserver "/CN=kube-apiserver" "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1"
    issue admin "/O=system:masters/CN=cozyplane-admin"
    issue controller-manager "/CN=system:kube-controller-manager"
  )
}

kubeconfig() { # kubeconfig FILE USER-CERT-NAME
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:${API_PORT}
    certificate-authority: ${DIR}/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: ${DIR}/pki/$2.crt
    client-key: ${DIR}/pki/$2.key
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
KC
}

wait_for() { # wait_for WHAT SECONDS CMD...
  local what=$1 secs=$2; shift 2
  for _ in $(seq 1 $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  die "${what} did not become ready in ${secs}s; see logs in ${DIR}"
}

install_crds() {
  local out="${CACHE}/crds"
  mkdir -p "${out}"
  local gw cm
  gw=$(moddir "sigs.k8s.io/gateway-api@${GATEWAY_API_VERSION}")
  cm=$(moddir "github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION}")
  [[ -d "${gw}" && -d "${cm}" ]] || die "could not find the Gateway API or cert-manager module"
  local files=(
    "${ROOT}"/api/crds/*.yaml
    "${out}/helm.toolkit.fluxcd.io_helmreleases.yaml"
    "${cm}/deploy/crds/cert-manager.io_issuers.yaml"
    "${cm}/deploy/crds/cert-manager.io_clusterissuers.yaml"
    "${cm}/deploy/crds/cert-manager.io_certificates.yaml"
    "${cm}/deploy/crds/cert-manager.io_certificaterequests.yaml"
  )
  local f
  for f in "${gw}"/config/crd/standard/*.yaml; do
    # The safe-upgrades ValidatingAdmissionPolicy is for clusters upgrading
    # Gateway API in place; it is not a CRD.
    [[ "$(basename "${f}")" == *_vap_* ]] || files+=("${f}")
  done
  log "installing CRDs"
  local args=()
  for f in "${files[@]}"; do args+=(-f "${f}"); done
  kubectl --kubeconfig "${KUBECONFIG_FILE}" apply --server-side --force-conflicts "${args[@]}" >/dev/null
  kubectl --kubeconfig "${KUBECONFIG_FILE}" wait --for=condition=Established --timeout=60s crd --all >/dev/null
}

up() {
  hack_tools=("${ROOT}/hack/tools.sh" etcd kube controller-gen crds)
  "${hack_tools[@]}"
  certs
  kubeconfig "${KUBECONFIG_FILE}" admin
  kubeconfig "${DIR}/controller-manager.kubeconfig" controller-manager

  mkdir -p "${ETCD_DATA}"
  start etcd etcd --name local --data-dir "${ETCD_DATA}" \
    --listen-client-urls "http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls "http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster "local=http://127.0.0.1:${ETCD_PEER_PORT}" --quota-backend-bytes=4294967296 \
    --snapshot-count=100000 --log-level=warn
  wait_for etcd 30 curl -fsS "http://127.0.0.1:${ETCD_PORT}/health"

  start kube-apiserver kube-apiserver \
    --etcd-servers "http://127.0.0.1:${ETCD_PORT}" \
    --bind-address 127.0.0.1 --secure-port "${API_PORT}" \
    --cert-dir "${DIR}/pki" --tls-cert-file "${DIR}/pki/apiserver.crt" --tls-private-key-file "${DIR}/pki/apiserver.key" \
    --client-ca-file "${DIR}/pki/ca.crt" \
    --service-account-key-file "${DIR}/pki/sa.pub" --service-account-signing-key-file "${DIR}/pki/sa.key" \
    --service-account-issuer "https://kubernetes.default.svc" \
    --authorization-mode RBAC --service-cluster-ip-range 10.0.0.0/24 \
    --enable-admission-plugins NamespaceLifecycle,ServiceAccount,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,MutatingAdmissionWebhook \
    --max-requests-inflight 1000 --max-mutating-requests-inflight 500 \
    --profiling="${APISERVER_PROFILING:-false}" --v=1 \
    ${APISERVER_FEATURE_GATES:+--feature-gates="${APISERVER_FEATURE_GATES}"}
  wait_for kube-apiserver 120 kubectl --kubeconfig "${KUBECONFIG_FILE}" get --raw /readyz

  start kube-controller-manager kube-controller-manager \
    --kubeconfig "${DIR}/controller-manager.kubeconfig" \
    --authentication-kubeconfig "${DIR}/controller-manager.kubeconfig" \
    --authorization-kubeconfig "${DIR}/controller-manager.kubeconfig" \
    --controllers garbagecollector,namespace,serviceaccount,serviceaccount-token,clusterrole-aggregation,resourcequota \
    --service-account-private-key-file "${DIR}/pki/sa.key" --root-ca-file "${DIR}/pki/ca.crt" \
    --use-service-account-credentials=true --leader-elect=false --secure-port 0 \
    --concurrent-gc-syncs 10 --kube-api-qps "${CONTROLLER_MANAGER_QPS:-20}" --kube-api-burst "$((2 * ${CONTROLLER_MANAGER_QPS:-20}))" --v=1
  wait_for "the default service account" 60 kubectl --kubeconfig "${KUBECONFIG_FILE}" -n default get serviceaccount default

  [[ "${CLUSTER_CRDS:-all}" == none ]] || install_crds
  log "control plane ready: export KUBECONFIG=${KUBECONFIG_FILE}"
}

down() {
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  rm -rf "${ETCD_DATA}"
}

case "${cmd}" in
  up) up ;;
  down) down ;;
  crds) install_crds ;;
  *) die "usage: $0 up|down|crds [DIR]" ;;
esac
