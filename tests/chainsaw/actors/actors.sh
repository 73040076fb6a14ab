#!/usr/bin/env bash
# Shared by the scenarios under tests/chainsaw/actors (sourced, after `cd` to
# the scenario's directory): the actors of a running upstream Cozystack that
# write HelmReleases carrying application labels, each impersonated as its
# real identity, as the API server would authenticate its ServiceAccount
# token (the username and the groups system:serviceaccounts,
# system:serviceaccounts:<namespace>, system:authenticated), and the tenant
# beside them.
#
#   FLUX_ALL_IN_ONE     the ServiceAccount of Cozystack's all-in-one Flux
#                       (default flux; a stock Flux has none, and hack/e2e.sh
#                       names helm-controller there, as the policies do)
#   FLUX_NAMESPACE      where Flux runs (default cozy-fluxcd), and with it
#                       the flux shard operator (upstream installs it in
#                       Flux's namespace); the backup strategy controller and
#                       the cleanup Jobs use upstream's default namespaces
#                       (cozy-backup-controller, cozy-system).
set -euo pipefail
a=../../_scripts/admission.sh
B=cozyplane-backing-object-policy
FLUX_NS=${FLUX_NAMESPACE:-cozy-fluxcd}

# sa NAMESPACE NAME: kubectl arguments impersonating that ServiceAccount.
sa() { echo "--as=system:serviceaccount:$1:$2 --as-group=system:serviceaccounts --as-group=system:serviceaccounts:$1 --as-group=system:authenticated"; }
# shellcheck disable=SC2207
flux=($(sa "$FLUX_NS" "${FLUX_ALL_IN_ONE:-flux}"))
# shellcheck disable=SC2207
helmctl=($(sa "$FLUX_NS" helm-controller))
# shellcheck disable=SC2207
shard=($(sa "$FLUX_NS" flux-shard-operator))
# shellcheck disable=SC2207
backup=($(sa cozy-backup-controller backupstrategy-controller))

# can EXPECT WHO VERB RESOURCE NAMESPACE [SUBRESOURCE]: RBAC's answer for WHO
# (an array name) must be EXPECT, so a refusal that follows is admission's.
can() {
  local -n who=$2
  local got
  got=$(kubectl auth can-i "$3" "$4" -n "$5" ${6:+--subresource="$6"} "${who[@]}" || true)
  [[ "${got}" == "$1" ]] || { echo "RBAC: $2 may $3 $4 ${6:-} in $5: ${got}, want $1"; exit 1; }
  echo "RBAC: $2 may $3 $4 ${6:-} in $5: $1"
}
# fixture FILE NAMESPACE RELEASE RELEASE-NAMESPACE: a fixture with its
# placeholders filled in.
fixture() { sed -e "s|@NAMESPACE@|$2|g" -e "s|@RELEASE@|$3|g" -e "s|@RELEASE_NAMESPACE@|$4|g" "$1"; }
# wait_for WHAT CMD...: retries CMD for 30 s, fails saying WHAT did not happen.
wait_for() {
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}

# setup PREFIX: the actors' rights (../rbac.yaml, Flux's and the shard
# operator's bound to the Flux namespace of the run), the Helm kind of
# ../definitions.yaml served, and the namespaces of one scenario: the parent
# tenant namespace P (tenant-PREFIX-<test id>) and its child tenant's C
# (P-child, as upstream's tenant chart names a child: <parent namespace>-<name>),
# where the tenant, the ServiceAccount tenant-admin, is bound to admin (and the
# parent's tenant, tenant-admin of P, to admin in P). Flux's
# identities get their role, an instance of E2eActApp "web" lives in C and its
# HelmRelease act-web is waited for.
setup() {
  local p=tenant-$1-${NAMESPACE#chainsaw-} c
  c=$p-child
  kubectl apply -f ../rbac.yaml -f ../definitions.yaml >/dev/null
  kubectl create clusterrolebinding "e2e-actors-shard-$1-${NAMESPACE#chainsaw-}" --clusterrole=e2e-actors-flux-shard-operator \
    --serviceaccount="$FLUX_NS:flux-shard-operator" >/dev/null
  kubectl wait --for=condition=Ready applicationdefinition/e2e-act-app --timeout=30s >/dev/null
  kubectl create namespace "$p" >/dev/null
  kubectl create namespace "$c" >/dev/null
  for n in "$p" "$c"; do
    kubectl -n "$n" create serviceaccount tenant-admin >/dev/null
    kubectl -n "$n" create rolebinding tenant-admin --clusterrole=admin --serviceaccount="$n:tenant-admin" >/dev/null
  done
  kubectl create clusterrolebinding "e2e-actors-flux-$1-${NAMESPACE#chainsaw-}" --clusterrole=e2e-actors-helm-controller \
    --serviceaccount="$FLUX_NS:${FLUX_ALL_IN_ONE:-flux}" --serviceaccount="$FLUX_NS:helm-controller" >/dev/null
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: E2eActApp\nmetadata: {name: web}\nspec: {}\n' | kubectl -n "$c" create -f - >/dev/null
  # shellcheck disable=SC2207
  local tenant=($(sa "$c" tenant-admin))
  wait_for "edit and admin aggregate Flux's HelmReleases (the tenant may create them in $c)" \
    bash -c "[ \"\$(kubectl auth can-i create helmreleases.helm.toolkit.fluxcd.io -n $c ${tenant[*]})\" = yes ]"
  kubectl -n "$c" wait --for=create helmrelease/act-web --timeout=30s >/dev/null
}
# teardown PREFIX: removes what setup made, the instance (and so its
# HelmRelease) before its definition.
teardown() {
  local p=tenant-$1-${NAMESPACE#chainsaw-}
  kubectl -n "$p-child" delete e2eactapps --all --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  kubectl delete namespace "$p-child" "$p" --ignore-not-found --timeout=60s >/dev/null || true
  kubectl delete clusterrolebinding "e2e-actors-flux-$1-${NAMESPACE#chainsaw-}" "e2e-actors-shard-$1-${NAMESPACE#chainsaw-}" --ignore-not-found >/dev/null
  kubectl delete -f ../definitions.yaml -f ../rbac.yaml --ignore-not-found --timeout=60s >/dev/null
}
# ns PREFIX: sets p, c (the namespaces of setup), tenant and root (kubectl
# arguments impersonating the tenants' ServiceAccounts, bound to admin in c
# and in p).
ns() {
  p=tenant-$1-${NAMESPACE#chainsaw-}
  c=$p-child
  # shellcheck disable=SC2207
  tenant=($(sa "$c" tenant-admin))
  # shellcheck disable=SC2207
  root=($(sa "$p" tenant-admin))
}
