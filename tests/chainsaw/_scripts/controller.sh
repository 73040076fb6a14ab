#!/usr/bin/env bash
# Stops or restarts one controller of the e2e run (COZY_LOG_DIR), as a
# scenario that proves a controller survives being killed needs:
#
#   controller.sh stop NAME             stop it (the suite's instance, or one
#                                       this script restarted)
#   controller.sh restart NAME OFFSET   stop it, then start it again as its
#                                       chart's identity on CONTROLLER_PORT_BASE
#                                       + OFFSET (its log: NAME-restarted.log)
#
# OFFSET keeps a restarted controller's ports clear of the suite's: use one
# no other scenario uses (grep the callers).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=${COZY_LOG_DIR:?the e2e run directory}
action=${1:?usage: $0 stop NAME | restart NAME OFFSET}
name=${2:?usage: $0 stop NAME | restart NAME OFFSET}
for running in "${name}" "${name}-restarted"; do
  [[ -f "${dir}/${running}.pid" ]] || continue
  pid=$(cat "${dir}/${running}.pid")
  kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}" 2>/dev/null || true
  while kill -0 "${pid}" 2>/dev/null; do sleep 0.1; done
  rm -f "${dir}/${running}.pid"
done
case "${action}" in
stop) ;;
restart)
  offset=${3:?usage: $0 restart NAME OFFSET}
  "${root}/hack/controllers.sh" start-as "${dir}" "${name}-restarted" "${name}" $(( ${CONTROLLER_PORT_BASE:-21600} + offset ))
  ;;
*) echo "usage: $0 stop NAME | restart NAME OFFSET" >&2; exit 2 ;;
esac
