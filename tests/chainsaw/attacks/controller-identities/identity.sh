#!/usr/bin/env bash
# The limits of each controller identity that RBAC cannot express, checked as
# that identity: first what RBAC grants (a SubjectAccessReview through
# kubectl auth can-i), then server-side dry-runs impersonating the identity,
# allowed or refused by the named admission policy. identity.sh CASE.
set -euo pipefail
cd "$(dirname "$0")"
a=../../_scripts/admission.sh
ns=$NAMESPACE
sa() { echo "--as=system:serviceaccount:$1"; }
# rbac EXPECT IDENTITY VERB RESOURCE [NAMESPACE [SUBRESOURCE]]
rbac() {
  local got
  got=$(kubectl auth can-i "$3" "$4" ${5:+-n "$5"} ${6:+--subresource="$6"} "$(sa "$2")" || true)
  [[ "${got}" == "$1" ]] || { echo "RBAC: $2 may $3 $4 ${6:-}: ${got}, want $1"; exit 1; }
  echo "RBAC: $2 may $3 $4 ${6:-}: $1"
}
crd() { # crd GROUP [EXTRA-SPEC-LINES]
  printf 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: probes.%s}\nspec:\n  group: %s\n  names: {kind: Probe, plural: probes}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n%s\n' "$1" "$1" "${2:-}"
}
labelled_hr() { # labelled_hr NAME: a HelmRelease carrying the application labels of E2eIdApp/NAME
  printf 'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: id-%s\n  labels: {apps.cozystack.io/application.kind: E2eIdApp, apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.name: %s}\nspec:\n  interval: 5m\n  chartRef: {kind: OCIRepository, name: chart}\n' "$1" "$1"
}
B=cozyplane-backing-object-policy
case "$1" in
appdef)
  A=cozy-system:cozystack-appdef P=cozyplane-appdef-identity-policy
  rbac yes "$A" create customresourcedefinitions.apiextensions.k8s.io
  rbac yes "$A" delete customresourcedefinitions.apiextensions.k8s.io
  crd apps.cozystack.io | $a allow -- kubectl "$(sa $A)" create --dry-run=server -f -
  crd evil.example.com | $a deny $P "writes only CRDs of the group apps.cozystack.io; CREATE of CRD probes.evil.example.com is refused" -- kubectl "$(sa $A)" create --dry-run=server -f -
  crd apps.cozystack.io "  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {url: 'https://convert.example.com/'}}}" \
    | $a deny $P "without a conversion webhook" -- kubectl "$(sa $A)" create --dry-run=server -f -
  $a deny $P "DELETE of CRD helmreleases.helm.toolkit.fluxcd.io is refused" -- kubectl "$(sa $A)" delete crd helmreleases.helm.toolkit.fluxcd.io --dry-run=server
  $a deny $P "UPDATE of CRD terraforms.infra.contrib.fluxcd.io is refused" -- \
    kubectl "$(sa $A)" patch crd terraforms.infra.contrib.fluxcd.io --type=merge -p '{"metadata":{"labels":{"cozystack.io/application-definition":"x"}}}' --dry-run=server
  # the same requests from an administrator are not this policy's business
  crd evil.example.com | $a allow -- kubectl create --dry-run=server -f -
  ;;
ns-labels)
  N=cozy-system:cozystack-ns-labels P=cozyplane-namespace-host-label-policy
  rbac yes "$N" patch namespaces
  $a deny $P "immutable once set" -- kubectl "$(sa $N)" label namespace "$ns" namespace.cozystack.io/host=evil.example.org --dry-run=server
  $a allow -- kubectl "$(sa $N)" label namespace "$ns" namespace.cozystack.io/gateway=tenant-root --dry-run=server
  ;;
helm)
  H=cozy-system:cozystack-helm
  rbac yes "$H" create helmreleases.helm.toolkit.fluxcd.io "$ns"
  # a HelmRelease shaped as the backend writes it (cozyplane-helm-identity-policy; tests/chainsaw/attacks/helm-identity)
  { labelled_hr made | sed 's|^  labels:|  ownerReferences: [{apiVersion: apps.cozystack.io/v1alpha1, kind: E2eIdApp, name: made, uid: 00000000-0000-0000-0000-000000000001, controller: true}]\n  labels:|;s|name: chart}|name: chart, namespace: cozy-system}|'
    printf '  valuesFrom: [{kind: Secret, name: cozystack-values}]\n'; } | $a allow -- kubectl -n "$ns" "$(sa $H)" create --dry-run=server -f -
  # id-web carries the labels but no controller owner reference: not an instance's, so not the backend's to change
  $a deny cozyplane-helm-identity-policy "controller owner reference" -- kubectl -n "$ns" "$(sa $H)" patch helmrelease id-web --type=merge -p '{"spec":{"interval":"10m"}}' --dry-run=server
  $a allow -- kubectl -n "$ns" "$(sa $H)" delete helmrelease id-web --dry-run=server
  # what its role does not grant at all
  rbac no "$H" patch helmreleases.helm.toolkit.fluxcd.io "$ns" status
  rbac no "$H" update secrets "$ns"
  rbac no "$H" create terraforms.infra.contrib.fluxcd.io "$ns"
  ;;
terraform)
  T=cozy-system:cozystack-terraform
  rbac yes "$T" create terraforms.infra.contrib.fluxcd.io "$ns"
  tf='apiVersion: infra.contrib.fluxcd.io/v1alpha2\nkind: Terraform\nmetadata:\n  name: idinfra-made\n  labels: {apps.cozystack.io/application.kind: E2eIdInfra, apps.cozystack.io/application.name: made}\nspec:\n  interval: 1m\n  sourceRef: {kind: OCIRepository, name: m, namespace: cozy-system}\n'
  # Terraform objects live in platform namespaces cozy-tf-* (docs/terraform-backend.md);
  # cozyplane-terraform-identity-policy refuses them anywhere else.
  p="cozy-tf-$ns"
  kubectl create namespace "$p" >/dev/null 2>&1 || true
  kubectl label namespace "$p" apps.cozystack.io/platform-namespace=Terraform apps.cozystack.io/tenant-namespace="$ns" --overwrite >/dev/null
  printf "$tf" | $a allow -- kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  printf "$tf" | $a deny cozyplane-terraform-identity-policy "writes Terraform objects only in platform namespaces cozy-tf-*" -- kubectl -n "$ns" "$(sa $T)" create --dry-run=server -f -
  # The runner's ServiceAccount and its RoleBinding to tf-runner-role, in a
  # labelled platform namespace only (controllers/terraform/internal/tfbackend/runner.go).
  rbac yes "$T" create serviceaccounts "$p"
  rbac yes "$T" create rolebindings.rbac.authorization.k8s.io "$p"
  rbac yes "$T" bind clusterroles.rbac.authorization.k8s.io/tf-runner-role
  rbac no "$T" bind clusterroles.rbac.authorization.k8s.io/cluster-admin
  rbac no "$T" update rolebindings.rbac.authorization.k8s.io "$p"
  rbac no "$T" delete serviceaccounts "$p"
  rb() { # rb ROLE SUBJECT-KIND SUBJECT-NAMESPACE: a RoleBinding manifest
    printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: id-runner}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %s}\nsubjects:\n- {kind: %s, name: tf-runner, namespace: %s, apiGroup: "%s"}\n' \
      "$1" "$2" "$3" "$([[ $2 == User ]] && echo rbac.authorization.k8s.io)"
  }
  $a allow -- kubectl -n "$p" "$(sa $T)" create serviceaccount id-runner --dry-run=server
  rb tf-runner-role ServiceAccount "$p" | $a allow -- kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  $a deny cozyplane-terraform-identity-policy "writes ServiceAccounts and RoleBindings only in platform namespaces cozy-tf-*" -- \
    kubectl -n "$ns" "$(sa $T)" create serviceaccount id-runner --dry-run=server
  rb tf-runner-role ServiceAccount "$ns" | $a deny cozyplane-terraform-identity-policy "writes ServiceAccounts and RoleBindings only in platform namespaces cozy-tf-*" -- \
    kubectl -n "$ns" "$(sa $T)" create --dry-run=server -f -
  # Its own ClusterRole: RBAC lets it bind that (it holds every right in it); the policy does not.
  rb cozystack-terraform ServiceAccount "$p" | $a deny cozyplane-terraform-identity-policy "binds only the ClusterRole tf-runner-role" -- \
    kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  # tf-runner-role for someone outside the namespace: a tenant's user or another namespace's ServiceAccount.
  rb tf-runner-role User "" | $a deny cozyplane-terraform-identity-policy "binds only the ClusterRole tf-runner-role, to ServiceAccounts of the RoleBinding's own namespace" -- \
    kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  rb tf-runner-role ServiceAccount "$ns" | $a deny cozyplane-terraform-identity-policy "to ServiceAccounts of the RoleBinding's own namespace" -- \
    kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  # A cozy-tf-* namespace without the platform label is not the controller's.
  kubectl label namespace "$p" apps.cozystack.io/platform-namespace- >/dev/null
  $a deny cozyplane-terraform-identity-policy "writes ServiceAccounts and RoleBindings only in platform namespaces cozy-tf-* labelled" -- \
    kubectl -n "$p" "$(sa $T)" create serviceaccount id-runner --dry-run=server
  # Secrets: its ClusterRole grants nothing on them; it binds itself to the
  # outputs reader in platform namespaces and to the outputs writer in a
  # tenant namespace (controllers/terraform/internal/tfbackend/access.go),
  # and to nothing else, for no one else.
  rbac no "$T" get secrets "$ns"
  rbac no "$T" get secrets kube-system
  rbac yes "$T" bind clusterroles.rbac.authorization.k8s.io/cozystack-terraform-outputs-reader
  rbac yes "$T" bind clusterroles.rbac.authorization.k8s.io/cozystack-terraform-outputs-writer
  ob() { # ob ROLE SERVICEACCOUNT: the RoleBinding cozystack-terraform-outputs of cozy-system:SERVICEACCOUNT to ROLE
    printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: cozystack-terraform-outputs}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %s}\nsubjects:\n- {kind: ServiceAccount, name: %s, namespace: cozy-system}\n' "$1" "$2"
  }
  kubectl label namespace "$p" apps.cozystack.io/platform-namespace=Terraform --overwrite >/dev/null
  t="tenant-id-${ns#chainsaw-}"
  kubectl create namespace "$t" >/dev/null 2>&1 || true
  ob cozystack-terraform-outputs-reader cozystack-terraform | $a allow -- kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  ob cozystack-terraform-outputs-writer cozystack-terraform | $a deny cozyplane-terraform-identity-policy "and itself alone to the ClusterRole cozystack-terraform-outputs-reader" -- \
    kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  ob cozystack-terraform-outputs-reader cozystack-helm | $a deny cozyplane-terraform-identity-policy "and itself alone to the ClusterRole cozystack-terraform-outputs-reader" -- \
    kubectl -n "$p" "$(sa $T)" create --dry-run=server -f -
  ob cozystack-terraform-outputs-writer cozystack-terraform | $a allow -- kubectl -n "$t" "$(sa $T)" create --dry-run=server -f -
  ob cozystack-terraform-outputs-reader cozystack-terraform | $a deny cozyplane-terraform-identity-policy "in tenant-* namespaces only the RoleBinding cozystack-terraform-outputs of itself alone to the ClusterRole cozystack-terraform-outputs-writer" -- \
    kubectl -n "$t" "$(sa $T)" create --dry-run=server -f -
  ob cozystack-terraform-outputs-writer cozystack-helm | $a deny cozyplane-terraform-identity-policy "in tenant-* namespaces only the RoleBinding cozystack-terraform-outputs of itself alone" -- \
    kubectl -n "$t" "$(sa $T)" create --dry-run=server -f -
  kubectl delete namespace "$t" --wait=false >/dev/null
  ob cozystack-terraform-outputs-writer cozystack-terraform | $a deny cozyplane-terraform-identity-policy "in tenant-* namespaces only the RoleBinding cozystack-terraform-outputs" -- \
    kubectl -n kube-system "$(sa $T)" create --dry-run=server -f -
  kubectl delete namespace "$p" --wait=false >/dev/null
  rbac no "$T" create helmreleases.helm.toolkit.fluxcd.io "$ns"
  # Bound to the writer in a namespace, RBAC lets it write Secrets there;
  # the policy refuses it all but the outputs copies in tenant-* namespaces
  # (tests/chainsaw/tenant-view/terraform-outputs).
  ob cozystack-terraform-outputs-writer cozystack-terraform | kubectl -n "$ns" apply -f - >/dev/null
  for _ in $(seq 1 60); do [[ $(kubectl auth can-i update secrets -n "$ns" --as="system:serviceaccount:$T") == yes ]] && break; sleep 0.5; done
  rbac yes "$T" update secrets "$ns"
  printf 'apiVersion: v1\nkind: Secret\nmetadata: {name: id-probe}\nstringData: {a: b}\n' |
    $a deny cozyplane-terraform-identity-policy "writes only the outputs copies of Terraform instances" -- kubectl -n "$ns" "$(sa $T)" create --dry-run=server -f -
  kubectl -n "$ns" delete rolebinding cozystack-terraform-outputs >/dev/null
  ;;
flux)
  # Flux's helm-controller (Cozystack's all-in-one Flux runs as cozy-fluxcd:flux;
  # FLUX_NAMESPACE and FLUX_ALL_IN_ONE, from hack/e2e.sh, name a stock Flux's,
  # where the policies trust helm-controller itself), granted here what Flux's
  # own ClusterRole gives it.
  fluxns=${FLUX_NAMESPACE:-cozy-fluxcd}
  F=$fluxns:${FLUX_ALL_IN_ONE:-flux}
  $a allow -- kubectl -n "$ns" "$(sa $F)" patch helmrelease id-web --subresource=status --type=merge -p '{"status":{"observedGeneration":1}}' --dry-run=server
  $a allow -- kubectl -n "$ns" "$(sa $F)" patch helmrelease id-web --type=merge -p '{"metadata":{"finalizers":["finalizers.fluxcd.io/helm"]}}' --dry-run=server
  $a deny $B "UPDATE by system:serviceaccount:$F is refused" -- \
    kubectl -n "$ns" "$(sa $F)" patch helmrelease id-web --type=merge -p '{"spec":{"targetNamespace":"kube-system"}}' --dry-run=server
  $a deny $B "DELETE by system:serviceaccount:$F is refused" -- kubectl -n "$ns" "$(sa $F)" delete helmrelease id-web --dry-run=server
  labelled_hr forged | $a deny $B "CREATE by system:serviceaccount:$F is refused" -- kubectl -n "$ns" "$(sa $F)" create --dry-run=server -f -
  # it writes cozystack-values (the tenant chart); another Flux controller may not
  $a allow -- kubectl -n "$ns" "$(sa $F)" patch secret cozystack-values --type=merge -p '{"stringData":{"values.yaml":"_namespace: {}"}}' --dry-run=server
  $a deny cozyplane-values-secret-policy "UPDATE by system:serviceaccount:$fluxns:source-controller is refused" -- \
    kubectl -n "$ns" "$(sa "$fluxns":source-controller)" patch secret cozystack-values --type=merge -p '{"stringData":{"values.yaml":"_namespace: {}"}}' --dry-run=server
  ;;
kube-controllers)
  # The garbage collector and the namespace controller remove backing objects
  # and the values Secret with their owner or namespace; they change nothing else.
  for c in kube-system:generic-garbage-collector kube-system:namespace-controller; do
    $a allow -- kubectl -n "$ns" "$(sa $c)" delete helmrelease id-web --dry-run=server
    $a allow -- kubectl -n "$ns" "$(sa $c)" delete secret cozystack-values --dry-run=server
  done
  $a allow -- kubectl -n "$ns" "$(sa kube-system:generic-garbage-collector)" patch helmrelease id-web --type=merge -p '{"metadata":{"finalizers":["foregroundDeletion"]}}' --dry-run=server
  $a deny $B "UPDATE by system:serviceaccount:kube-system:generic-garbage-collector is refused" -- \
    kubectl -n "$ns" "$(sa kube-system:generic-garbage-collector)" patch helmrelease id-web --type=merge -p '{"spec":{"interval":"1m"}}' --dry-run=server
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
