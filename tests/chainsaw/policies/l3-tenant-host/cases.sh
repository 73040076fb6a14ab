#!/usr/bin/env bash
# Layer 3 admission cases on the Tenant kind served from definition.yaml, one
# per chainsaw step: cases.sh CASE. The callers hold only Tenant rights (group
# policies-l3-testers); the Tenants are created in the test namespace.
# shellcheck disable=SC2086 # $user, $trusted and $other are lists of kubectl flags
set -euo pipefail
cd "$(dirname "$0")"
a=../../_scripts/admission.sh
P=cozyplane-tenant-host-policy
# Flux runs in FLUX_NAMESPACE (hack/e2e.sh exports it; Cozystack's cozy-fluxcd by default).
flux=${FLUX_NAMESPACE:-cozy-fluxcd}
# Cozystack's all-in-one Flux runs as flux; a stock Flux has none, and the
# policies trust its helm-controller in that place (FLUX_ALL_IN_ONE, hack/e2e.sh).
aio=${FLUX_ALL_IN_ONE:-flux}
user="--as=alice --as-group=policies-l3-testers --as-group=system:authenticated"
trusted="--as=system:serviceaccount:$flux:helm-controller --as-group=system:serviceaccounts:$flux --as-group=policies-l3-testers"
other="--as=system:serviceaccount:cozy-other:x --as-group=system:serviceaccounts:cozy-other --as-group=policies-l3-testers"
tenant() { printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: %s}\nspec: {%s}\n' "$1" "$2"; }

case "$1" in
create-without-host)
  tenant alice "" | $a allow -- kubectl -n "$NAMESPACE" $user create -f -
  tenant carol "host: \"\"" | $a allow -- kubectl -n "$NAMESPACE" $user create -f -
  ;;
create-with-host)
  tenant hijack "host: dashboard.example.org" | $a deny $P "tenant.spec.host can only be set or changed" -- kubectl -n "$NAMESPACE" $user create -f -
  tenant hijack "host: dashboard.example.org" | $a deny $P "Leave spec.host empty to inherit the parent tenant apex" -- kubectl -n "$NAMESPACE" $other create -f -
  ;;
trusted-create)
  tenant bob "host: bob.example.org" | $a allow -- kubectl -n "$NAMESPACE" $trusted create -f -
  tenant dave "host: dave.example.org" | $a allow -- kubectl -n "$NAMESPACE" --as=system:serviceaccount:cozy-system:cozystack --as-group=system:serviceaccounts:cozy-system --as-group=policies-l3-testers create -f -
  tenant erin "host: erin.example.org" | $a allow -- kubectl -n "$NAMESPACE" --as=system:serviceaccount:$flux:$aio --as-group=system:serviceaccounts:$flux --as-group=policies-l3-testers create -f -
  ;;
trust-per-identity)
  # Other service accounts of the same namespaces are not trusted.
  tenant frank "host: frank.example.org" | $a deny $P "tenant.spec.host can only be set or changed" -- kubectl -n "$NAMESPACE" --as=system:serviceaccount:cozy-system:x --as-group=system:serviceaccounts:cozy-system --as-group=policies-l3-testers create -f -
  tenant frank "host: frank.example.org" | $a deny $P "tenant.spec.host can only be set or changed" -- kubectl -n "$NAMESPACE" --as=system:serviceaccount:kube-system:x --as-group=system:serviceaccounts:kube-system --as-group=policies-l3-testers create -f -
  tenant frank "host: frank.example.org" | $a deny $P "tenant.spec.host can only be set or changed" -- kubectl -n "$NAMESPACE" --as=system:serviceaccount:$flux:source-controller --as-group=system:serviceaccounts:$flux --as-group=policies-l3-testers create -f -
  ;;
update-set-host)
  # alice, created without spec.host.
  tenant alice "host: dashboard.example.org" | $a deny $P "requested \"dashboard.example.org\", current \"\"" -- kubectl -n "$NAMESPACE" $user apply -f -
  tenant alice "gateway: true" | $a allow -- kubectl -n "$NAMESPACE" $user apply -f -
  ;;
update-change-host)
  # bob, created by a trusted caller with spec.host bob.example.org.
  tenant bob "host: bob.example.org, gateway: true" | $a allow -- kubectl -n "$NAMESPACE" $user apply -f -
  tenant bob "host: evil.example.org" | $a deny $P "Keep spec.host \"bob.example.org\"" -- kubectl -n "$NAMESPACE" $user apply -f -
  $a deny $P "current \"bob.example.org\"" -- kubectl -n "$NAMESPACE" $user patch tenant bob --type=merge -p '{"spec":{"host":""}}'
  ;;
trusted-update)
  tenant bob "host: bob2.example.org" | $a allow -- kubectl -n "$NAMESPACE" --as=admin --as-group=system:masters apply -f -
  tenant bob "host: bob3.example.org" | $a allow -- kubectl -n "$NAMESPACE" $trusted apply -f -
  ;;
*) echo "unknown case: $1"; exit 2 ;;
esac
