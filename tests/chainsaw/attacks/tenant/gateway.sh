#!/usr/bin/env bash
# The gateway attacks of a tenant holding edit in its namespace (a child
# tenant, tenant-atk-<test id>, apex atk.example.org), one case per chainsaw
# step: gateway.sh CASE. As in attack.sh, each case first checks that RBAC
# alone would let the tenant do it, then that it is refused by the named
# policy or has no effect, with a message saying what to do instead, and
# that the legitimate use next to it works.
set -euo pipefail
cd "$(dirname "$0")"
id=${NAMESPACE#chainsaw-}
t=tenant-atk-${id}
shared=cozy-atk-${id}
tenant=(--as=mallory --as-group=system:authenticated)
a=../../_scripts/admission.sh
T=cozyplane-tenantgateway-attach-policy
P=cozyplane-route-port80-policy
K=(kubectl -n "$t" "${tenant[@]}")
admin() { kubectl -n "$t" "$@"; }
can() { # can VERB RESOURCE [NAMESPACE]
  if [[ "$(kubectl auth can-i "$1" "$2" -n "${3:-$t}" "${tenant[@]}" || true)" != yes ]]; then
    echo "RBAC does not let the tenant $1 $2 in ${3:-$t}: the attack would prove nothing"; exit 1
  fi
  echo "RBAC alone allows the tenant to $1 $2 in ${3:-$t}"
}
wait_for() { # wait_for WHAT CMD...: retries CMD for 30 s
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
tgw() { # tgw NAME ATTACHED...: a TenantGateway manifest for the tenant's apex
  printf 'apiVersion: gateway.cozystack.io/v1alpha1\nkind: TenantGateway\nmetadata: {name: %s}\nspec:\n  apex: atk.example.org\n  attachedNamespaces: [%s]\n' \
    "$1" "$(IFS=,; echo "${*:2}")"
}
route() { # route NAME PARENTREF-FIELDS: an HTTPRoute to the tenant's Gateway pub
  printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s}\nspec:\n  parentRefs: [{name: pub%s}]\n  hostnames: [www.atk.example.org]\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n' "$1" "$2"
}
gwlabel() { kubectl get namespace "$1" -o jsonpath='{.metadata.labels.namespace\.cozystack\.io/gateway}'; }
attached_reason() { admin get tenantgateway pub -o jsonpath='{.status.conditions[?(@.type=="NamespacesAttached")].reason}'; }

case "$1" in
attach-shared)
  kubectl create namespace "$shared" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  can create tenantgateways.gateway.cozystack.io
  can update tenantgateways.gateway.cozystack.io
  # A child tenant claims a shared platform namespace, or a sibling tenant.
  tgw pub "$shared" | $a deny $T "may list only descendants of this tenant ($t-*); refused: $shared. Shared namespaces (cozy-*, default) are attached by the root tenant's TenantGateway in tenant-root" -- \
    "${K[@]}" create -f -
  tgw pub tenant-atkother | $a deny $T "refused: tenant-atkother" -- "${K[@]}" create -f -
  # Its own descendants are its to attach.
  tgw pub "$t-kid" | $a allow -- "${K[@]}" create -f -
  $a deny $T "refused: $shared" -- "${K[@]}" patch tenantgateway pub --type=merge -p "{\"spec\":{\"attachedNamespaces\":[\"$t-kid\",\"$shared\"]}}"
  # The race, written by a trusted caller (as Flux renders upstream's gateway
  # chart with the cluster-wide list): the child's TenantGateway names the
  # shared namespace first, and ns-labels still refuses it.
  admin patch tenantgateway pub --type=merge -p "{\"spec\":{\"attachedNamespaces\":[\"$t-kid\",\"$shared\"]}}" >/dev/null
  wait_for "NamespacesAttached says NamespaceNotAllowed" bash -c "[[ \$(kubectl -n $t get tenantgateway pub -o jsonpath='{.status.conditions[?(@.type==\"NamespacesAttached\")].reason}') == NamespaceNotAllowed ]]"
  msg=$(admin get tenantgateway pub -o jsonpath='{.status.conditions[?(@.type=="NamespacesAttached")].message}')
  [[ "$msg" == *"$shared is a shared namespace: only the root tenant's TenantGateway (namespace tenant-root) may attach it; remove it from spec.attachedNamespaces"* ]] ||
    { echo "NamespacesAttached message: $msg"; exit 1; }
  [[ -z "$(gwlabel "$shared")" ]] || { echo "$shared was attached to $(gwlabel "$shared")"; exit 1; }
  echo "the child's TenantGateway does not attach $shared: $msg"
  # The legitimate use: the root tenant's TenantGateway attaches it, though
  # the child's named it first; a user with edit in tenant-root may write it.
  wait_for "no namespace tenant-root is left from an earlier scenario" bash -c '! kubectl get namespace tenant-root'
  kubectl create namespace tenant-root >/dev/null
  kubectl label namespace tenant-root namespace.cozystack.io/host=example.org >/dev/null
  kubectl -n tenant-root create rolebinding root-edit --clusterrole=edit --user=rooty >/dev/null
  wait_for "edit reaches rooty" bash -c "[[ \$(kubectl auth can-i create tenantgateways.gateway.cozystack.io -n tenant-root --as=rooty) == yes ]]"
  printf 'apiVersion: gateway.cozystack.io/v1alpha1\nkind: TenantGateway\nmetadata: {name: cozystack}\nspec:\n  apex: example.org\n  attachedNamespaces: [%s]\n' "$shared" |
    $a allow -- kubectl -n tenant-root --as=rooty --as-group=system:authenticated create -f -
  wait_for "$shared carries namespace.cozystack.io/gateway=tenant-root" bash -c "[[ \$(kubectl get namespace $shared -o jsonpath='{.metadata.labels.namespace\.cozystack\.io/gateway}') == tenant-root ]]"
  echo "the root tenant attached $shared"
  # Now the root lists it too, as upstream's chart renders the cluster-wide
  # list into every tenant's TenantGateway: the child's entry is no error,
  # and the namespace stays the root's.
  # ($t-kid, also listed, does not exist: the reason is NamespacesNotCreated.)
  wait_for "NamespacesAttached is True" bash -c "[[ \$(kubectl -n $t get tenantgateway pub -o jsonpath='{.status.conditions[?(@.type==\"NamespacesAttached\")].status}') == True ]]"
  msg=$(admin get tenantgateway pub -o jsonpath='{.status.conditions[?(@.type=="NamespacesAttached")].message}')
  [[ "$msg" == *"not created yet: $t-kid"*"; shared, published through the root tenant's Gateway (listed by the TenantGateway in tenant-root), not attached here: $shared" ]] ||
    { echo "NamespacesAttached message: $msg"; exit 1; }
  [[ "$(gwlabel "$shared")" == tenant-root ]] || { echo "$shared was attached to $(gwlabel "$shared")"; exit 1; }
  echo "the child's entry is reported as published through the root: $msg"
  ;;
port80)
  # The tenant owns a Gateway: ns-labels labels its namespace with itself.
  tgw pub "$t-kid" | admin apply -f - >/dev/null
  wait_for "$t carries namespace.cozystack.io/gateway=$t" bash -c "[[ \$(kubectl get namespace $t -o jsonpath='{.metadata.labels.namespace\.cozystack\.io/gateway}') == $t ]]"
  can create httproutes.gateway.networking.k8s.io
  can update httproutes.gateway.networking.k8s.io
  # A route on the hostname-less port-80 listener would be served in plain
  # HTTP whatever the hostname verdicts say: refused when it names the
  # listener or its port.
  route steal ", sectionName: http" | $a deny $P "would attach to the port-80 listener of Gateway pub in $t, which serves only the redirect to HTTPS and ACME challenges: add port: 443 (or the sectionName of an HTTPS listener)" -- "${K[@]}" create -f -
  route steal ", port: 80" | $a deny $P "port-80 listener" -- "${K[@]}" create -f -
  # A parentRef naming neither is given port 443 (cozyplane-route-port443-policy,
  # a MutatingAdmissionPolicy v1: Kubernetes 1.36 on) and never reaches port
  # 80, on create as on an update that drops the port; where the API server
  # serves no such policy, it is refused.
  if kubectl get mutatingadmissionpolicies.admissionregistration.k8s.io cozyplane-route-port443-policy >/dev/null 2>&1; then mutating=yes; else mutating=no; fi
  if [[ $mutating == yes ]]; then
    route steal "" | $a allow -- "${K[@]}" create -f -
    [[ "$(admin get httproute steal -o jsonpath='{.spec.parentRefs[0].port}')" == 443 ]] || { echo "the unnamed parentRef was stored as $(admin get httproute steal -o jsonpath='{.spec.parentRefs[0]}')"; exit 1; }
  else
    route steal "" | $a deny $P "port-80 listener" -- "${K[@]}" create -f -
  fi
  # The legitimate use: the HTTPS listeners, by port or by name.
  route web ", port: 443" | $a allow -- "${K[@]}" create -f -
  route web-named ", sectionName: https-www-0e2f1bcc" | $a allow -- "${K[@]}" create -f -
  if [[ $mutating == yes ]]; then
    $a allow -- "${K[@]}" patch httproute web --type=json -p '[{"op":"remove","path":"/spec/parentRefs/0/port"}]'
    [[ "$(admin get httproute web -o jsonpath='{.spec.parentRefs[0].port}')" == 443 ]] || { echo "dropping the port left $(admin get httproute web -o jsonpath='{.spec.parentRefs[0]}')"; exit 1; }
    echo "an unnamed parentRef is stored with port 443: steal and web name only the HTTPS listeners"
  else
    $a deny $P "port-80 listener" -- "${K[@]}" patch httproute web --type=json -p '[{"op":"remove","path":"/spec/parentRefs/0/port"}]'
    echo "without the port-443 policy, dropping the port is refused"
  fi
  # The redirect route gateway-listeners writes is the one route on port
  # 80, and other namespaces' routes never reach it.
  wait_for "the redirect route exists" admin get httproute pub-http-redirect
  [[ "$(admin get httproute pub-http-redirect -o jsonpath='{.spec.parentRefs[0].sectionName}')" == http ]]
  wait_for "the Gateway exists" admin get gateway pub
  http=$(admin get gateway pub -o json | jq -c '.spec.listeners[] | select(.name == "http") | .allowedRoutes')
  [[ "$(jq -c '[.kinds[].kind]' <<<"$http")" == '["HTTPRoute"]' ]] || { echo "port 80 admits $http"; exit 1; }
  # cert-manager's namespace: CERT_MANAGER_NAMESPACE (hack/e2e.sh exports it), the values sorted
  want=$(jq -cn --arg cm "${CERT_MANAGER_NAMESPACE:-cozy-cert-manager}" --arg t "$t" '[$cm, $t] | sort')
  [[ "$(jq -c '.namespaces.selector.matchExpressions[0].values' <<<"$http")" == "$want" ]] || { echo "port 80 admits $http, want $want"; exit 1; }
  echo "port 80 admits only the redirect, cert-manager's challenges and HTTPS-named routes: $http"
  ;;
*) echo "unknown case $1"; exit 1 ;;
esac
