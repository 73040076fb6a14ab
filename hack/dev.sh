#!/usr/bin/env bash
# The whole system on the embedded local control plane.
#
#   hack/dev.sh up     start the control plane and every controller in the
#                      background, wait until ready; kubeconfig: .dev/kubeconfig
#   hack/dev.sh down   stop everything `up` started; leaves no process behind
#   hack/dev.sh run    up, follow the logs, down on Ctrl-C
source "$(dirname "$0")/lib.sh"
DEV="${ROOT}/.dev"

up() {
  "${ROOT}/hack/cluster.sh" up "${DEV}"
  "${ROOT}/hack/policies.sh" "${DEV}"
  "${ROOT}/hack/controllers.sh" build
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
