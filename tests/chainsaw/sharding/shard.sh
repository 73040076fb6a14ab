#!/usr/bin/env bash
# Starts or stops one helm controller shard for the sharding scenarios, in
# the e2e run's directory (COZY_LOG_DIR), as the helm chart's identity.
#
#   shard.sh start NAME OFFSET SELECTOR [ARG...]   metrics on CONTROLLER_PORT_BASE+OFFSET
#   shard.sh stop NAME
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=${COZY_LOG_DIR:?the e2e run directory}
case "$1" in
  start)
    name=$2 offset=$3 selector=$4; shift 4
    # The helm chart's ServiceAccount and roles, once per control plane.
    [[ -f "${dir}/helm.kubeconfig" ]] || "${root}/hack/rbac.sh" "${dir}" helm >/dev/null
    "${root}/hack/controllers.sh" start-as "${dir}" "${name}" helm $(( ${CONTROLLER_PORT_BASE:-21600} + offset )) \
      --watch-label-selector "${selector}" --leader-elect --leader-election-namespace cozy-system "$@"
    ;;
  stop)
    pid=$(cat "${dir}/$2.pid")
    kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}"
    while kill -0 "${pid}" 2>/dev/null; do sleep 0.1; done
    rm -f "${dir}/$2.pid"
    ;;
  *) echo "usage: $0 start NAME OFFSET SELECTOR [ARG...] | stop NAME" >&2; exit 2 ;;
esac
