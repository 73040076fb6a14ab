#!/usr/bin/env bash
# Plays upstream Cozystack's backup strategy controller toggling spec.suspend
# on an application's HelmRelease, as setCNPGRestoreHRSuspended
# (internal/backupcontroller/cnpgstrategy_controller.go) and
# setEtcdRestoreHRSuspended (etcdstrategy_controller.go) do: read the object,
# set spec.suspend, write the whole object back with an update, under the
# field manager its client reports (the binary's name).
#
#   restore.sh suspend|resume|edit NAMESPACE NAME [USER [GROUP...]]
#
# edit changes spec.values too (what the identity may not do). USER defaults
# to the controller's ServiceAccount; the command runs through admission.sh,
# so the caller says what to expect: ALLOW=1, or DENY="POLICY|TEXT".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
op=$1 ns=$2 name=$3; shift 3
user=${1:-system:serviceaccount:cozy-backup-controller:backupstrategy-controller}
[[ $# -gt 0 ]] && shift
groups=("$@")
[[ ${#groups[@]} -gt 0 ]] || groups=(system:serviceaccounts system:serviceaccounts:cozy-backup-controller system:authenticated)
as=(--as="${user}")
for g in "${groups[@]}"; do as+=(--as-group="${g}"); done
case ${op} in
  suspend) filter='.spec.suspend = true' ;;
  resume) filter='.spec.suspend = false' ;;
  edit) filter='.spec.suspend = true | .spec.values.replicas = 0' ;;
  *) echo "unknown operation ${op}" >&2; exit 2 ;;
esac
obj=$(kubectl -n "${ns}" get helmrelease "${name}" "${as[@]}" -o json | jq "${filter}")
if [[ -n ${DENY:-} ]]; then
  echo "${obj}" | "${here}/../../_scripts/admission.sh" deny "${DENY%%|*}" "${DENY#*|}" -- \
    kubectl -n "${ns}" replace --field-manager=backupstrategy-controller "${as[@]}" -f -
else
  echo "${obj}" | "${here}/../../_scripts/admission.sh" allow -- \
    kubectl -n "${ns}" replace --field-manager=backupstrategy-controller "${as[@]}" -f -
fi
