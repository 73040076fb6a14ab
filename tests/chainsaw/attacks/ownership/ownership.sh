#!/usr/bin/env bash
# A tenant holding edit in its namespace squats the name a backing object
# will use and puts on it a controller reference carrying the owner's uid,
# so that the controller would take the object for its own and keep the
# tenant's fields (targetNamespace kube-system, postRenderers, its own
# ServiceAccount: helm-controller runs as cluster-admin). One case per
# chainsaw step: ownership.sh CASE. Each case first checks that RBAC alone
# lets the tenant do it; a reference under the instance's group (however it
# is spelt) is refused by the backing-object policy, and one that copies the
# uid under another group, kind or name is admitted but never adopted: the
# owner reports the object, which keeps the tenant's fields and gets no
# application labels. The legitimate use next to it works.
#
#   t       the tenant namespace (tenant-own-<test id>), apex own.example.org
#   p       its Terraform platform namespace
#   tenant  kubectl arguments impersonating the tenant, mallory
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-own-${NAMESPACE#chainsaw-}
p=cozy-tf-$t
tenant=(--as=mallory --as-group=system:authenticated)
a=../../_scripts/admission.sh
B=cozyplane-backing-object-policy
K=(kubectl -n "$t" "${tenant[@]}")
admin() { kubectl -n "$t" "$@"; }

# can VERB RESOURCE: fails unless RBAC lets the tenant do it in $t.
can() {
  if [[ "$(kubectl auth can-i "$1" "$2" -n "$t" "${tenant[@]}" || true)" != yes ]]; then
    echo "RBAC does not let the tenant $1 $2: the attack would prove nothing"; exit 1
  fi
  echo "RBAC alone allows the tenant to $1 $2"
}
# wait_for WHAT CMD...: retries CMD for 60 s, fails saying WHAT did not happen.
wait_for() {
  local what=$1; shift
  for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
# ref APIVERSION KIND NAME UID: one controller owner reference, as JSON.
ref() { printf '{"apiVersion":"%s","kind":"%s","name":"%s","uid":"%s","controller":true,"blockOwnerDeletion":true}' "$@"; }
# setrefs OBJECT REF: a merge patch replacing the owner references of OBJECT (as the tenant).
setrefs() { printf '{"metadata":{"ownerReferences":[%s]}}' "$1"; }
# The fields a tenant wants kept on a HelmRelease that helm-controller
# (cluster-admin) installs: anywhere, as anyone, rewritten.
evil='  targetNamespace: kube-system
  serviceAccountName: default
  postRenderers: [{kustomize: {patches: [{patch: "[]"}]}}]'
hr() { # hr NAME METADATA-LINES SPEC-LINES: a HelmRelease manifest
  printf 'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: %s\n%s\nspec:\n  interval: 5m\n  chartRef: {kind: OCIRepository, name: own-chart}\n%s\n' "$1" "$2" "$3"
}
# inst KIND NAME: the tenant creates an instance. kube-controller-manager's
# quota controller refuses creates while it has not yet counted a kind the
# appdef controller just added to the namespace's quota ("status unknown for
# quota"): that one refusal is tried again, any other fails the case.
inst() {
  local out
  for _ in $(seq 1 60); do
    if out=$(printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: %s\nmetadata: {name: %s}\nspec: {}\n' "$1" "$2" | "${K[@]}" create -f - 2>&1); then
      echo "allow: create $1 $2"; return 0
    fi
    [[ "$out" == *"status unknown for quota"* ]] || { echo "expected to be allowed: create $1 $2"; echo "$out"; exit 1; }
    sleep 1
  done
  echo "create $1 $2: the quota was never counted: $out"; exit 1
}
reason() { admin get "$1" "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}'; }
message() { admin get "$1" "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}'; }
managers() { kubectl -n "$1" get "$2" "$3" -o jsonpath='{range .metadata.managedFields[*]}{.manager}{" "}{end}'; }
# untouched NS KIND NAME MANAGER: the object carries no application label and
# MANAGER (the controller's field manager) never wrote it.
untouched() {
  local labels
  labels=$(kubectl -n "$1" get "$2" "$3" -o jsonpath='{.metadata.labels}')
  [[ "$labels" != *apps.cozystack.io/application.* ]] || { echo "$2 $1/$3 got application labels: $labels"; exit 1; }
  [[ " $(managers "$1" "$2" "$3")" != *" $4 "* ]] || { echo "$4 wrote $2 $1/$3: $(managers "$1" "$2" "$3")"; exit 1; }
}

case "$1" in
helm)
  can create helmreleases.helm.toolkit.fluxcd.io; can patch helmreleases.helm.toolkit.fluxcd.io
  # The squat: a HelmRelease at the name the instance web will use, without
  # application labels or owner references (Flux's own business, so allowed).
  hr own-web "  labels: {team: mallory}" "$evil" | $a allow -- "${K[@]}" create -f -
  inst E2eOwnApp web
  notowned() { [[ "$(reason e2eownapp web)" == BackingObjectNotOwned ]]; }
  wait_for "the instance web reports BackingObjectNotOwned" notowned
  uid=$(admin get e2eownapp web -o jsonpath='{.metadata.uid}')

  # Under the instance's group, however spelt and whatever the kind or name:
  # the backing-object policy refuses it, on update and on create.
  for r in "apps.cozystack.io/v1alpha1 E2eOwnApp web" "apps.cozystack.io/v1 E2eOwnApp web" "Apps.Cozystack.io/v1alpha1 E2eOwnApp web" \
           "apps.cozystack.io E2eOwnApp web" "apps.cozystack.io/v1alpha1 E2eOther web" "apps.cozystack.io/v1alpha1 E2eOwnApp other"; do
    read -r av kind name <<<"$r"
    $a deny $B "$t/own-web is the backing object of the instance $kind/$name (apps.cozystack.io) and only its backend controller writes it: UPDATE by mallory is refused" -- \
      "${K[@]}" patch helmrelease own-web --type=merge -p "$(setrefs "$(ref "$av" "$kind" "$name" "$uid")")"
  done
  hr own-web2 "  ownerReferences: [$(ref APPS.COZYSTACK.IO/v1alpha1 E2eOwnApp web "$uid")]" "$evil" |
    $a deny $B "is the backing object of the instance E2eOwnApp/web (apps.cozystack.io) and only its backend controller writes it: CREATE by mallory is refused" -- "${K[@]}" create -f -

  # The instance's uid under another group: no mark, so admitted; the backend
  # does not take it for the instance's.
  $a allow -- "${K[@]}" patch helmrelease own-web --type=merge -p "$(setrefs "$(ref evil.example.com/v1 E2eOwnApp web "$uid")")"
  # A change of the instance makes the backend decide again at once.
  $a allow -- "${K[@]}" patch e2eownapp web --type=merge -p '{"spec":{"replicas":2}}'
  forged() { [[ "$(message e2eownapp web)" == *'its controller reference carries the uid of E2eOwnApp web but does not name the owner: API group "evil.example.com" (want "apps.cozystack.io")'* ]]; }
  wait_for "the instance names the forged reference" forged
  msg=$(message e2eownapp web)
  [[ "$(reason e2eownapp web)" == BackingObjectNotOwned && "$msg" == *"HelmRelease $t/own-web already exists and is controlled by E2eOwnApp web (apiVersion evil.example.com/v1)"* ]] ||
    { echo "instance web: $(reason e2eownapp web): $msg"; exit 1; }
  echo "instance web: BackingObjectNotOwned: $msg"
  # the same under another kind and name too
  $a allow -- "${K[@]}" patch helmrelease own-web --type=merge -p "$(setrefs "$(ref evil.example.com/v1 Evil x "$uid")")"
  $a allow -- "${K[@]}" patch e2eownapp web --type=merge -p '{"spec":{"replicas":3}}'
  forged2() { [[ "$(message e2eownapp web)" == *'API group "evil.example.com" (want "apps.cozystack.io"), kind "Evil" (want "E2eOwnApp"), name "x" (want "web")'* ]]; }
  wait_for "the instance names the second forged reference" forged2
  sleep 2
  # The squat keeps the tenant's fields and nothing of the backend's.
  [[ "$(admin get helmrelease own-web -o jsonpath='{.spec.targetNamespace}/{.spec.serviceAccountName}/{.spec.values}')" == kube-system/default/ ]] ||
    { echo "own-web changed: $(admin get helmrelease own-web -o jsonpath='{.spec}')"; exit 1; }
  untouched "$t" helmrelease own-web cozystack-helm
  # No HelmRelease the backend manages installs into kube-system.
  managed=$(kubectl get helmreleases.helm.toolkit.fluxcd.io -A -l apps.cozystack.io/application.kind \
    -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}={.spec.targetNamespace}{"\n"}{end}')
  if grep -q '=kube-system$' <<<"$managed"; then echo "a managed HelmRelease targets kube-system: $managed"; exit 1; fi

  # The legitimate uses: an instance at a free name gets its HelmRelease ...
  inst E2eOwnApp free
  freehr() { [[ "$(admin get helmrelease own-free -o jsonpath='{.metadata.ownerReferences[0].apiVersion} {.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.labels.apps\.cozystack\.io/application\.name}')" == "apps.cozystack.io/v1alpha1 E2eOwnApp free free" ]]; }
  wait_for "the instance free gets its HelmRelease own-free" freehr
  # ... and once the tenant deletes the squat (it is its own), web gets its own.
  $a allow -- "${K[@]}" delete helmrelease own-web --wait=true
  ownhr() { [[ "$(admin get helmrelease own-web -o jsonpath='{.metadata.ownerReferences[0].apiVersion} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].uid} {.spec.targetNamespace}{.spec.serviceAccountName}')" == "apps.cozystack.io/v1alpha1 web $uid " ]]; }
  wait_for "the instance web gets its own HelmRelease own-web, without the tenant's fields" ownhr
  ;;
terraform)
  can create terraforms.infra.contrib.fluxcd.io
  inst E2eOwnInfra net
  wait_for "the Terraform object of net is written in $p" kubectl -n "$p" get terraform owninfra-net
  uid=$(admin get e2eowninfra net -o jsonpath='{.metadata.uid}')
  tf() { # tf OWNER-REF: the tenant's Terraform object at the instance's name, in its own namespace
    printf 'apiVersion: infra.contrib.fluxcd.io/v1alpha2\nkind: Terraform\nmetadata:\n  name: owninfra-net\n  ownerReferences: [%s]\nspec:\n  interval: 1m\n  approvePlan: auto\n  sourceRef: {kind: OCIRepository, name: evil, namespace: cozy-system}\n' "$1"
  }
  # Under the instance's group: refused.
  for av in apps.cozystack.io/v1alpha1 Apps.Cozystack.io/v1alpha1 apps.cozystack.io; do
    tf "$(ref "$av" E2eOwnInfra net "$uid")" |
      $a deny $B "Terraform $t/owninfra-net is the backing object of the instance E2eOwnInfra/net (apps.cozystack.io) and only its backend controller writes it: CREATE by mallory is refused" -- "${K[@]}" create -f -
  done
  # The instance's uid under another group: admitted, and the backend does not
  # take it for a Terraform object the instance wrote before the platform
  # namespaces (which would stall the instance with LegacyBackingObject).
  tf "$(ref evil.example.com/v1 E2eOwnInfra net "$uid")" | $a allow -- "${K[@]}" create -f -
  $a allow -- "${K[@]}" patch e2eowninfra net --type=merge -p '{"spec":{"cidr":"10.9.0.0/16"}}'
  follows() { [[ "$(kubectl -n "$p" get terraform owninfra-net -o jsonpath='{.spec.vars[?(@.name=="cidr")].value}')" == *10.9.0.0/16* ]]; }
  wait_for "the instance's Terraform object in $p follows the instance" follows
  [[ "$(reason e2eowninfra net)" != LegacyBackingObject ]] || { echo "net: $(message e2eowninfra net)"; exit 1; }
  [[ "$(kubectl -n "$p" get terraform owninfra-net -o jsonpath='{.spec.sourceRef.name}')" == own-module ]]
  untouched "$t" terraform owninfra-net cozystack-terraform
  # Deleting the instance deletes its own Terraform object, not the tenant's.
  $a allow -- "${K[@]}" delete e2eowninfra net --wait=true --timeout=60s
  gone() { ! kubectl -n "$p" get terraform owninfra-net; }
  wait_for "the instance's Terraform object in $p is deleted with it" gone
  sleep 1
  admin get terraform owninfra-net -o jsonpath='{.spec.sourceRef.name}' | grep -qx evil ||
    { echo "the tenant's own Terraform object owninfra-net was deleted with the instance"; exit 1; }
  ;;
gateway)
  can create issuers.cert-manager.io; can create tenantgateways.gateway.cozystack.io
  # A TenantGateway that needs no Issuer yet (existingSecret) ...
  printf 'apiVersion: gateway.cozystack.io/v1alpha1\nkind: TenantGateway\nmetadata: {name: pub}\nspec:\n  apex: own.example.org\n  certMode: existingSecret\n  wildcardSecretRef: {name: wildcard}\n' |
    $a allow -- "${K[@]}" create -f -
  uid=$(admin get tenantgateway pub -o jsonpath='{.metadata.uid}')
  # ... and an Issuer at the name it will use, with its uid under another group.
  printf 'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: pub-gateway\n  ownerReferences: [%s]\nspec:\n  acme:\n    server: https://acme.evil.example.com/directory\n    email: mallory@evil.example.com\n    privateKeySecretRef: {name: mallory-account}\n    solvers: [{http01: {ingress: {ingressClassName: mallory}}}]\n' \
    "$(ref evil.example.com/v1 TenantGateway pub "$uid")" | $a allow -- "${K[@]}" create -f -
  # The TenantGateway now wants its Issuer (HTTP-01): gateway-certs refuses the squat.
  $a allow -- "${K[@]}" patch tenantgateway pub --type=merge -p '{"spec":{"certMode":"http01","wildcardSecretRef":null}}'
  certs() { admin get tenantgateway pub -o jsonpath='{.status.conditions[?(@.type=="CertificatesReady")].message}'; }
  refused() { [[ "$(certs)" == *"Issuer $t/pub-gateway already exists and is controlled by TenantGateway pub (apiVersion evil.example.com/v1)"*'does not name the owner: API group "evil.example.com" (want "gateway.cozystack.io")'* ]]; }
  wait_for "CertificatesReady names the squatting Issuer" refused
  echo "CertificatesReady: $(certs)"
  sleep 2
  [[ "$(admin get issuer pub-gateway -o jsonpath='{.spec.acme.server}')" == https://acme.evil.example.com/directory ]]
  untouched "$t" issuer pub-gateway cozystack-gateway-certs
  # Once the tenant deletes it, the TenantGateway gets its own Issuer.
  $a allow -- "${K[@]}" delete issuer pub-gateway --wait=true
  ownissuer() { [[ "$(admin get issuer pub-gateway -o jsonpath='{.metadata.ownerReferences[0].apiVersion} {.metadata.ownerReferences[0].uid} {.spec.acme.server}')" == "gateway.cozystack.io/v1alpha1 $uid https://acme-v02.api.letsencrypt.org/directory" ]]; }
  wait_for "the TenantGateway gets its own Issuer pub-gateway" ownissuer
  ;;
controller-ref)
  # Flux and the garbage collector may update a backing object without
  # touching its spec or labels (finalizers, owner references), but not put
  # a controller reference on it: only its backend controller does.
  flux=(--as=system:serviceaccount:"${FLUX_NAMESPACE:-cozy-fluxcd}":helm-controller --as-group=system:serviceaccounts --as-group=system:authenticated)
  gc=(--as=system:serviceaccount:kube-system:generic-garbage-collector --as-group=system:serviceaccounts --as-group=system:authenticated)
  uid=$(admin get e2eownapp web -o jsonpath='{.metadata.uid}')
  $a deny $B "HelmRelease $t/own-free is the backing object of the instance E2eOwnApp/free (apps.cozystack.io) and only its backend controller puts a controller reference on it: UPDATE by system:serviceaccount:${FLUX_NAMESPACE:-cozy-fluxcd}:helm-controller adding the controller reference apps.cozystack.io/v1alpha1 E2eOwnApp web (uid $uid) is refused" -- \
    kubectl -n "$t" "${flux[@]}" patch helmrelease own-free --type=merge -p "$(setrefs "$(ref apps.cozystack.io/v1alpha1 E2eOwnApp web "$uid")")"
  $a deny $B "only its backend controller puts a controller reference on it" -- \
    kubectl -n "$t" "${gc[@]}" patch helmrelease own-free --type=json -p '[{"op":"replace","path":"/metadata/ownerReferences/0/name","value":"web"}]'
  # what they do is still allowed: a finalizer, and blockOwnerDeletion turned off
  $a allow -- kubectl -n "$t" "${flux[@]}" patch helmrelease own-free --type=merge -p '{"metadata":{"finalizers":["finalizers.fluxcd.io"]}}'
  $a allow -- kubectl -n "$t" "${gc[@]}" patch helmrelease own-free --type=json -p '[{"op":"replace","path":"/metadata/ownerReferences/0/blockOwnerDeletion","value":false}]'
  $a allow -- kubectl -n "$t" "${flux[@]}" patch helmrelease own-free --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
