#!/usr/bin/env bash
# Upstream's app routes in a namespace that owns its Gateway
# (tenant-upr-<test id>, apex upr.example.org, the TenantGateway cozystack as
# tenant-root has it), one case per chainsaw step: app-routes.sh CASE.
#
#   upstream   Flux's helm-controller creates the routes upstream's charts
#              render (routes.yaml): admitted, stored with port 443 on their
#              parentRef and nothing else changed, so they attach to the
#              Gateway's HTTPS listeners only, each of which gateway-listeners
#              made for its hostname
#   attack     a tenant (and Flux) naming the port-80 listener is still
#              refused; a parentRef naming nothing gets port 443, on create
#              and on an update that drops it
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-upr-${NAMESPACE#chainsaw-}
a=../../_scripts/admission.sh
P=cozyplane-route-port80-policy
# Flux runs in FLUX_NAMESPACE (hack/e2e.sh exports it; Cozystack's cozy-fluxcd by default).
fluxns=${FLUX_NAMESPACE:-cozy-fluxcd}
flux=(--as="system:serviceaccount:${fluxns}:flux" --as-group=system:serviceaccounts --as-group="system:serviceaccounts:${fluxns}" --as-group=system:authenticated)
tenant=(--as=upr-tenant --as-group=system:authenticated)
admin() { kubectl -n "$t" "$@"; }
can() { # can WHO... -- VERB RESOURCE: RBAC alone allows it
  local who=() ; while [[ $1 != -- ]]; do who+=("$1"); shift; done; shift
  [[ "$(kubectl auth can-i "$1" "$2" -n "$t" "${who[@]}" || true)" == yes ]] || { echo "RBAC does not let ${who[0]} $1 $2 in $t: the case would prove nothing"; exit 1; }
  echo "RBAC alone allows ${who[0]#--as=} to $1 $2 in $t"
}
routes() { sed "s/NAMESPACE/$t/" routes.yaml; }
# cozyplane-route-port443-policy is a MutatingAdmissionPolicy v1, which API
# servers serve from Kubernetes 1.36 on; hack/policies.sh leaves it out on
# older ones, where a parentRef naming nothing stays refused (docs/install.md).
mutating() { kubectl get mutatingadmissionpolicies.admissionregistration.k8s.io cozyplane-route-port443-policy >/dev/null 2>&1; }
route() { # route NAME PARENTREF-FIELDS: a route to the Gateway cozystack
  printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s}\nspec:\n  parentRefs: [{name: cozystack%s}]\n  hostnames: [steal.upr.example.org]\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n' "$1" "$2"
}
wait_for() { # wait_for WHAT CMD...: retries CMD for 30 s
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}

case "$1" in
upstream)
  can "${flux[@]}" -- create httproutes.gateway.networking.k8s.io
  # Without the mutating policy these are the routes the port-80 policy
  # refuses: a parentRef to the namespace's own Gateway, no sectionName, no port.
  if ! mutating; then
    routes | $a deny $P "port-80 listener" -- kubectl -n "$t" "${flux[@]}" create -f -
    echo "this API server serves no MutatingAdmissionPolicy v1: upstream's routes are refused until they name port 443"
    exit 0
  fi
  routes | $a allow -- kubectl -n "$t" "${flux[@]}" create -f -
  for r in grafana alerta photos-ui harbor-registry; do
    got=$(admin get httproute "$r" -o json)
    want=$(routes | kubectl create --dry-run=client -o json -f - | jq -s --arg r "$r" '.[0].items // . | map(select(.metadata.name == $r))[0]')
    # The parentRef is upstream's with port 443 added; nothing else differs.
    jq -e --argjson w "$want" '.spec.parentRefs == [$w.spec.parentRefs[0] + {port: 443}]' <<<"$got" >/dev/null ||
      { echo "$r: parentRefs $(jq -c .spec.parentRefs <<<"$got"), upstream's $(jq -c .spec.parentRefs <<<"$want")"; exit 1; }
    jq -e --argjson w "$want" '.spec.hostnames == $w.spec.hostnames and .spec.rules[0].backendRefs[0].name == $w.spec.rules[0].backendRefs[0].name' <<<"$got" >/dev/null ||
      { echo "$r: hostnames or rules changed: $(jq -c .spec <<<"$got")"; exit 1; }
    h=$(jq -r '.spec.hostnames[0]' <<<"$got")
    # gateway-listeners reads it as attached to the Gateway: the HTTPS
    # listener for its hostname (HTTP-01 mode, one per hostname).
    wait_for "the Gateway has an HTTPS listener for $h" bash -c \
      "kubectl -n $t get gateway cozystack -o json | jq -e --arg h $h '.spec.listeners[] | select(.hostname == \$h and .port == 443 and .protocol == \"HTTPS\")'"
    # Port 443 selects the listeners it may attach to: none is the port-80 one.
    ports=$(admin get gateway cozystack -o json | jq -c --arg h "$h" '[.spec.listeners[] | select(.port == 443 and (.hostname == null or .hostname == $h)) | .name]')
    [[ "$ports" != '[]' && "$ports" != *'"http"'* ]] || { echo "$r would attach to $ports"; exit 1; }
    echo "$r: admitted as upstream renders it, stored with port 443; it attaches to $ports, never to http (port 80)"
  done
  # The Gateway still has its port-80 listener, for the redirect route alone.
  [[ "$(admin get gateway cozystack -o jsonpath='{.spec.listeners[?(@.name=="http")].port}')" == 80 ]]
  [[ "$(admin get httproute cozystack-http-redirect -o jsonpath='{.spec.parentRefs[0].sectionName}/{.spec.parentRefs[0].port}')" == http/ ]] ||
    { echo "the redirect route's parentRef: $(admin get httproute cozystack-http-redirect -o jsonpath='{.spec.parentRefs[0]}')"; exit 1; }
  echo "the redirect route keeps its parentRef to the http listener"
  # A parentRef to another namespace's Gateway is not this namespace's port 80: left alone.
  route elsewhere ", namespace: cozy-upr-elsewhere" | kubectl -n "$t" "${flux[@]}" create -f - >/dev/null
  [[ "$(admin get httproute elsewhere -o jsonpath='{.spec.parentRefs[0].namespace}')" == cozy-upr-elsewhere ]]
  [[ "$(admin get httproute elsewhere -o jsonpath='{.spec.parentRefs[0].port}')" == "" ]] || { echo "a parentRef to another namespace's Gateway was given a port"; exit 1; }
  echo "a parentRef to another namespace's Gateway is stored as written"
  ;;
attack)
  can "${tenant[@]}" -- create httproutes.gateway.networking.k8s.io
  can "${tenant[@]}" -- patch httproutes.gateway.networking.k8s.io
  # Named port 80: refused, for the tenant as for Flux (a chart's values could carry it).
  route steal ", sectionName: http" | $a deny $P "would attach to the port-80 listener of Gateway cozystack in $t, which serves only the redirect to HTTPS and ACME challenges: add port: 443" -- kubectl -n "$t" "${tenant[@]}" create -f -
  route steal ", port: 80" | $a deny $P "port-80 listener" -- kubectl -n "$t" "${tenant[@]}" create -f -
  route steal ", sectionName: http, port: 80" | $a deny $P "port-80 listener" -- kubectl -n "$t" "${tenant[@]}" create -f -
  route steal ", sectionName: http" | $a deny $P "port-80 listener" -- kubectl -n "$t" "${flux[@]}" create -f -
  if ! mutating; then
    route web "" | $a deny $P "port-80 listener" -- kubectl -n "$t" "${tenant[@]}" create -f -
    echo "this API server serves no MutatingAdmissionPolicy v1: a parentRef naming nothing is refused"
    exit 0
  fi
  # Named nothing: port 443, so the route never reaches port 80.
  route web "" | $a allow -- kubectl -n "$t" "${tenant[@]}" create -f -
  [[ "$(admin get httproute web -o jsonpath='{.spec.parentRefs[0].port}')" == 443 ]] || { echo "web: $(admin get httproute web -o jsonpath='{.spec.parentRefs}')"; exit 1; }
  $a allow -- kubectl -n "$t" "${tenant[@]}" patch httproute web --type=json -p '[{"op":"remove","path":"/spec/parentRefs/0/port"}]'
  [[ "$(admin get httproute web -o jsonpath='{.spec.parentRefs[0].port}')" == 443 ]] || { echo "dropping the port left $(admin get httproute web -o jsonpath='{.spec.parentRefs}')"; exit 1; }
  # Nor can an update move it to port 80.
  $a deny $P "port-80 listener" -- kubectl -n "$t" "${tenant[@]}" patch httproute web --type=json -p '[{"op":"replace","path":"/spec/parentRefs/0/port","value":80}]'
  $a deny $P "port-80 listener" -- kubectl -n "$t" "${tenant[@]}" patch httproute web --type=json -p '[{"op":"remove","path":"/spec/parentRefs/0/port"},{"op":"add","path":"/spec/parentRefs/0/sectionName","value":"http"}]'
  echo "port 80 stays the redirect's: named, it is refused; unnamed, a route gets port 443"
  ;;
*) echo "unknown case $1"; exit 1 ;;
esac
