#!/usr/bin/env bash
# The lineage controller's identity (cozy-system:cozystack-lineage): RBAC lets
# it patch any Secret and Service of the namespace; cozyplane-lineage-identity-policy
# lets it change the five lineage labels only, on what a HelmRelease rendered.
# Each case first shows RBAC alone would allow it, then the policy's verdict
# (server-side dry runs: nothing is written).
set -euo pipefail
cd "$(dirname "$0")"
a=../../_scripts/admission.sh
P=cozyplane-lineage-identity-policy
ns=tenant-e2elineage
K=(kubectl -n "$ns" --as=system:serviceaccount:cozy-system:cozystack-lineage)
for v in patch; do
  for r in secrets services pods; do
    [[ $("${K[@]}" auth can-i "$v" "$r") == yes ]] || { echo "RBAC does not let lineage $v $r"; exit 1; }
  done
done
# A Secret no HelmRelease rendered.
kubectl -n "$ns" create secret generic e2e-plain --from-literal=a=b --dry-run=client -o yaml | kubectl apply -f - >/dev/null

# What it does: the lineage labels of a rendered object.
$a allow -- "${K[@]}" patch secret unrelated-config --dry-run=server --type=merge \
  -p '{"metadata":{"labels":{"internal.cozystack.io/managed-by-cozystack":"true","apps.cozystack.io/application.name":"x"}}}'
$a allow -- "${K[@]}" patch pod postgres-db-init-job-x1 --dry-run=server --type=merge \
  -p '{"metadata":{"labels":{"internal.cozystack.io/tenantresource":"false"}}}'
# What it may not.
$a deny $P "changes its data or spec" -- "${K[@]}" patch secret postgres-db-credentials --dry-run=server --type=merge \
  -p '{"data":{"postgres":"ZXZpbA=="}}'
$a deny $P "changes its data or spec" -- "${K[@]}" patch service postgres-db-external-write --dry-run=server --type=merge \
  -p '{"spec":{"type":"NodePort"}}'
$a deny $P "changes or removes team" -- "${K[@]}" patch secret postgres-db-credentials --dry-run=server --type=merge \
  -p '{"metadata":{"labels":{"team":"evil"}}}'
$a deny $P "changes or removes internal.cozystack.io/tenantresource" -- "${K[@]}" patch secret postgres-db-credentials --dry-run=server --type=merge \
  -p '{"metadata":{"labels":{"internal.cozystack.io/tenantresource":null}}}'
$a deny $P "sets another value" -- "${K[@]}" patch secret postgres-db-credentials --dry-run=server --type=merge \
  -p '{"metadata":{"labels":{"internal.cozystack.io/tenantresource":"maybe"}}}'
$a deny $P "changes its annotations" -- "${K[@]}" patch secret postgres-db-credentials --dry-run=server --type=merge \
  -p '{"metadata":{"annotations":{"evil":"yes"}}}'
$a deny $P "carries no helm.toolkit.fluxcd.io/name" -- "${K[@]}" patch secret e2e-plain --dry-run=server --type=merge \
  -p '{"metadata":{"labels":{"internal.cozystack.io/managed-by-cozystack":"true"}}}'
kubectl -n "$ns" delete secret e2e-plain >/dev/null
