#!/usr/bin/env bash
# Each controller identity allowed exactly its slice: for gateway-listeners,
# gateway-certs, ns-labels, route-conflicts and the terraform backend, first what RBAC alone
# grants (a SubjectAccessReview through kubectl auth can-i), then server-side
# dry-runs impersonating the identity: what the controller really writes
# passes, and each write outside its slice (another namespace, another shape,
# another field) is refused by its identity policy with that policy's
# message. identities.sh CASE.
set -euo pipefail
cd "$(dirname "$0")"
a=../../_scripts/admission.sh
ns=$NAMESPACE
id=${NAMESPACE#chainsaw-}
sa() { echo "--as=system:serviceaccount:cozy-system:cozystack-$1"; }
# rbac IDENTITY VERB RESOURCE [NAMESPACE]: RBAC alone lets the identity do it
rbac() {
  local got
  got=$(kubectl auth can-i "$2" "$3" ${4:+-n "$4"} "$(sa "$1")" || true)
  [[ "${got}" == yes ]] || { echo "RBAC does not let $1 $2 $3 in ${4:-the cluster}: the check would prove nothing"; exit 1; }
  echo "RBAC alone lets $1 $2 $3 in ${4:-the cluster}"
}
wait_for() { # wait_for WHAT CMD...: retries CMD for 45 s
  local what=$1; shift
  for _ in $(seq 1 90); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
uid() { kubectl -n "$ns" get tenantgateway "$1" -o jsonpath='{.metadata.uid}'; }
owner() { # owner TGW: the controller ownerReference the gateway controllers set
  printf '  ownerReferences: [{apiVersion: gateway.cozystack.io/v1alpha1, kind: TenantGateway, name: %s, uid: %s, controller: true, blockOwnerDeletion: true}]\n' "$1" "$(uid "$1")"
}
# A namespace holding no TenantGateway, for writes outside the controllers' namespaces.
other=id-none-$1-${id}
if [[ $1 == gateway-* ]]; then
  kubectl create namespace "${other}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  trap 'kubectl delete namespace "${other}" --wait=false >/dev/null 2>&1 || true' EXIT
fi

case "$1" in
gateway-listeners)
  G=cozyplane-gateway-listeners-identity-policy GT=cozyplane-gateway-listeners-tenantgateway-policy
  K=(kubectl -n "$ns" "$(sa gateway-listeners)")
  rbac gateway-listeners create gateways.gateway.networking.k8s.io "${other}"
  rbac gateway-listeners patch httproutes.gateway.networking.k8s.io kube-system
  wait_for "the Gateway pub exists" kubectl -n "$ns" get gateway pub
  wait_for "the redirect route exists" kubectl -n "$ns" get httproute pub-http-redirect
  # What it writes: the Gateway and the redirect route, re-applied as they are.
  for o in gateway/pub httproute/pub-http-redirect; do
    kubectl -n "$ns" get "$o" -o json | jq 'del(.metadata.managedFields, .metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.generation, .status)' \
      | $a allow -- "${K[@]}" apply --server-side --force-conflicts --field-manager=gateway-listeners --dry-run=server -f -
  done
  "${K[@]}" patch gateway pub --type=merge -p '{"metadata":{"annotations":{"e2e":"x"}}}' --dry-run=server >/dev/null
  # Another namespace: only objects a TenantGateway controls (a namespace
  # without one holds none; an owner reference naming a TenantGateway that
  # does not exist is the garbage collector's to remove).
  gw() { # gw NAME NAMESPACE [OWNER-LINES]: a Gateway with a port-443 listener
    printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: %s\n  namespace: %s\n%sspec:\n  gatewayClassName: cilium\n  listeners:\n  - {name: https, port: 443, protocol: HTTPS, hostname: a.id.example.org, tls: {certificateRefs: [{name: x}]}, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {namespace.cozystack.io/gateway: %s}}}}}\n' \
      "$1" "$2" "${3:+$3$'\n'}" "$2"
  }
  gw pub "${other}" | $a deny $G "which is not (or would no longer be) controlled by a TenantGateway, is refused" -- kubectl "$(sa gateway-listeners)" create --dry-run=server -f -
  # In its namespace: only objects a TenantGateway controls, at its names.
  gw evil "$ns" | $a deny $G "which is not (or would no longer be) controlled by a TenantGateway, is refused" -- "${K[@]}" create --dry-run=server -f -
  gw evil "$ns" "$(owner pub)" | $a deny $G "names the objects of TenantGateway pub pub (Gateway) and pub-http-redirect (HTTPRoute); CREATE of Gateway $ns/evil is refused" -- \
    "${K[@]}" create --dry-run=server -f -
  gw pub "$ns" "$(owner pub | sed 's/uid: [^,]*/uid: 00000000-0000-0000-0000-000000000000/')" | \
    $a deny $GT "its owner reference names another object of that name" -- "${K[@]}" create --dry-run=server -f -
  # Listeners: never from every namespace, never another label, never port 80 beyond the owner and cert-manager.
  $a deny $G "has another listener and is refused" -- "${K[@]}" patch gateway pub --type=json --dry-run=server \
    -p '[{"op":"replace","path":"/spec/listeners/0/allowedRoutes/namespaces","value":{"from":"All"}}]'
  $a deny $G "has another listener and is refused" -- "${K[@]}" patch gateway pub --type=json --dry-run=server \
    -p '[{"op":"add","path":"/spec/listeners/-","value":{"name":"plain","port":8080,"protocol":"HTTP","allowedRoutes":{"namespaces":{"from":"Same"}}}}]'
  $a deny $G "has another listener and is refused" -- "${K[@]}" patch gateway pub --type=json --dry-run=server \
    -p '[{"op":"add","path":"/spec/listeners/0/allowedRoutes/namespaces/selector/matchExpressions/0/values/-","value":"kube-system"}]'
  $a deny $G "sets addresses" -- "${K[@]}" patch gateway pub --type=merge --dry-run=server -p '{"spec":{"addresses":[{"type":"IPAddress","value":"10.0.0.1"}]}}'
  $a deny $GT "asks for class evil and is refused" -- "${K[@]}" patch gateway pub --type=merge --dry-run=server -p '{"spec":{"gatewayClassName":"evil"}}'
  # The redirect route is its only HTTPRoute, so its exemption from the
  # port-80 rule covers nothing else: no backend, no other hostname, no other name.
  $a deny $G "as a 301 redirect to https without backends" -- "${K[@]}" patch httproute pub-http-redirect --type=json --dry-run=server \
    -p '[{"op":"replace","path":"/spec/rules/0","value":{"backendRefs":[{"name":"web","port":80}]}}]'
  $a deny $GT "for id.example.org and *.id.example.org; HTTPRoute $ns/pub-http-redirect names other hostnames" -- "${K[@]}" patch httproute pub-http-redirect --type=merge --dry-run=server \
    -p '{"spec":{"hostnames":["dashboard.example.org"]}}'
  printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: steal\n%sspec:\n  parentRefs: [{name: pub}]\n  hostnames: [id.example.org, "*.id.example.org"]\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n' "$(owner pub)"$'\n' \
    | $a deny $G "HTTPRoute $ns/steal is refused" -- "${K[@]}" create --dry-run=server -f -
  # Another writer's route cannot be taken over by adding an owner.
  printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: pub-http-redirect-foreign}\nspec:\n  parentRefs: [{name: pub, port: 443}]\n  hostnames: [www.id.example.org]\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n' \
    | kubectl -n "$ns" apply -f - >/dev/null
  $a deny $G "which is not (or would no longer be) controlled by a TenantGateway" -- "${K[@]}" patch httproute pub-http-redirect-foreign --type=merge --dry-run=server \
    -p "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"gateway.cozystack.io/v1alpha1\",\"kind\":\"TenantGateway\",\"name\":\"pub\",\"uid\":\"$(uid pub)\",\"controller\":true}]}}"
  # An administrator is not this policy's business.
  gw evil "$ns" | $a allow -- kubectl create --dry-run=server -f -
  ;;
gateway-certs)
  C=cozyplane-gateway-certs-identity-policy CT=cozyplane-gateway-certs-tenantgateway-policy
  K=(kubectl -n "$ns" "$(sa gateway-certs)")
  rbac gateway-certs create issuers.cert-manager.io "${other}"
  rbac gateway-certs create certificates.cert-manager.io kube-system
  rbac gateway-certs delete certificates.cert-manager.io "$ns"
  wait_for "the Issuer pub-gateway exists" kubectl -n "$ns" get issuer pub-gateway
  wait_for "the Issuer dns-gateway exists" kubectl -n "$ns" get issuer dns-gateway
  wait_for "the Certificate dns-gateway-tls exists" kubectl -n "$ns" get certificate dns-gateway-tls
  # What it writes, re-applied as it is, and deletes.
  for o in issuer/pub-gateway issuer/dns-gateway certificate/dns-gateway-tls; do
    kubectl -n "$ns" get "$o" -o json | jq 'del(.metadata.managedFields, .metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.generation, .status)' \
      | $a allow -- "${K[@]}" apply --server-side --force-conflicts --field-manager=gateway-certs --dry-run=server -f -
  done
  $a allow -- "${K[@]}" delete certificate dns-gateway-tls --dry-run=server
  issuer() { # issuer NAME NAMESPACE SPEC-LINES [OWNER-LINES]
    printf 'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: %s\n  namespace: %s\n%sspec:\n%s\n' "$1" "$2" "${4:+$4$'\n'}" "$3"
  }
  acme() { # acme SERVER KEY: an HTTP-01 ACME spec on the Gateway pub
    printf '  acme:\n    server: %s\n    privateKeySecretRef: {name: %s}\n    solvers: [{http01: {gatewayHTTPRoute: {parentRefs: [{name: pub, sectionName: http}]}}}]' "$1" "$2"
  }
  LE=https://acme-v02.api.letsencrypt.org/directory
  issuer pub-gateway "${other}" "$(acme $LE pub-acme-account)" | $a deny $C "which is not (or would no longer be) controlled by a TenantGateway" -- kubectl "$(sa gateway-certs)" create --dry-run=server -f -
  # Issuers: the ACME one of its TenantGateway only.
  issuer pub-gateway "$ns" '  ca: {secretName: cozystack-values}' "$(owner pub)" | $a deny $C "is another issuer (ca)" -- "${K[@]}" create --dry-run=server -f -
  issuer pub-gateway "$ns" '  selfSigned: {}' "$(owner pub)" | $a deny $C "is another issuer (selfSigned)" -- "${K[@]}" create --dry-run=server -f -
  issuer evil "$ns" "$(acme $LE evil-acme-account)" "$(owner pub)" | $a deny $C "CREATE of Issuer $ns/evil is refused" -- "${K[@]}" create --dry-run=server -f -
  issuer evil "$ns" "$(acme $LE pub-acme-account)" | $a deny $C "which is not (or would no longer be) controlled by a TenantGateway" -- "${K[@]}" create --dry-run=server -f -
  $a deny $C "or another ACME account and is refused" -- "${K[@]}" patch issuer pub-gateway --type=merge --dry-run=server \
    -p '{"spec":{"acme":{"server":"https://acme.evil.example.com/directory"}}}'
  $a deny $C "or another ACME account and is refused" -- "${K[@]}" patch issuer pub-gateway --type=merge --dry-run=server \
    -p '{"spec":{"acme":{"privateKeySecretRef":{"name":"cozystack-values"}}}}'
  $a deny $CT "with the ACME directory of its spec.issuerName (letsencrypt-prod)" -- "${K[@]}" patch issuer pub-gateway --type=merge --dry-run=server \
    -p '{"spec":{"acme":{"server":"https://acme-staging-v02.api.letsencrypt.org/directory"}}}'
  $a deny $C "has another solver and is refused" -- "${K[@]}" patch issuer pub-gateway --type=json --dry-run=server \
    -p '[{"op":"add","path":"/spec/acme/solvers/0/http01/gatewayHTTPRoute/podTemplate","value":{"spec":{"nodeSelector":{"node-role.kubernetes.io/control-plane":""}}}}]'
  # DNS-01: the Secrets and settings the TenantGateway names, nothing else.
  $a deny $CT "names other Secrets, another nameserver or another key and is refused" -- "${K[@]}" patch issuer dns-gateway --type=json --dry-run=server \
    -p '[{"op":"replace","path":"/spec/acme/solvers/0/dns01/cloudflare/apiTokenSecretRef/name","value":"cozystack-values"}]'
  # Certificates: from its Issuer, into the Secret of their own name, dnsNames only.
  cert() { # cert NAME SPEC-LINES [OWNER-LINES]
    printf 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: %s\n%sspec:\n%s\n' "$1" "${3:+$3$'\n'}" "$2"
  }
  cert pub-www-tls '  secretName: pub-www-tls\n  dnsNames: [www.id.example.org]\n  issuerRef: {name: root-ca, kind: ClusterIssuer, group: cert-manager.io}' "$(owner pub)" \
    | sed 's/\\n/\n/g' | $a deny $C "(secretName pub-www-tls, issuer ClusterIssuer root-ca" -- "${K[@]}" create --dry-run=server -f -
  cert pub-www-tls '  secretName: cozystack-values\n  dnsNames: [www.id.example.org]\n  issuerRef: {name: pub-gateway, kind: Issuer, group: cert-manager.io}' "$(owner pub)" \
    | sed 's/\\n/\n/g' | $a deny $C "(secretName cozystack-values" -- "${K[@]}" create --dry-run=server -f -
  cert pub-www-tls '  secretName: pub-www-tls\n  dnsNames: [www.id.example.org]\n  isCA: true\n  issuerRef: {name: pub-gateway, kind: Issuer, group: cert-manager.io}' "$(owner pub)" \
    | sed 's/\\n/\n/g' | $a deny $C "isCA" -- "${K[@]}" create --dry-run=server -f -
  cert pub-www-tls '  secretName: pub-www-tls\n  dnsNames: [www.id.example.org]\n  issuerRef: {name: pub-gateway, kind: Issuer, group: cert-manager.io}' "$(owner pub)" \
    | sed 's/\\n/\n/g' | $a allow -- "${K[@]}" create --dry-run=server -f -
  # Deleting: only what a TenantGateway controls.
  cert foreign-tls '  secretName: foreign-tls\n  dnsNames: [www.id.example.org]\n  issuerRef: {name: pub-gateway, kind: Issuer, group: cert-manager.io}' \
    | sed 's/\\n/\n/g' | kubectl -n "$ns" apply -f - >/dev/null
  $a deny $C "DELETE of Certificate $ns/foreign-tls, which is not (or would no longer be) controlled by a TenantGateway, is refused" -- \
    "${K[@]}" delete certificate foreign-tls --dry-run=server
  ;;
ns-labels)
  N=cozyplane-ns-labels-identity-policy
  K=(kubectl "$(sa ns-labels)")
  rbac ns-labels patch namespaces
  # Tenant namespaces (names without hyphens after tenant-): a root-level
  # tenant, its child, and an unrelated tenant.
  t=tenant-id${id//-/}
  for n in "$t" "$t-kid" "tenant-other${id//-/}"; do
    kubectl create namespace "$n" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
    kubectl label namespace "$n" team=platform --overwrite >/dev/null
  done
  # What it writes: the label and the annotation, set and removed, for a namespace it may attach.
  $a allow -- "${K[@]}" annotate namespace "$t-kid" cozystack.io/gateway-attached-by="$t" --dry-run=server
  $a allow -- "${K[@]}" label namespace "$t-kid" namespace.cozystack.io/gateway="$t" --dry-run=server
  $a allow -- "${K[@]}" label namespace "$t" namespace.cozystack.io/gateway="$t" --dry-run=server
  $a allow -- "${K[@]}" label namespace "tenant-other${id//-/}" namespace.cozystack.io/gateway=tenant-root --dry-run=server
  kubectl label namespace "$t-kid" namespace.cozystack.io/gateway="$t" --overwrite >/dev/null
  $a allow -- "${K[@]}" label namespace "$t-kid" namespace.cozystack.io/gateway- --dry-run=server
  # Any other label, annotation or field, through any verb or subresource.
  $a deny $N "changes other labels or annotations (team)" -- "${K[@]}" label namespace "$t" team=evil --overwrite --dry-run=server
  $a deny $N "changes other labels or annotations (team)" -- "${K[@]}" label namespace "$t" team- --dry-run=server
  $a deny $N "changes other labels or annotations (pod-security.kubernetes.io/enforce)" -- \
    "${K[@]}" label namespace "$t" pod-security.kubernetes.io/enforce=privileged --dry-run=server
  $a deny $N "changes other labels or annotations (scheduler.alpha.kubernetes.io/node-selector)" -- \
    "${K[@]}" annotate namespace "$t" scheduler.alpha.kubernetes.io/node-selector=role=infra --dry-run=server
  $a deny $N "changes its spec, finalizers or owner references" -- "${K[@]}" patch namespace "$t" --type=merge --dry-run=server \
    -p '{"metadata":{"finalizers":["e2e.cozystack.io/hold"]}}'
  # Attaching: only where a TenantGateway of the owner may attach (MayAttach).
  $a deny $N "namespace tenant-other${id//-/} to $t is refused" -- \
    "${K[@]}" label namespace "tenant-other${id//-/}" namespace.cozystack.io/gateway="$t" --dry-run=server
  $a deny $N "namespace tenant-other${id//-/} to $t is refused" -- \
    "${K[@]}" annotate namespace "tenant-other${id//-/}" cozystack.io/gateway-attached-by="$t" --dry-run=server
  # RBAC gives it patch of namespaces only: deleting one or writing the
  # status subresource (whose strategy keeps labels) is RBAC's to refuse; the
  # policy refuses them too, should a broader role be bound.
  for req in "delete namespace $t" "patch namespace $t --subresource=status --type=merge -p {\"metadata\":{\"labels\":{\"team\":\"evil\"}}}"; do
    # shellcheck disable=SC2086
    if out=$("${K[@]}" $req --dry-run=server 2>&1); then echo "ns-labels could $req"; exit 1; fi
    [[ "$out" == *forbidden* ]] || { echo "not refused by RBAC: $req: $out"; exit 1; }
    echo "refused by RBAC: $req"
  done
  for n in "$t" "$t-kid" "tenant-other${id//-/}"; do kubectl delete namespace "$n" --wait=false >/dev/null; done
  ;;
terraform)
  T=cozyplane-terraform-identity-policy
  p=cozy-tf-id-${id}
  kubectl create namespace "$p" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl label namespace "$p" apps.cozystack.io/platform-namespace=Terraform apps.cozystack.io/tenant-namespace="$ns" --overwrite >/dev/null
  K=(kubectl -n "$p" "$(sa terraform)")
  rbac terraform create terraforms.infra.contrib.fluxcd.io "$p"
  rbac terraform create namespaces
  # tf SPEC-LINES: a backing Terraform object with the runner pod template spec given
  tf() {
    printf 'apiVersion: infra.contrib.fluxcd.io/v1alpha2\nkind: Terraform\nmetadata:\n  name: idinfra-made\n  labels: {apps.cozystack.io/application.kind: E2eIdInfra, apps.cozystack.io/application.name: made}\nspec:\n  interval: 1m\n  sourceRef: {kind: OCIRepository, name: m, namespace: cozy-system}\n  runnerPodTemplate:\n    metadata: {labels: {runner: aws}}\n    spec:\n%s\n' "$1"
  }
  # What a definition may ask for: its labels, env, restricted-compatible settings, the runner images.
  tf '      env: [{name: TF_LOG, value: info}]' | $a allow -- "${K[@]}" create --dry-run=server -f -
  tf '      image: ghcr.io/flux-iac/tf-runner:v0.16.0-rc.5
      securityContext: {runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, seccompProfile: {type: RuntimeDefault}}
      volumes: [{name: cache, emptyDir: {}}, {name: creds, secret: {secretName: aws}}]
      volumeMounts: [{name: cache, mountPath: /cache}]' | $a allow -- "${K[@]}" create --dry-run=server -f -
  # What would make the runner a way out of its Pod.
  tf '      securityContext: {privileged: true}' | $a deny $T "asks for one in tf-runner and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      securityContext: {allowPrivilegeEscalation: true}' | $a deny $T "asks for one in tf-runner and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      securityContext: {capabilities: {add: [SYS_ADMIN]}}' | $a deny $T "asks for one in tf-runner and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      volumes: [{name: root, hostPath: {path: /}}]' | $a deny $T "asks for root and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      priorityClassName: system-node-critical' | $a deny $T "asks for system-node-critical and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      image: docker.io/evil/runner:latest' | $a deny $T "asks for tf-runner: docker.io/evil/runner:latest and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      image: ghcr.io/flux-iac/tf-runner-evil:v1' | $a deny $T "asks for tf-runner: ghcr.io/flux-iac/tf-runner-evil:v1" -- "${K[@]}" create --dry-run=server -f -
  tf '      initContainers: [{name: setup, image: busybox}]' | $a deny $T "asks for setup: busybox and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      initContainers: [{name: setup, image: ghcr.io/flux-iac/tf-runner:v0.16.0-rc.5, securityContext: {privileged: true}}]' \
    | $a deny $T "asks for one in setup and is refused" -- "${K[@]}" create --dry-run=server -f -
  tf '      initContainers: [{name: setup, image: ghcr.io/flux-iac/tf-runner:v0.16.0-rc.5, ports: [{containerPort: 22, hostPort: 22}]}]' \
    | $a deny $T "asks for one in setup and is refused" -- "${K[@]}" create --dry-run=server -f -
  # Platform namespaces: its two labels only, no Pod Security label.
  pns() { # pns EXTRA-LABELS: a platform namespace manifest
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cozy-tf-id2-%s\n  labels: {apps.cozystack.io/platform-namespace: Terraform, apps.cozystack.io/tenant-namespace: %s%s}\n' "${id}" "$ns" "$1"
  }
  pns '' | $a allow -- kubectl "$(sa terraform)" create --dry-run=server -f -
  pns ', pod-security.kubernetes.io/enforce: privileged' | $a deny $T "also sets pod-security.kubernetes.io/enforce and is refused" -- kubectl "$(sa terraform)" create --dry-run=server -f -
  pns ', team: evil' | $a deny $T "also sets team and is refused" -- kubectl "$(sa terraform)" create --dry-run=server -f -
  kubectl delete namespace "$p" --wait=false >/dev/null
  ;;
route-conflicts)
  R=cozyplane-route-conflicts-identity-policy
  got=$(kubectl auth can-i update httproutes.gateway.networking.k8s.io --subresource=status -n "$ns" "$(sa route-conflicts)" || true)
  [[ "${got}" == yes ]] || { echo "RBAC does not let route-conflicts update httproutes/status: the check would prove nothing"; exit 1; }
  echo "RBAC alone lets route-conflicts update httproutes/status in $ns"
  # A route of a Gateway no TenantGateway owns: route-conflicts itself has
  # nothing to say about it, so only these requests write its status.
  printf 'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: rc-probe}\nspec:\n  parentRefs: [{name: elsewhere}]\n  hostnames: [app.example.org]\n' | kubectl -n "$ns" apply -f - >/dev/null
  # entry CONTROLLER REASON: one status.parents entry, as JSON
  entry() { printf '{"parentRef":{"name":"elsewhere"},"controllerName":"%s","conditions":[{"type":"Accepted","status":"True","reason":"%s","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}]}' "$1" "$2"; }
  theirs=$(entry gateway.envoyproxy.io/gatewayclass-controller Accepted)
  ours=$(entry gateway.cozystack.io/tenantgateway-controller Accepted)
  # The Gateway implementation's entry, written by the administrator playing it.
  kubectl -n "$ns" patch httproute rc-probe --subresource=status --type=merge -p "{\"status\":{\"parents\":[$theirs]}}" >/dev/null
  # route-conflicts updates the status subresource without reading it through
  # that path (its role has no get there): each request is a dry-run PUT of
  # the route as read, with other status.parents.
  dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
  body() { # body FILE PARENTS: the route with PARENTS as status.parents, in FILE
    kubectl -n "$ns" get httproute rc-probe -o json | jq --argjson p "[$2]" '.status.parents = $p' >"$dir/$1"
    echo "$dir/$1"
  }
  put=(kubectl replace --raw "/apis/gateway.networking.k8s.io/v1/namespaces/$ns/httproutes/rc-probe/status?dryRun=All" -f)
  # What route-conflicts writes: its verdict beside the other entries.
  $a allow -- "${put[@]}" "$(body ok "$theirs,$ours")" "$(sa route-conflicts)"
  $a allow -- "${put[@]}" "$(body conflict "$theirs,$(entry gateway.cozystack.io/tenantgateway-controller HostnameConflict)")" "$(sa route-conflicts)"
  # Dropping or changing another controller's entry is refused.
  $a deny $R "the entries of other controllers must stay as they were, in order (1 before, 0 after or changed)" -- \
    "${put[@]}" "$(body dropped "$ours")" "$(sa route-conflicts)"
  $a deny $R "the entries of other controllers must stay as they were" -- \
    "${put[@]}" "$(body changed "$(entry gateway.envoyproxy.io/gatewayclass-controller NotAllowedByListeners),$ours")" "$(sa route-conflicts)"
  $a deny $R "the entries of other controllers must stay as they were" -- \
    "${put[@]}" "$(body added "$theirs,$(entry example.com/forged Accepted),$ours")" "$(sa route-conflicts)"
  # The same request from an administrator is not this policy's business.
  $a allow -- "${put[@]}" "$dir/dropped"
  # Copies the implementation left (Envoy Gateway v1.9.1 writes its entry in
  # place of ours, once more per write) may be dropped, keeping one; the
  # entry itself may not.
  kubectl -n "$ns" patch httproute rc-probe --subresource=status --type=merge -p "{\"status\":{\"parents\":[$theirs,$theirs]}}" >/dev/null
  $a allow -- "${put[@]}" "$(body copies "$theirs,$ours")" "$(sa route-conflicts)"
  $a deny $R "only a copy identical to another entry may be dropped" -- \
    "${put[@]}" "$(body copies-dropped "$ours")" "$(sa route-conflicts)"
  kubectl -n "$ns" delete httproute rc-probe --wait=false >/dev/null
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
