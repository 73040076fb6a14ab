#!/usr/bin/env bash
# Stops or (re)starts the lineage controller of the e2e run (COZY_LOG_DIR):
#   controller.sh stop      stop the running one (the suite's or a restarted one)
#   controller.sh start     stop it and start it again as the lineage chart's
#                           identity, on a port of its own (its log:
#                           lineage-restarted.log)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
dir=${COZY_LOG_DIR:?the e2e run directory}
for name in lineage lineage-restarted; do
  [[ -f "${dir}/${name}.pid" ]] || continue
  pid=$(cat "${dir}/${name}.pid")
  kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}" 2>/dev/null || true
  while kill -0 "${pid}" 2>/dev/null; do sleep 0.1; done
  rm -f "${dir}/${name}.pid"
done
[[ "$1" == start ]] || exit 0
"${root}/hack/controllers.sh" start-as "${dir}" lineage-restarted lineage $(( ${CONTROLLER_PORT_BASE:-21600} + 94 ))
