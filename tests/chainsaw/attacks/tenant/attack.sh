#!/usr/bin/env bash
# The attacks of a tenant holding the built-in edit ClusterRole in its
# namespace, one case per chainsaw step: attack.sh CASE. Every case first
# checks that RBAC alone would let the tenant do it (kubectl auth can-i), so
# the refusal that follows is the admission policy's and not RBAC's; then it
# tries the attack, asserts who refused it and that the message says what to
# do instead, and does the legitimate thing next to it.
#
#   t       the tenant namespace (tenant-atk-<test id>), apex atk.example.org
#   tenant  kubectl arguments impersonating the tenant, mallory
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-atk-${NAMESPACE#chainsaw-}
tenant=(--as=mallory --as-group=system:authenticated)
a=../../_scripts/admission.sh
V=cozyplane-values-secret-policy
B=cozyplane-backing-object-policy
O=cozyplane-instance-orphan-policy
I=cozyplane-ingress-hostname-policy

# can VERB RESOURCE [SUBRESOURCE]: fails unless RBAC lets the tenant do it in $t.
can() {
  local sub=()
  [[ $# -gt 2 ]] && sub=(--subresource="$3")
  if [[ "$(kubectl auth can-i "$1" "$2" "${sub[@]}" -n "$t" "${tenant[@]}" || true)" != yes ]]; then
    echo "RBAC does not let the tenant $1 $2 ${3:-}: the attack would prove nothing"; exit 1
  fi
  echo "RBAC alone allows the tenant to $1 $2 ${3:-}"
}
# wait_for WHAT CMD...: retries CMD for 30 s, fails saying WHAT did not happen.
wait_for() {
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
# K: kubectl as the tenant in its namespace (an array, so admission.sh can run it)
K=(kubectl -n "$t" "${tenant[@]}")
admin() { kubectl -n "$t" "$@"; }
hr() { # hr NAME METADATA-LINES SPEC-LINES: a HelmRelease manifest
  printf 'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: %s\n%s\nspec:\n  interval: 5m\n  chartRef: {kind: OCIRepository, name: own-chart}\n%s\n' "$1" "$2" "$3"
}
appLabels() { # appLabels NAME: the application labels of instance E2eAtkApp/NAME
  printf '  labels: {apps.cozystack.io/application.kind: E2eAtkApp, apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.name: %s}' "$1"
}

case "$1" in
values-secret)
  can update secrets; can delete secrets; can create secrets
  $a deny $V "is written only by the tenant chart through Flux: UPDATE by mallory is refused. Change the Tenant instead" -- \
    "${K[@]}" patch secret cozystack-values --type=merge -p '{"stringData":{"values.yaml":"_namespace: {host: victim.example.net, gateway: tenant-root}"}}'
  $a deny $V "DELETE by mallory is refused" -- "${K[@]}" delete secret cozystack-values
  # delete-collection deletes one by one, each checked on its own
  $a deny $V "DELETE by mallory is refused" -- "${K[@]}" delete --raw "/api/v1/namespaces/$t/secrets"
  [[ "$(admin get secret cozystack-values -o jsonpath='{.data.values\.yaml}' | base64 -d)" == *"host: atk.example.org"* ]]
  # the tenant's own values live in Secrets of other names
  $a allow -- "${K[@]}" create secret generic my-values --from-literal=values.yaml='replicas: 2'
  $a allow -- "${K[@]}" patch secret my-values --type=merge -p '{"stringData":{"values.yaml":"replicas: 3"}}'
  ;;
forge-labels)
  can create helmreleases.helm.toolkit.fluxcd.io
  hr atk-evil "$(appLabels evil)" "  postRenderers: [{kustomize: {patches: [{patch: '[]'}]}}]" \
    | $a deny $B "is the backing object of the instance E2eAtkApp/evil (apps.cozystack.io) and only its backend controller writes it: CREATE by mallory is refused. Change the instance E2eAtkApp/evil instead" -- "${K[@]}" create -f -
  # with the name of an existing backing object, or any application label alone
  hr atk-web2 '  labels: {apps.cozystack.io/application.name: web}' "" | $a deny $B "CREATE by mallory is refused" -- "${K[@]}" create -f -
  # A HelmRelease without the marks is the tenant's own, but helm-controller
  # applies it: without a ServiceAccount to impersonate it would install any
  # chart anywhere with its own cluster-wide rights.
  F=cozyplane-tenant-flux-identity-policy
  hr own-release "" "  targetNamespace: kube-system" | $a deny $F "names no spec.serviceAccountName, so Flux's helm-controller would apply it with its own cluster-wide rights: set spec.serviceAccountName to a ServiceAccount of $t" -- "${K[@]}" create -f -
  hr own-release "" "  serviceAccountName: deployer
  kubeConfig: {secretRef: {name: admin-kubeconfig}}" | $a deny $F "spec.kubeConfig is refused in a tenant namespace" -- "${K[@]}" create -f -
  # naming a ServiceAccount of its namespace, the tenant's own HelmRelease is Flux's business (docs/security.md)
  hr own-release "" "  serviceAccountName: deployer" | $a allow -- "${K[@]}" create -f -
  # dropping the ServiceAccount later is refused too; what leaves the spec alone is not this policy's business
  $a deny $F "names no spec.serviceAccountName" -- "${K[@]}" patch helmrelease own-release --type=json -p '[{"op":"remove","path":"/spec/serviceAccountName"}]'
  $a allow -- "${K[@]}" patch helmrelease own-release --type=merge -p '{"spec":{"interval":"10m"}}'
  ;;
forge-owner)
  can create helmreleases.helm.toolkit.fluxcd.io
  # A controller reference to an instance would make the helm backend take the
  # object for its own and apply its chart and values onto it, keeping the
  # tenant's postRenderers, targetNamespace and serviceAccountName.
  # (Admission runs before the name is checked for existence, so it makes no
  # difference whether the backend controller already created its own.)
  uid=$(admin get e2eatkapp fresh -o jsonpath='{.metadata.uid}')
  hr atk-fresh "  ownerReferences: [{apiVersion: apps.cozystack.io/v1alpha1, kind: E2eAtkApp, name: fresh, uid: $uid, controller: true}]" \
    "  targetNamespace: kube-system
  serviceAccountName: default
  postRenderers: [{kustomize: {patches: [{patch: '[]'}]}}]" \
    | $a deny $B "is the backing object of the instance E2eAtkApp/fresh (apps.cozystack.io) and only its backend controller writes it: CREATE by mallory is refused" -- "${K[@]}" create -f -
  ;;
adopt-unrelated)
  can patch helmreleases.helm.toolkit.fluxcd.io
  # marking an unrelated HelmRelease as a backing object (to be adopted)
  $a deny $B "UPDATE by mallory is refused. Change the instance E2eAtkApp/fresh instead" -- \
    "${K[@]}" label helmrelease own-release apps.cozystack.io/application.kind=E2eAtkApp apps.cozystack.io/application.group=apps.cozystack.io apps.cozystack.io/application.name=fresh
  uid=$(admin get e2eatkapp fresh -o jsonpath='{.metadata.uid}')
  $a deny $B "UPDATE by mallory is refused" -- "${K[@]}" patch helmrelease own-release --type=merge \
    -p "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps.cozystack.io/v1alpha1\",\"kind\":\"E2eAtkApp\",\"name\":\"fresh\",\"uid\":\"$uid\",\"controller\":true}]}}"
  $a allow -- "${K[@]}" label helmrelease own-release team=web
  ;;
strip-labels)
  can patch helmreleases.helm.toolkit.fluxcd.io
  $a deny $B "HelmRelease $t/atk-web is the backing object of the instance E2eAtkApp/web" -- "${K[@]}" label helmrelease atk-web apps.cozystack.io/application.name-
  $a deny $B "Change the instance E2eAtkApp/web instead" -- "${K[@]}" patch helmrelease atk-web --type=json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]'
  [[ "$(admin get helmrelease atk-web -o jsonpath='{.metadata.labels.apps\.cozystack\.io/application\.name}')" == web ]]
  ;;
change-spec)
  can patch helmreleases.helm.toolkit.fluxcd.io; can update helmreleases.helm.toolkit.fluxcd.io
  for p in '{"spec":{"postRenderers":[{"kustomize":{"patches":[{"patch":"[]"}]}}]}}' '{"spec":{"targetNamespace":"kube-system"}}' \
           '{"spec":{"serviceAccountName":"default"}}' '{"spec":{"values":{"replicas":9}}}' '{"spec":{"chartRef":{"kind":"OCIRepository","name":"evil","namespace":"cozy-system"}}}'; do
    $a deny $B "UPDATE by mallory is refused. Change the instance E2eAtkApp/web instead" -- "${K[@]}" patch helmrelease atk-web --type=merge -p "$p"
  done
  # the legitimate path: change the instance, the backend brings the HelmRelease along
  $a allow -- "${K[@]}" patch e2eatkapp web --type=merge -p '{"spec":{"replicas":3}}'
  replicas() { [[ "$(admin get helmrelease atk-web -o jsonpath='{.spec.values.replicas}')" == 3 ]]; }
  wait_for "the HelmRelease follows the instance (spec.values.replicas 3)" replicas
  ;;
fake-status)
  can patch helmreleases.helm.toolkit.fluxcd.io status
  $a deny $B "only its backend controller writes it (its status: Flux): UPDATE of status by mallory is refused" -- \
    "${K[@]}" patch helmrelease atk-web --subresource=status --type=merge -p '{"status":{"lastAttemptedRevision":"9.9.9"}}'
  ;;
delete-backing)
  can delete helmreleases.helm.toolkit.fluxcd.io; can deletecollection helmreleases.helm.toolkit.fluxcd.io
  $a deny $B "DELETE by mallory is refused. Change the instance E2eAtkApp/web instead" -- "${K[@]}" delete helmrelease atk-web
  $a deny $B "DELETE by mallory is refused" -- "${K[@]}" delete --raw "/apis/helm.toolkit.fluxcd.io/v2/namespaces/$t/helmreleases"
  admin get helmrelease atk-web >/dev/null
  ;;
# terraform-object and approve-prefix: terraform.sh (the Terraform object is in
# the platform namespace).
orphan-delete)
  can delete e2eatkapps.apps.cozystack.io; can deletecollection e2eatkapps.apps.cozystack.io
  $a deny $O "with orphaning (propagationPolicy Orphan, --cascade=orphan, or orphanDependents) is refused: it would leave its backing HelmRelease or Terraform object running without an instance" -- \
    "${K[@]}" delete e2eatkapp web --cascade=orphan
  $a deny $O "Delete with the default cascade" -- "${K[@]}" delete --raw "/apis/apps.cozystack.io/v1alpha1/namespaces/$t/e2eatkapps/web" -f <(echo '{"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":true}')
  $a deny $O "refused" -- "${K[@]}" delete --raw "/apis/apps.cozystack.io/v1alpha1/namespaces/$t/e2eatkapps?propagationPolicy=Orphan"
  $a deny $O "refused" -- "${K[@]}" delete e2eatkinfra net --cascade=orphan
  admin get e2eatkapp web >/dev/null
  # the legitimate deletion takes the backing object with it
  $a allow -- "${K[@]}" delete e2eatkapp gone --wait=true
  gone() { ! admin get helmrelease atk-gone; }
  wait_for "the backing HelmRelease atk-gone goes with its instance" gone
  ;;
orphan-finalizer)
  can patch e2eatkapps.apps.cozystack.io
  $a deny $O "The finalizer orphan cannot be added to e2eatkapps/web" -- "${K[@]}" patch e2eatkapp web --type=merge -p '{"metadata":{"finalizers":["orphan"]}}'
  $a deny $O "Remove it from metadata.finalizers" -- "${K[@]}" patch e2eatkapp web --type=json -p '[{"op":"add","path":"/metadata/finalizers","value":["example.com/keep","orphan"]}]'
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: E2eAtkApp\nmetadata: {name: pre, finalizers: [orphan]}\nspec: {}\n' \
    | $a deny $O "The finalizer orphan cannot be added" -- "${K[@]}" create -f -
  $a allow -- "${K[@]}" label e2eatkapp web team=web
  ;;
ingress)
  can create ingresses.networking.k8s.io
  ing() { printf 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: %s}\nspec:\n%s\n' "$1" "$2"; }
  be='{service: {name: web, port: {number: 80}}}'
  rule() { printf '  rules: [{host: "%s", http: {paths: [{path: /, pathType: Prefix, backend: %s}]}}]' "$1" "$be"; }
  ing steal "$(rule dashboard.example.org)" | $a deny $I "outside: dashboard.example.org. Use hostnames under the apex" -- "${K[@]}" create -f -
  ing look "$(rule evil-atk.example.org)" | $a deny $I "must equal atk.example.org or be subdomains of it" -- "${K[@]}" create -f -
  ing tls "$(rule app.atk.example.org)
  tls: [{hosts: [app.atk.example.org, victim.example.net], secretName: x}]" | $a deny $I "outside: victim.example.net" -- "${K[@]}" create -f -
  ing any "  rules: [{http: {paths: [{path: /, pathType: Prefix, backend: $be}]}}]" | $a deny $I "must name the host of every rule" -- "${K[@]}" create -f -
  ing default "  defaultBackend: $be" | $a deny $I "no spec.defaultBackend" -- "${K[@]}" create -f -
  ing web "$(rule app.atk.example.org)
  tls: [{hosts: [app.atk.example.org], secretName: web-tls}]" | $a allow -- "${K[@]}" create -f -
  $a deny $I "outside: dashboard.example.org" -- "${K[@]}" patch ingress web --type=json -p '[{"op":"replace","path":"/spec/rules/0/host","value":"dashboard.example.org"}]'
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
