#!/usr/bin/env bash
# Helm's release records of a tenant's instances, out of the tenant's reach:
# storage.sh CASE, one case per chainsaw step. Every refusal first checks what
# RBAC alone allows (kubectl auth can-i), then the act; helm-controller is
# played as its identity, cozy-fluxcd:helm-controller, writing what it writes
# (release records sh.helm.release.v1.<release>.v<N>, labelled owner=helm,
# name=<release>, status, version, in the HelmRelease's storage namespace;
# status.storageNamespace and status.history: fluxcd/helm-controller
# internal/controller/helmrelease_controller.go and internal/action/verify.go).
#
#   t   the tenant namespace, tenant-rs-<test id>; p its platform namespace
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-rs-${NAMESPACE#chainsaw-}
p=cozy-helm-$t
tenant=(--as=mallory --as-group=system:authenticated)
flux=(--as=system:serviceaccount:"${FLUX_NAMESPACE:-cozy-fluxcd}":helm-controller) # FLUX_NAMESPACE: hack/e2e.sh
a=../../_scripts/admission.sh
B=cozyplane-backing-object-policy
can() { # can yes|no VERB RESOURCE NAMESPACE: what RBAC alone lets the tenant do
  local got
  got=$(kubectl auth can-i "$2" "$3" -n "$4" "${tenant[@]}" || true)
  [[ "${got}" == "$1" ]] || { echo "RBAC: the tenant may $2 $3 in $4: ${got}, want $1"; exit 1; }
  echo "RBAC: the tenant may $2 $3 in $4: $1"
}
wait_for() { # wait_for WHAT CMD...: retries CMD for 30 s
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "not so after 30s: ${what}"; "$@" || true; exit 1
}
jp() { kubectl -n "$t" get "$1" -o jsonpath="$2"; }
# record NS RELEASE VERSION STATUS: the release record helm-controller's Helm
# storage writes (the secrets driver: type helm.sh/release.v1, data.release).
record() {
  printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: sh.helm.release.v1.%s.v%s\n  namespace: %s\n  labels: {owner: helm, name: %s, status: %s, version: "%s"}\ntype: helm.sh/release.v1\ndata: {release: %s}\n' \
    "$2" "$3" "$1" "$2" "$4" "$3" "$(printf 'release %s v%s %s' "$2" "$3" "$4" | base64 -w0)"
}
# installed NAME STORAGE: helm-controller (../../_scripts/neighbours) reports
# release NAME installed with its records in STORAGE (the HelmRelease's
# spec.storageNamespace, or its own namespace).
installed() {
  local spec
  spec=$(jp "helmrelease/$1" '{.spec.storageNamespace}')
  [[ "${spec:-$t}" == "$2" ]] || { echo "HelmRelease $1 keeps its records in ${spec:-$t}, not $2"; exit 1; }
  ../../_scripts/neighbours/helm-controller.sh install-succeeded "$t" "$1" 1.0.0 >/dev/null
}
# target_changed NAME: helm-controller's ReleaseTargetChanged for the storage
# namespace: status.storageNamespace set, a release in the history, and the
# spec's storage namespace (the HelmRelease's own when unset) another.
target_changed() {
  local spec status hist
  spec=$(jp "helmrelease/$1" '{.spec.storageNamespace}'); spec=${spec:-$t}
  status=$(jp "helmrelease/$1" '{.status.storageNamespace}')
  hist=$(jp "helmrelease/$1" '{.status.history[0].name}')
  [[ -n "${status}" && -n "${hist}" && "${spec}" != "${status}" ]]
}
no_target_change() { # helm-controller would not uninstall NAME's release
  if target_changed "$1"; then
    echo "helm-controller would see a storage target change on $1 and uninstall it: spec $(jp "helmrelease/$1" '{.spec.storageNamespace}'), status $(jp "helmrelease/$1" '{.status.storageNamespace}')"
    exit 1
  fi
}

case "$1" in
new)
  # A new instance's HelmRelease names the platform namespace, which the helm
  # controller created with its labels; the instance reports no legacy storage.
  wait_for "HelmRelease rs-web names $p" bash -c "[ \"\$(kubectl -n $t get helmrelease rs-web -o jsonpath='{.spec.storageNamespace}')\" = $p ]"
  [[ "$(kubectl get namespace "$p" -o jsonpath='{.metadata.labels.apps\.cozystack\.io/platform-namespace}/{.metadata.labels.apps\.cozystack\.io/tenant-namespace}')" == "Helm/$t" ]]
  echo "namespace $p labelled platform-namespace=Helm, tenant-namespace=$t"
  [[ -z "$(jp e2ersapp/web '{.status.conditions[?(@.type=="LegacyReleaseStorage")].status}')" ]]
  echo "instance web reports no LegacyReleaseStorage"
  ;;
records)
  # RBAC lets the tenant write release records in its own namespace, but its
  # instances' records are not there: helm-controller (played) writes them in
  # the platform namespace the HelmRelease names, where the tenant can do
  # nothing at all.
  can yes create secrets "$t"
  record "$p" rs-web 1 deployed | kubectl "${flux[@]}" create -f - >/dev/null
  installed rs-web "$p"
  record "$t" rs-web 2 deployed | kubectl "${tenant[@]}" create -f - >/dev/null
  echo "the tenant wrote a forged record sh.helm.release.v1.rs-web.v2 in $t (RBAC allows it); helm-controller does not read $t for rs-web:"
  [[ "$(jp helmrelease/rs-web '{.spec.storageNamespace}')" == "$p" ]]
  [[ "$(kubectl -n "$p" get secret -l owner=helm,name=rs-web -o jsonpath='{.items[*].metadata.name}')" == "sh.helm.release.v1.rs-web.v1" ]]
  echo "rs-web's records are in $p only: sh.helm.release.v1.rs-web.v1"
  no_target_change rs-web
  can no create secrets "$p"
  can no update secrets "$p"
  can no delete secrets "$p"
  can no get secrets "$p"
  out=$(record "$p" rs-web 2 deployed | kubectl "${tenant[@]}" create -f - 2>&1) && { echo "the tenant wrote in $p: ${out}"; exit 1; }
  [[ "${out}" == *forbidden* ]] || { echo "unexpected: ${out}"; exit 1; }
  echo "the tenant cannot write a record in $p: ${out}"
  # Nor can it point the HelmRelease back at its own namespace.
  can yes patch helmreleases.helm.toolkit.fluxcd.io "$t"
  $a deny "$B" "Change the instance E2eRsApp/web instead" -- \
    kubectl -n "$t" "${tenant[@]}" patch helmrelease rs-web --type=merge -p "{\"spec\":{\"storageNamespace\":\"$t\"}}"
  ;;
legacy)
  # A HelmRelease an earlier version (or upstream's API) wrote, installed by
  # helm-controller with its records in the tenant namespace, and its instance
  # adopting it (as cozyplane migrate does): the helm controller keeps its
  # storage where it is (moving spec.storageNamespace alone would make
  # helm-controller uninstall the release) and the instance says so.
  printf 'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: rs-old\n  labels: {apps.cozystack.io/application.kind: E2eRsApp, apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.name: old}\nspec:\n  interval: 5m\n  chartRef: {kind: ExternalArtifact, name: rs-chart, namespace: cozy-system}\n  values: {replicas: 1}\n  valuesFrom: [{kind: Secret, name: cozystack-values}]\n' \
    | kubectl -n "$t" create -f - >/dev/null
  record "$t" rs-old 1 superseded | kubectl "${flux[@]}" create -f - >/dev/null
  record "$t" rs-old 2 deployed | kubectl "${flux[@]}" create -f - >/dev/null
  installed rs-old "$t"
  uid=$(jp helmrelease/rs-old '{.metadata.uid}')
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: E2eRsApp\nmetadata:\n  name: old\n  annotations: {apps.cozystack.io/adopt: "%s"}\nspec: {replicas: 1}\n' "${uid}" | kubectl -n "$t" create -f - >/dev/null
  wait_for "rs-old adopted by instance old" bash -c "[ \"\$(kubectl -n $t get helmrelease rs-old -o jsonpath='{.metadata.ownerReferences[0].name}')\" = old ]"
  wait_for "instance old reports LegacyReleaseStorage" bash -c "[ \"\$(kubectl -n $t get e2ersapp old -o jsonpath='{.status.conditions[?(@.type==\"LegacyReleaseStorage\")].reason}')\" = ReleaseStorageInTenantNamespace ]"
  msg=$(jp e2ersapp/old '{.status.conditions[?(@.type=="LegacyReleaseStorage")].message}')
  [[ "${msg}" == *"cozyplane migrate release-storage -n $t --apply"* ]] || { echo "message lacks the way out: ${msg}"; exit 1; }
  echo "instance old: LegacyReleaseStorage: ${msg}"
  [[ -z "$(jp helmrelease/rs-old '{.spec.storageNamespace}')" ]]
  no_target_change rs-old
  echo "rs-old keeps no spec.storageNamespace: no target change for helm-controller"
  # Still managed: a change to the instance reaches the HelmRelease, storage unchanged.
  kubectl -n "$t" patch e2ersapp old --type=merge -p '{"spec":{"replicas":3}}' >/dev/null
  wait_for "rs-old values follow the instance" bash -c "[ \"\$(kubectl -n $t get helmrelease rs-old -o jsonpath='{.spec.values.replicas}')\" = 3 ]"
  [[ -z "$(jp helmrelease/rs-old '{.spec.storageNamespace}')" ]]
  echo "rs-old follows its instance and keeps its storage"
  ;;
migrate)
  # The administrator's deliberate move: the plan first (nothing changes),
  # then --apply copies the records and moves spec and status together, so
  # helm-controller sees no target change at any point.
  plan=$(cozyplane migrate release-storage -n "$t")
  echo "${plan}"
  grep -E "^$t +rs-old +2 +$p +move" <<<"${plan}" >/dev/null
  grep -E "^$t +rs-web +1 +$p +none" <<<"${plan}" >/dev/null
  [[ -z "$(jp helmrelease/rs-old '{.spec.storageNamespace}')" ]]
  out=$(cozyplane migrate release-storage -n "$t" --apply)
  echo "${out}"
  grep -E "^$t +rs-old .* moved" <<<"${out}" >/dev/null
  [[ "$(jp helmrelease/rs-old '{.spec.storageNamespace}')" == "$p" ]]
  [[ -z "$(jp helmrelease/rs-old '{.status.storageNamespace}')" ]]
  no_target_change rs-old
  for v in 1 2; do
    [[ "$(kubectl -n "$p" get secret "sh.helm.release.v1.rs-old.v$v" -o jsonpath='{.data.release}/{.metadata.labels.status}')" == \
       "$(kubectl -n "$t" get secret "sh.helm.release.v1.rs-old.v$v" -o jsonpath='{.data.release}/{.metadata.labels.status}')" ]]
  done
  echo "records v1 and v2 copied to $p; spec.storageNamespace=$p, status.storageNamespace cleared: no target change"
  # helm-controller's next reconcile (played): with status.storageNamespace
  # empty it takes the spec's, and reads the release from there.
  ../../_scripts/neighbours/helm-controller.sh reconciled "$t" rs-old >/dev/null
  no_target_change rs-old
  wait_for "instance old no longer reports LegacyReleaseStorage" bash -c "[ -z \"\$(kubectl -n $t get e2ersapp old -o jsonpath='{.status.conditions[?(@.type==\"LegacyReleaseStorage\")].status}')\" ]"
  echo "instance old: LegacyReleaseStorage gone"
  # The helm controller keeps the new storage on its next writes.
  kubectl -n "$t" patch e2ersapp old --type=merge -p '{"spec":{"replicas":4}}' >/dev/null
  wait_for "rs-old values follow the instance" bash -c "[ \"\$(kubectl -n $t get helmrelease rs-old -o jsonpath='{.spec.values.replicas}')\" = 4 ]"
  [[ "$(jp helmrelease/rs-old '{.spec.storageNamespace}')" == "$p" ]]
  # Running it again changes nothing.
  again=$(cozyplane migrate release-storage -n "$t" --apply)
  grep -E "^$t +rs-old .* none" <<<"${again}" >/dev/null
  echo "a second run: ${again##*$'\n'}"
  ;;
busy)
  # A release helm-controller is acting on is not moved.
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: E2eRsApp\nmetadata:\n  name: busy\nspec: {replicas: 1}\n' | kubectl -n "$t" create -f - >/dev/null
  wait_for "rs-busy created" kubectl -n "$t" get helmrelease rs-busy
  # Make it a legacy one: the administrator clears the storage before helm-controller acted.
  kubectl -n "$t" patch helmrelease rs-busy --type=json -p '[{"op":"remove","path":"/spec/storageNamespace"}]' >/dev/null
  record "$t" rs-busy 1 pending-install | kubectl "${flux[@]}" create -f - >/dev/null
  out=$(cozyplane migrate release-storage -n "$t" --apply)
  echo "${out}"
  grep -E "^$t +rs-busy .*skip \(ReleaseInProgress\)" <<<"${out}" >/dev/null
  [[ -z "$(jp helmrelease/rs-busy '{.spec.storageNamespace}')" ]]
  if kubectl -n "$p" get secret sh.helm.release.v1.rs-busy.v1 >/dev/null 2>&1; then echo "a record of rs-busy was copied to $p"; exit 1; fi
  echo "rs-busy left alone while its release is pending-install"
  ;;
squatted)
  # A namespace at the platform namespace's name that the helm controller did
  # not create (no labels: an administrator's, or left from elsewhere) is not
  # used: the instance says why and gets no HelmRelease until it is fixed.
  t2=$t-2 p2=cozy-helm-$t-2
  kubectl create namespace "$t2" >/dev/null
  kubectl create namespace "$p2" >/dev/null
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: E2eRsApp\nmetadata:\n  name: web\nspec: {}\n' | kubectl -n "$t2" create -f - >/dev/null
  wait_for "instance web in $t2 reports PlatformNamespaceNotOwned" bash -c "[ \"\$(kubectl -n $t2 get e2ersapp web -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}')\" = PlatformNamespaceNotOwned ]"
  msg=$(kubectl -n "$t2" get e2ersapp web -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}')
  [[ "${msg}" == *"namespace $p2 exists but was not created for this tenant namespace"* ]] || { echo "message: ${msg}"; exit 1; }
  echo "instance web in $t2: ${msg}"
  if kubectl -n "$t2" get helmrelease rs-web >/dev/null 2>&1; then echo "a HelmRelease was written naming $p2"; exit 1; fi
  # Once an administrator labels it for this tenant namespace, it is used.
  kubectl label namespace "$p2" apps.cozystack.io/platform-namespace=Helm apps.cozystack.io/tenant-namespace="$t2" >/dev/null
  for _ in $(seq 1 90); do kubectl -n "$t2" get helmrelease rs-web >/dev/null 2>&1 && break; sleep 1; done
  [[ "$(kubectl -n "$t2" get helmrelease rs-web -o jsonpath='{.spec.storageNamespace}')" == "$p2" ]]
  echo "labelled: HelmRelease rs-web in $t2 names $p2"
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
