#!/usr/bin/env bash
# The helm backend's identity (cozy-system:cozystack-helm) against
# cozyplane-helm-identity-policy: what its role lets it do (kubectl auth
# can-i), then server-side dry-runs as that identity: the HelmRelease and the
# namespace shaped as the backend writes them pass, each field or namespace
# it never writes is refused with the policy's message. identity.sh CASE.
set -euo pipefail
cd "$(dirname "$0")"
a=../../_scripts/admission.sh
P=cozyplane-helm-identity-policy
ns=$NAMESPACE
H=(--as=system:serviceaccount:cozy-system:cozystack-helm)
rbac() { # rbac EXPECT VERB RESOURCE [NAMESPACE [SUBRESOURCE]]
  local got
  got=$(kubectl auth can-i "$2" "$3" ${4:+-n "$4"} ${5:+--subresource="$5"} "${H[@]}" 2>/dev/null || true)
  [[ "${got}" == "$1" ]] || { echo "RBAC: the helm backend may $2 $3: ${got}, want $1"; exit 1; }
  echo "RBAC: the helm backend may $2 $3 ${4:-}: $1"
}
# hr [SED]: the HelmRelease the backend writes for instance E2eHidApp/web in
# $ns (controllers/helm/internal/helmbackend), edited by the sed script SED.
hr() {
  sed "${1:-}" <<YAML
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: hid-web
  namespace: $ns
  labels:
    apps.cozystack.io/application.kind: E2eHidApp
    apps.cozystack.io/application.group: apps.cozystack.io
    apps.cozystack.io/application.name: web
  ownerReferences:
  - {apiVersion: apps.cozystack.io/v1alpha1, kind: E2eHidApp, name: web, uid: 00000000-0000-0000-0000-0000000000aa, controller: true, blockOwnerDeletion: true}
spec:
  chartRef: {kind: ExternalArtifact, name: hid-chart, namespace: cozy-system}
  interval: 5m0s
  maxHistory: 5
  install: {timeout: 10m0s, strategy: {name: RetryOnFailure, retryInterval: 30s}}
  upgrade: {timeout: 10m0s, strategy: {name: RetryOnFailure, retryInterval: 30s}}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values: {replicas: 1}
  storageNamespace: cozy-helm-$ns
YAML
}
create=(kubectl "${H[@]}" create --dry-run=server -f -)
# namespace NAME TENANT-LABEL [PLATFORM-LABEL]
namespace() {
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {apps.cozystack.io/platform-namespace: %s, apps.cozystack.io/tenant-namespace: %s}\n' "$1" "${3:-Helm}" "$2"
}
case "$1" in
helmreleases)
  rbac yes create helmreleases.helm.toolkit.fluxcd.io "$ns"
  rbac yes patch helmreleases.helm.toolkit.fluxcd.io "$ns"
  hr | $a allow -- "${create[@]}"
  # unset: an earlier version's HelmRelease keeps its records where they are
  hr '/storageNamespace/d' | $a allow -- "${create[@]}"
  # more platform values sources, as a definition's valuesFrom may name them
  hr 's|valuesFrom: \[{kind: Secret, name: cozystack-values}\]|valuesFrom: [{kind: Secret, name: cozystack-values}, {kind: ConfigMap, name: cozystack-values-extra}]|' | $a allow -- "${create[@]}"
  for f in "targetNamespace: kube-system" "serviceAccountName: default" "kubeConfig: {secretRef: {name: other-cluster}}" \
           "postRenderers: [{kustomize: {patches: [{patch: x}]}}]" "commonMetadata: {labels: {a: b}}" "releaseName: other" \
           "driftDetection: {mode: disabled}" \
           "dependsOn: [{name: other}]" "uninstall: {keepHistory: true}"; do
    key=${f%%:*}
    hr "s|^spec:|spec:\n  $f|" | $a deny $P "sets $key, which the helm controller never writes" -- "${create[@]}"
  done
  # an inline chart template instead of the definition's chartRef
  hr 's|^  chartRef: .*|  chart: {spec: {chart: x, sourceRef: {kind: HelmRepository, name: r, namespace: cozy-system}}}|' | $a deny $P "sets chart, which the helm controller never writes" -- "${create[@]}"
  hr 's|install: {timeout|install: {crds: CreateReplace, timeout|' | $a deny $P "sets install.crds" -- "${create[@]}"
  hr 's|install: {timeout|install: {createNamespace: true, timeout|' | $a deny $P "sets install.createNamespace" -- "${create[@]}"
  ;;
shape)
  hr '/ownerReferences:/,+1d' | $a deny $P "a controller owner reference to its instance of apps.cozystack.io" -- "${create[@]}"
  hr 's/controller: true/controller: false/' | $a deny $P "a controller owner reference" -- "${create[@]}"
  hr '/application.group/d' | $a deny $P "must carry the labels" -- "${create[@]}"
  hr 's|storageNamespace: .*|storageNamespace: cozy-helm-tenant-other|' | $a deny $P "keeps its Helm release records in cozy-helm-tenant-other, which is not the platform namespace of $ns" -- "${create[@]}"
  hr "s|storageNamespace: .*|storageNamespace: $ns|" | $a deny $P "which is not the platform namespace" -- "${create[@]}"
  hr 's|storageNamespace: .*|storageNamespace: kube-system|' | $a deny $P "which is not the platform namespace" -- "${create[@]}"
  hr 's|namespace: cozy-system}|namespace: tenant-other}|' | $a deny $P "in namespace tenant-other" -- "${create[@]}"
  hr 's|, namespace: cozy-system}|}|' | $a deny $P "without a namespace" -- "${create[@]}"
  hr 's|valuesFrom: \[{kind: Secret, name: cozystack-values}\]|valuesFrom: [{kind: Secret, name: cozystack-values}, {kind: Secret, name: my-values}]|' | $a deny $P "takes values from Secret cozystack-values, Secret my-values" -- "${create[@]}"
  hr 's|valuesFrom: \[{kind: Secret, name: cozystack-values}\]|valuesFrom: [{kind: ConfigMap, name: cozystack-values-extra}]|' | $a deny $P "the Secret cozystack-values, first" -- "${create[@]}"
  hr '/valuesFrom/d' | $a deny $P "takes values from nothing" -- "${create[@]}"
  # an administrator writing the same is not this policy's business
  hr 's|^spec:|spec:\n  targetNamespace: kube-system|' | $a allow -- kubectl create --dry-run=server -f -
  # nor is a field an update leaves as it was: the backend may keep managing
  # a HelmRelease an administrator changed
  hr '/ownerReferences:/,+1d' | sed 's|^spec:|spec:\n  timeout: 1m|' | kubectl create -f - >/dev/null
  hr 's|^spec:|spec:\n  timeout: 1m|' | $a allow -- kubectl "${H[@]}" apply --server-side --field-manager=cozystack-helm --force-conflicts --dry-run=server -f -
  hr 's|^spec:|spec:\n  timeout: 2m|' | $a deny $P "sets timeout" -- kubectl "${H[@]}" apply --server-side --field-manager=cozystack-helm --force-conflicts --dry-run=server -f -
  kubectl -n "$ns" delete helmrelease hid-web --wait=false >/dev/null
  ;;
status)
  rbac no patch helmreleases.helm.toolkit.fluxcd.io "$ns" status
  rbac no update helmreleases.helm.toolkit.fluxcd.io "$ns" status
  ;;
namespaces)
  rbac yes create namespaces
  rbac yes get namespaces
  rbac no update namespaces
  rbac no delete namespaces
  rbac no list namespaces
  namespace "cozy-helm-$ns" "$ns" | $a allow -- "${create[@]}"
  long=tenant-$(printf 'l%.0s' $(seq 1 56))
  namespace "cozy-helm-${long:0:44}-$(printf %s "$long" | sha256sum | cut -c1-8)" "$long" | $a allow -- "${create[@]}"
  namespace "cozy-helm-$ns" "tenant-other" | $a deny $P "CREATE of namespace cozy-helm-$ns is refused" -- "${create[@]}"
  namespace "cozy-helm-$ns" "$ns" Terraform | $a deny $P "labelled apps.cozystack.io/platform-namespace=Helm" -- "${create[@]}"
  namespace "kube-evil" "$ns" | $a deny $P "CREATE of namespace kube-evil is refused" -- "${create[@]}"
  printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: cozy-helm-%s}\n' "$ns" | $a deny $P "only creates platform namespaces" -- "${create[@]}"
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
