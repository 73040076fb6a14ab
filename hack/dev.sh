#!/usr/bin/env bash
# The whole system on the embedded local control plane.
#
#   hack/dev.sh up     start the control plane and every controller in the
#                      background, wait until ready; kubeconfig: .dev/kubeconfig
#   hack/dev.sh down   stop everything `up` started; leaves no process behind
#   hack/dev.sh run    up, follow the logs, down on Ctrl-C
#
# DEV_DIR (default .dev) holds the state; PORT_BASE and CONTROLLER_PORT_BASE
# (hack/cluster.sh, hack/controllers.sh) pick the ports, so a second system can
# run beside `make dev`. DEV_BUILD=0 skips building the controllers (for
# scripts that just built them).
source "$(dirname "$0")/lib.sh"
DEV=$(mkdir -p "${DEV_DIR:-${ROOT}/.dev}" && cd "${DEV_DIR:-${ROOT}/.dev}" && pwd)

# identities: DIR/<controller>.kubeconfig files, written by `hack/rbac.sh
# DIR`, make a controller run as its chart's ServiceAccount. Their tokens
# belong to the control plane they were made on: `down` wipes its data, and a
# new one refuses them ("the server has asked for the client to provide
# credentials"). So `up` remakes them for the same controllers, keeping the
# choice to run with the charts' RBAC, and drops those of controllers that no
# longer exist.
identities() {
  local f name names=()
  for f in "${DEV}"/*.kubeconfig; do
    [[ -e "${f}" ]] || continue
    name=$(basename "${f}" .kubeconfig)
    [[ "${name}" == controller-manager ]] && continue
    if [[ -f "${ROOT}/controllers/${name}/main.go" && -d "${ROOT}/charts/${name}" ]]; then
      names+=("${name}")
    else
      log "removing ${f}: no controller ${name} with a chart"
      rm -f "${f}"
    fi
  done
  [[ ${#names[@]} -eq 0 ]] && return 0
  log "renewing the ServiceAccount kubeconfigs of: ${names[*]}"
  "${ROOT}/hack/rbac.sh" "${DEV}" "${names[@]}"
}

up() {
  "${ROOT}/hack/cluster.sh" up "${DEV}"
  "${ROOT}/hack/policies.sh" "${DEV}"
  identities
  [[ "${DEV_BUILD:-1}" == 0 ]] || "${ROOT}/hack/controllers.sh" build
  "${ROOT}/hack/controllers.sh" start "${DEV}"
  log "ready: export KUBECONFIG=${DEV}/kubeconfig"
}

down() {
  "${ROOT}/hack/controllers.sh" stop "${DEV}"
  "${ROOT}/hack/cluster.sh" down "${DEV}"
  log "stopped"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  run)
    trap 'down' EXIT
    trap 'exit 0' INT TERM
    up
    log "following controller logs; Ctrl-C stops everything"
    logs=()
    for f in "${DEV}"/*.log; do
      case "$(basename "${f}")" in etcd.log|kube-apiserver.log|kube-controller-manager.log) ;; *) logs+=("${f}") ;; esac
    done
    if [[ ${#logs[@]} -gt 0 ]]; then tail -n +1 -F "${logs[@]}" & else tail -F "${DEV}/kube-apiserver.log" & fi
    wait
    ;;
  *) die "usage: $0 up|down|run" ;;
esac
