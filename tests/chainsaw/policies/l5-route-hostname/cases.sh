#!/usr/bin/env bash
# Layer 5 admission cases, one per chainsaw step: cases.sh CASE. The caller
# holds only route rights (group policies-l5-testers); the namespace
# tenant-l5-<test id> has the apex label EXAMPLE.org, tenant-l5-<test id>-bare
# has none, and cozy-l5-<test id> is a platform namespace.
# shellcheck disable=SC2086 # $user and $platform are lists of kubectl flags
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-l5-${NAMESPACE#chainsaw-}
cozy=cozy-l5-${NAMESPACE#chainsaw-}
a=../../_scripts/admission.sh
P=cozyplane-route-hostname-policy
# Flux runs in FLUX_NAMESPACE (hack/e2e.sh exports it; Cozystack's cozy-fluxcd by default).
flux=${FLUX_NAMESPACE:-cozy-fluxcd}
user="--as=app-deployer --as-group=policies-l5-testers --as-group=system:authenticated"
platform="--as=system:serviceaccount:$flux:helm-controller --as-group=system:serviceaccounts:$flux --as-group=policies-l5-testers"
route() { # route KIND APIVERSION NAME [HOSTNAME...]; the single HOSTNAME [] writes an empty list
  printf 'apiVersion: gateway.networking.k8s.io/%s\nkind: %s\nmetadata: {name: %s}\nspec:\n  parentRefs: [{name: cozystack, namespace: tenant-root}]\n' "$2" "$1" "$3"
  k=$1; shift 3
  if [ "$*" = "[]" ]; then printf '  hostnames: []\n'
  elif [ $# -gt 0 ]; then printf '  hostnames:\n'; for h in "$@"; do printf '  - "%s"\n' "$h"; done; fi
  if [ "$k" = TLSRoute ]; then printf '  rules: [{backendRefs: [{name: api, port: 443}]}]\n'; fi
}

case "$1" in
within-apex)
  # The label is upper-case: compared case-insensitively.
  route HTTPRoute v1 web app.example.org '*.example.org' example.org | $a allow -- kubectl -n "$t" $user create -f -
  ;;
look-alike)
  route HTTPRoute v1 evil evil-example.org | $a deny $P "outside: evil-example.org" -- kubectl -n "$t" $user create -f -
  route HTTPRoute v1 suffix example.org.evil.com | $a deny $P "outside: example.org.evil.com" -- kubectl -n "$t" $user create -f -
  ;;
foreign)
  route HTTPRoute v1 foreign app.example.com | $a deny $P "HTTPRoute hostnames must equal example.org or be subdomains of it (the namespace.cozystack.io/host label of namespace $t)" -- kubectl -n "$t" $user create -f -
  route HTTPRoute v1 star '*.org' | $a deny $P "outside: *.org" -- kubectl -n "$t" $user create -f -
  ;;
v1beta1)
  route HTTPRoute v1beta1 beta app.example.net | $a deny $P "outside: app.example.net" -- kubectl -n "$t" $user create -f -
  ;;
no-hostnames)
  # Without hostnames a route would serve every listener hostname.
  route HTTPRoute v1 none | $a deny $P "HTTPRoute must list its hostnames" -- kubectl -n "$t" $user create -f -
  route HTTPRoute v1 empty '[]' | $a deny $P "HTTPRoute must list its hostnames" -- kubectl -n "$t" $user create -f -
  ;;
no-label)
  # No label: fail-closed.
  route HTTPRoute v1 bare app.example.org | $a deny $P "namespace $t-bare has no namespace.cozystack.io/host label" -- kubectl -n "$t-bare" $user create -f -
  ;;
update)
  # The HTTPRoute web of within-apex.
  route HTTPRoute v1 web app.example.org dashboard.example.com | $a deny $P "outside: dashboard.example.com" -- kubectl -n "$t" $user apply -f -
  $a deny $P "outside: dashboard.example.com" -- kubectl -n "$t" $user patch httproute web --type=merge -p '{"spec":{"hostnames":["dashboard.example.com"]}}'
  route HTTPRoute v1 web app.example.org www.example.org | $a allow -- kubectl -n "$t" $user apply -f -
  ;;
platform-accounts)
  # The platform service accounts are held to the same rule.
  route HTTPRoute v1 platform dashboard.example.com | $a deny $P "outside: dashboard.example.com" -- kubectl -n "$t" $platform create -f -
  ;;
tlsroute)
  route TLSRoute v1 api api.example.org | $a allow -- kubectl -n "$t" $user create -f -
  route TLSRoute v1 api-evil api.evil-example.org | $a deny $P-tls "TLSRoute hostnames must equal example.org" -- kubectl -n "$t" $user create -f -
  route TLSRoute v1 api-bare api.example.org | $a deny $P-tls "TLSRoute rejected: namespace $t-bare has no namespace.cozystack.io/host label" -- kubectl -n "$t-bare" $user create -f -
  ;;
grpcroute)
  route GRPCRoute v1 grpc grpc.example.org | $a allow -- kubectl -n "$t" $user create -f -
  route GRPCRoute v1 grpc-none | $a deny $P-grpc "GRPCRoute must list its hostnames" -- kubectl -n "$t" $user create -f -
  route GRPCRoute v1 grpc-out grpc.example.com | $a deny $P-grpc "outside: grpc.example.com" -- kubectl -n "$t" $user create -f -
  route GRPCRoute v1 grpc-bare grpc.example.org | $a deny $P-grpc "GRPCRoute rejected: namespace $t-bare has no namespace.cozystack.io/host label" -- kubectl -n "$t-bare" $user create -f -
  ;;
cozy-namespaces)
  # cozy-* namespaces are run by cluster administrators: not checked.
  route HTTPRoute v1 platform dashboard.example.com | $a allow -- kubectl -n "$cozy" $user create -f -
  route HTTPRoute v1 platform-none | $a allow -- kubectl -n "$cozy" $user create -f -
  ;;
*) echo "unknown case: $1"; exit 2 ;;
esac
