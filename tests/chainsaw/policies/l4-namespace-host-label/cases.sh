#!/usr/bin/env bash
# Layer 4 admission cases on the namespace.cozystack.io/host label, one per
# chainsaw step: cases.sh CASE. The callers hold only Namespace rights (group
# policies-l4-testers); the steps share the namespaces tenant-l4-<test id>-*,
# so they run in order: tenant-l4-<id>-a is created with the label
# a.example.org, relabelled b.example.org and c.example.org by trusted callers.
# shellcheck disable=SC2086 # $user, $trusted and $nslabels are lists of kubectl flags
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-l4-${NAMESPACE#chainsaw-}
a=../../_scripts/admission.sh
P=cozyplane-namespace-host-label-policy
# Flux runs in FLUX_NAMESPACE (hack/e2e.sh exports it; Cozystack's cozy-fluxcd by default).
flux=${FLUX_NAMESPACE:-cozy-fluxcd}
# Cozystack's all-in-one Flux runs as flux; a stock Flux has none, and the
# policies trust its helm-controller in that place (FLUX_ALL_IN_ONE, hack/e2e.sh).
aio=${FLUX_ALL_IN_ONE:-flux}
user="--as=alice --as-group=policies-l4-testers --as-group=system:authenticated"
trusted="--as=system:serviceaccount:$flux:$aio --as-group=system:serviceaccounts:$flux --as-group=policies-l4-testers"
nslabels="--as=system:serviceaccount:cozy-system:cozystack-ns-labels --as-group=system:serviceaccounts --as-group=system:serviceaccounts:cozy-system --as-group=system:authenticated"
ns() { printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {namespace.cozystack.io/host: %s}\n' "$1" "$2"; }

case "$1" in
create-with-label)
  ns "$t-a" dashboard.example.org | $a deny $P "requested \"dashboard.example.org\", current \"\"). Leave the label out" -- kubectl $user create -f -
  $a allow -- kubectl $user create namespace "$t-plain"
  ;;
trusted-create)
  ns "$t-a" a.example.org | $a allow -- kubectl $trusted create -f -
  ns "$t-b" b.example.org | $a allow -- kubectl --as=admin --as-group=system:masters create -f -
  ;;
other-account-create)
  ns "$t-c" c.example.org | $a deny $P "immutable once set" -- kubectl --as=system:serviceaccount:cozy-other:x --as-group=system:serviceaccounts:cozy-other --as-group=policies-l4-testers create -f -
  ;;
change-label)
  $a deny $P "current \"a.example.org\"). Keep the label at \"a.example.org\"" -- kubectl $user label namespace "$t-a" namespace.cozystack.io/host=dashboard.example.org --overwrite
  $a deny $P "immutable once set" -- kubectl $user label namespace "$t-a" namespace.cozystack.io/host=A.example.org --overwrite
  $a deny $P "immutable once set" -- kubectl $user label namespace "$t-a" namespace.cozystack.io/host-
  ;;
set-label)
  $a deny $P "immutable once set" -- kubectl $user label namespace "$t-plain" namespace.cozystack.io/host=dashboard.example.org
  ;;
same-label-and-others)
  $a allow -- kubectl $user label namespace "$t-a" namespace.cozystack.io/host=a.example.org --overwrite
  $a allow -- kubectl $user label namespace "$t-a" team=web
  ;;
trusted-update)
  $a allow -- kubectl $trusted label namespace "$t-a" namespace.cozystack.io/host=b.example.org --overwrite
  $a allow -- kubectl --as=admin --as-group=system:masters label namespace "$t-a" namespace.cozystack.io/host=c.example.org --overwrite
  ;;
ns-labels)
  # ns-labels patches namespaces for the gateway label, never the host label.
  $a deny $P "immutable once set" -- kubectl $nslabels label namespace "$t-a" namespace.cozystack.io/host=evil.example.org --overwrite --dry-run=server
  $a allow -- kubectl $nslabels label namespace "$t-a" namespace.cozystack.io/gateway=tenant-root --dry-run=server
  ;;
other-account-update)
  $a deny $P "immutable once set" -- kubectl --as=system:serviceaccount:cozy-system:x --as-group=system:serviceaccounts:cozy-system --as-group=policies-l4-testers label namespace "$t-a" namespace.cozystack.io/host=evil.example.org --overwrite
  ;;
subresources)
  # The status and finalize subresources of a namespace carry its labels too.
  $a deny $P "immutable once set" -- kubectl $user patch namespace "$t-a" --subresource=status --type=merge -p '{"metadata":{"labels":{"namespace.cozystack.io/host":"evil.example.org"}}}'
  kubectl get namespace "$t-a" -o json | sed 's/"namespace.cozystack.io\/host": "c.example.org"/"namespace.cozystack.io\/host": "evil.example.org"/' \
    | $a deny $P "immutable once set" -- kubectl $user replace --raw "/api/v1/namespaces/$t-a/finalize" -f -
  [ "$(kubectl get namespace "$t-a" -o jsonpath='{.metadata.labels.namespace\.cozystack\.io/host}')" = c.example.org ]
  ;;
reapply)
  # Re-applying the whole namespace with the same value.
  ns "$t-a" c.example.org | $a allow -- kubectl $user apply -f -
  ns "$t-a" d.example.org | $a deny $P "Keep the label at \"c.example.org\"" -- kubectl $user apply -f -
  ;;
*) echo "unknown case: $1"; exit 2 ;;
esac
