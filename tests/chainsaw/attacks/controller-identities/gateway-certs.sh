#!/usr/bin/env bash
# gateway-certs reads no Secret anywhere: its existingSecret signal is the
# Gateway's listener status. Checked as its identity with SubjectAccessReviews
# (kubectl auth can-i) and with real requests, which RBAC refuses; what it
# needs (Gateways, Issuers, Certificates) it is granted.
set -euo pipefail
ns=$NAMESPACE
id=system:serviceaccount:cozy-system:cozystack-gateway-certs
rbac() { # rbac EXPECT VERB RESOURCE [NAMESPACE]
  local got
  got=$(kubectl auth can-i "$2" "$3" ${4:+-n "$4"} --as="$id" || true)
  [[ "${got}" == "$1" ]] || { echo "RBAC: gateway-certs may $2 $3 ${4:-cluster-wide}: ${got}, want $1"; exit 1; }
  echo "RBAC: gateway-certs may $2 $3 ${4:-cluster-wide}: $1"
}
for verb in get list watch; do
  rbac no "$verb" secrets "$ns"
  rbac no "$verb" secrets kube-system
  rbac no "$verb" secrets
done
rbac yes watch gateways.gateway.networking.k8s.io "$ns"
rbac yes patch certificates.cert-manager.io "$ns"
rbac yes delete issuers.cert-manager.io "$ns"
kubectl -n "$ns" create secret generic id-probe --from-literal=k=v --dry-run=client -o yaml | kubectl apply -f - >/dev/null
for req in "get secret id-probe" "get secrets"; do
  # shellcheck disable=SC2086
  if out=$(kubectl -n "$ns" --as="$id" $req 2>&1); then echo "gateway-certs could $req: $out"; exit 1; fi
  [[ "$out" == *Forbidden* || "$out" == *forbidden* ]] || { echo "not refused by RBAC: $out"; exit 1; }
  echo "refused: $req as gateway-certs"
done
