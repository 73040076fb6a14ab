#!/usr/bin/env bash
# Makes the helm controller count a takeover refusal and an adoption: a
# HelmRelease created by hand with the name instance appN derives is refused
# until the instance's apps.cozystack.io/adopt proof names its uid, then
# adopted. An adoption is counted once, in the process that made it: when
# another scenario restarts the helm controller between the adoption and the
# scrape, the next instance adopts again (three at most).
#
#   adopt.sh DIR    (DIR: exported.sh's)
set -euo pipefail
dir=$1
ns=${NAMESPACE:?}
fail() { echo "FAIL: $*"; exit 1; }
# until_is WANT KUBECTL_ARGS...: waits (at most 2 minutes) until kubectl
# prints WANT.
until_is() {
  local want=$1 got="" deadline=$((SECONDS + 120)); shift
  while [[ ${SECONDS} -lt ${deadline} ]]; do
    got=$(kubectl "$@" 2>/dev/null || true)
    [[ "${got}" != "${want}" ]] || return 0
    sleep 0.5
  done
  fail "kubectl $*: ${got:-nothing}, want ${want}"
}
for i in 1 2 3; do
  sed -e "s/gd-app/gd-app${i}/" -e "s/application.name: app\$/application.name: app${i}/" foreign-helmrelease.yaml |
    kubectl -n "${ns}" create -f - --field-manager=cozystack-api >/dev/null
  kubectl -n "${ns}" apply -f - >/dev/null <<YAML
apiVersion: apps.cozystack.io/v1alpha1
kind: E2eDashboard
metadata: {name: app${i}}
spec: {size: 1Gi}
YAML
  until_is BackingObjectNotOwned -n "${ns}" get e2edashboard "app${i}" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].reason}'
  ./exported.sh "${dir}" wait cozystack_takeover_refusals_total
  uid=$(kubectl -n "${ns}" get helmrelease "gd-app${i}" -o 'jsonpath={.metadata.uid}')
  kubectl -n "${ns}" annotate e2edashboard "app${i}" "apps.cozystack.io/adopt=${uid}" >/dev/null
  until_is E2eDashboard -n "${ns}" get helmrelease "gd-app${i}" -o 'jsonpath={.metadata.ownerReferences[?(@.controller==true)].kind}'
  if ./exported.sh "${dir}" wait cozystack_adoptions_total 30; then
    echo "refused, then adopted: gd-app${i}"
    exit 0
  fi
done
fail "three adoptions and no cozystack_adoptions_total"
