#!/usr/bin/env bash
# Restarts the helm controller of the e2e run (COZY_LOG_DIR): stops the
# running one and starts it again, as the helm chart's identity, on a port
# of its own (its log: helm-restarted.log).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
dir=${COZY_LOG_DIR:?the e2e run directory}
for name in helm helm-restarted; do
  [[ -f "${dir}/${name}.pid" ]] || continue
  pid=$(cat "${dir}/${name}.pid")
  kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}" 2>/dev/null || true
  while kill -0 "${pid}" 2>/dev/null; do sleep 0.1; done
  rm -f "${dir}/${name}.pid"
done
"${root}/hack/controllers.sh" start-as "${dir}" helm-restarted helm $(( ${CONTROLLER_PORT_BASE:-21600} + 90 ))
