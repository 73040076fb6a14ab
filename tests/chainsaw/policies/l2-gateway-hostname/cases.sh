#!/usr/bin/env bash
# Layer 2 admission cases, one per chainsaw step: cases.sh CASE. The caller
# holds only Gateway and ListenerSet rights (group policies-l2-testers); the
# namespace tenant-l2-<test id> has the apex label Example.ORG, and
# tenant-l2-<test id>-bare has none.
# shellcheck disable=SC2086 # $user and $platform are lists of kubectl flags
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-l2-${NAMESPACE#chainsaw-}
a=../../_scripts/admission.sh
P=cozyplane-gateway-hostname-policy
user="--as=app-deployer --as-group=policies-l2-testers --as-group=system:authenticated"
platform="--as=system:serviceaccount:cozy-system:tenant-chart --as-group=system:serviceaccounts:cozy-system --as-group=policies-l2-testers"
gw() { # gw NAME APIVERSION HOSTNAME...: a Gateway with one HTTPS listener per hostname and a port-80 listener without one
  printf 'apiVersion: gateway.networking.k8s.io/%s\nkind: Gateway\nmetadata: {name: %s}\nspec:\n  gatewayClassName: cilium\n  listeners:\n  - {name: http, port: 80, protocol: HTTP}\n' "$2" "$1"
  i=0; shift 2
  for h in "$@"; do i=$((i+1)); printf '  - {name: https-%s, port: 443, protocol: HTTPS, hostname: "%s", tls: {certificateRefs: [{name: c%s}]}}\n' "$i" "$h" "$i"; done
}
http() { # http NAME ALLOWEDROUTES: a Gateway whose only listener has no hostname
  printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s}\nspec:\n  gatewayClassName: cilium\n  listeners:\n  - {name: http, port: 80, protocol: HTTP, allowedRoutes: %s}\n' "$1" "$2"
}
listenerset() { # listenerset HOSTNAME: a ListenerSet extra adding one HTTPS listener to the Gateway ok
  printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: extra}\nspec:\n  parentRef: {name: ok}\n  listeners:\n  - {name: https, port: 443, protocol: HTTPS, hostname: "%s", tls: {certificateRefs: [{name: c}]}}\n' "$1"
}

case "$1" in
within-apex)
  # The label is upper-case, the hostnames lower-case: compared case-insensitively.
  gw ok v1 example.org app.example.org '*.example.org' | $a allow -- kubectl -n "$t" $user create -f -
  ;;
look-alike)
  gw evil v1 evil-example.org | $a deny $P "outside: https-1 (evil-example.org)" -- kubectl -n "$t" $user create -f -
  gw evil2 v1 example.org.evil.com | $a deny $P "outside: https-1 (example.org.evil.com)" -- kubectl -n "$t" $user create -f -
  ;;
foreign)
  gw foreign v1 app.example.com | $a deny $P "Gateway listener hostname must equal example.org or be a subdomain of it (the namespace.cozystack.io/host label of namespace $t)" -- kubectl -n "$t" $user create -f -
  gw star v1 '*.org' | $a deny $P "outside: https-1 (*.org)" -- kubectl -n "$t" $user create -f -
  ;;
v1beta1)
  gw beta v1beta1 app.example.net | $a deny $P "outside: https-1 (app.example.net)" -- kubectl -n "$t" $user create -f -
  ;;
platform-accounts)
  # The platform service accounts are held to the same rule.
  gw platform v1 dashboard.example.com | $a deny $P "outside: https-1 (dashboard.example.com)" -- kubectl -n "$t" $platform create -f -
  ;;
no-label)
  # No label: fail-closed.
  gw bare v1 app.example.org | $a deny $P "namespace $t-bare has no namespace.cozystack.io/host label" -- kubectl -n "$t-bare" $user create -f -
  ;;
update)
  # The Gateway ok of within-apex, with a listener added.
  gw ok v1 example.org app.example.org '*.example.org' evil.example.net | $a deny $P "outside: https-4 (evil.example.net)" -- kubectl -n "$t" $user apply -f -
  gw ok v1 example.org app.example.org '*.example.org' www.example.org | $a allow -- kubectl -n "$t" $user apply -f -
  ;;
hostless-open)
  # Listeners without a hostname, open to routes of other namespaces.
  http open '{namespaces: {from: All}}' | $a deny $P "listeners without a hostname match every hostname: http" -- kubectl -n "$t" $user create -f -
  http other '{namespaces: {from: Selector, selector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: ['"$t"', tenant-other]}]}}}' \
    | $a deny $P "listeners without a hostname match every hostname: http" -- kubectl -n "$t" $user create -f -
  http team '{namespaces: {from: Selector, selector: {matchLabels: {team: web}}}}' | $a deny $P "Give them a hostname under example.org" -- kubectl -n "$t" $user create -f -
  ;;
hostless-local)
  # Listeners without a hostname, for routes of this namespace, cozy-* ones or
  # cert-manager's (CERT_MANAGER_NAMESPACE, exported by hack/e2e.sh), as
  # gateway-listeners writes port 80.
  http redirect '{namespaces: {from: Selector, selector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: ['"${CERT_MANAGER_NAMESPACE:-cozy-cert-manager}"', '"$t"']}]}}}' \
    | $a allow -- kubectl -n "$t" $user create -f -
  http same '{namespaces: {from: Same}}' | $a allow -- kubectl -n "$t" $user create -f -
  ;;
listenerset)
  # ListenerSets add listeners to a Gateway: the same rule.
  listenerset shop.example.com | $a deny $P "ListenerSet listener hostname must equal example.org" -- kubectl -n "$t" $user create -f -
  listenerset shop.example.org | $a allow -- kubectl -n "$t" $user create -f -
  ;;
outside-tenants)
  # Outside tenant-* namespaces nothing is checked.
  gw elsewhere v1 anything.example.com | $a allow -- kubectl -n "$NAMESPACE" $user create -f -
  ;;
*) echo "unknown case: $1"; exit 2 ;;
esac
