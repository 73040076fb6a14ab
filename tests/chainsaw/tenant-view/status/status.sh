#!/usr/bin/env bash
# Sets a WorkloadMonitor's status as upstream Cozystack's workloadmonitor
# controller (internal/controller/workloadmonitor_controller.go) does after
# counting the pods its selector matches: observed and available replicas,
# and operational unless fewer than spec.minReplicas are available.
#   status.sh NAMESPACE MONITOR OBSERVED AVAILABLE
set -euo pipefail
ns=$1 name=$2 observed=$3 available=$4
min=$(kubectl -n "${ns}" get workloadmonitor "${name}" -o jsonpath='{.spec.minReplicas}')
operational=true
if [[ -n "${min}" ]] && (( available < min )); then operational=false; fi
kubectl -n "${ns}" patch workloadmonitor "${name}" --subresource=status --type=merge \
  -p "{\"status\":{\"observedReplicas\":${observed},\"availableReplicas\":${available},\"operational\":${operational}}}" >/dev/null
echo "${ns}/${name}: ${available}/${observed} available, operational=${operational}"
