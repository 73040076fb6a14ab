#!/usr/bin/env bash
# The Terraform attacks of a tenant holding the built-in edit ClusterRole in
# its namespace, one case per chainsaw step: terraform.sh CASE. As in
# attack.sh, each case first shows what RBAC alone lets the tenant do, then
# that the attack is refused (saying what to do instead) or has no effect,
# and that the legitimate use next to it works.
#
# The Terraform object of instance E2eAtkInfra/net lives in the platform
# namespace cozy-tf-<tenant namespace>, with its runner Pod, plan Secret
# tfplan-default-atkinfra-net and state Secret tfstate-default-atkinfra-net
# (docs/terraform-backend.md).
#
#   t       the tenant namespace (tenant-atk-<test id>)
#   p       its platform namespace, cozy-tf-$t
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-atk-${NAMESPACE#chainsaw-}
p=cozy-tf-$t
tenant=(--as=mallory --as-group=system:authenticated)
K=(kubectl -n "$t" "${tenant[@]}")
a=../../_scripts/admission.sh
B=cozyplane-backing-object-policy
T=cozyplane-terraform-identity-policy
ctl=system:serviceaccount:cozy-system:cozystack-terraform

# can NS VERB RESOURCE [SUBRESOURCE]: fails unless RBAC lets the tenant do it in NS.
can() {
  local sub=()
  [[ $# -gt 3 ]] && sub=(--subresource="$4")
  if [[ "$(kubectl auth can-i "$2" "$3" "${sub[@]}" -n "$1" "${tenant[@]}" || true)" != yes ]]; then
    echo "RBAC does not let the tenant $2 $3 ${4:-} in $1: the attack would prove nothing"; exit 1
  fi
  echo "RBAC alone allows the tenant to $2 $3 ${4:-} in $1"
}
# cannot NS VERB RESOURCE [SUBRESOURCE]: fails if RBAC lets the tenant do it in NS.
cannot() {
  local sub=()
  [[ $# -gt 3 ]] && sub=(--subresource="$4")
  if [[ "$(kubectl auth can-i "$2" "$3" "${sub[@]}" -n "$1" "${tenant[@]}" || true)" != no ]]; then
    echo "the tenant may $2 $3 ${4:-} in $1"; exit 1
  fi
  echo "the tenant may not $2 $3 ${4:-} in $1"
}
# wait_for WHAT CMD...: retries CMD for 30 s, fails saying WHAT did not happen.
wait_for() {
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
# forbidden CMD...: CMD must fail with the API server's RBAC refusal.
forbidden() {
  local out
  if out=$("$@" 2>&1); then echo "expected RBAC to refuse: $*"; echo "$out"; exit 1; fi
  [[ "$out" == *"is forbidden"* ]] || { echo "expected an RBAC refusal, got: $out"; exit 1; }
  echo "refused by RBAC: $*"
}
tfvar() { kubectl -n "$p" get terraform atkinfra-net -o jsonpath="{.spec.vars[?(@.name==\"$1\")].value}"; }

case "$1" in
plan-and-state)
  # In the tenant's namespace RBAC lets it write Secrets, Pods, exec and
  # impersonate ServiceAccounts: everything the attacks on a runner there
  # needed.
  can "$t" create secrets; can "$t" update secrets; can "$t" create pods exec; can "$t" impersonate serviceaccounts
  # Writing a plan or a state with the Terraform's Secret names there has no
  # effect: no Terraform object reads the tenant's namespace.
  "${K[@]}" create secret generic tfplan-default-atkinfra-net --from-literal=tfplan=forged
  "${K[@]}" create secret generic tfstate-default-atkinfra-net --from-literal=tfstate=forged
  if kubectl -n "$t" get terraform atkinfra-net >/dev/null 2>&1; then echo "a Terraform object is in the tenant's namespace"; exit 1; fi
  kubectl -n "$p" get terraform atkinfra-net >/dev/null
  # The platform namespace, where the runner, plan and state are, is out of reach.
  for verb in get create update patch delete; do cannot "$p" "$verb" secrets; done
  cannot "$p" create pods; cannot "$p" create pods exec; cannot "$p" impersonate serviceaccounts
  cannot "$p" patch terraforms.infra.contrib.fluxcd.io; cannot "$p" create terraforms.infra.contrib.fluxcd.io
  forbidden kubectl -n "$p" "${tenant[@]}" create secret generic tfplan-default-atkinfra-net --from-literal=tfplan=forged
  forbidden kubectl -n "$p" "${tenant[@]}" get secret tfstate-default-atkinfra-net
  forbidden kubectl -n "$p" "${tenant[@]}" patch terraform atkinfra-net --type=merge -p '{"spec":{"approvePlan":"auto"}}'
  # The legitimate path: change the instance; the Terraform object follows.
  "${K[@]}" patch e2eatkinfra net --type=merge -p '{"spec":{"cidr":"10.9.0.0/16"}}'
  cidr() { [[ "$(tfvar cidr)" == '"10.9.0.0/16"' || "$(tfvar cidr)" == 10.9.0.0/16 ]]; }
  wait_for "the Terraform object in $p follows the instance (cidr 10.9.0.0/16)" cidr
  ;;
terraform-object)
  # In its own namespace the tenant may write Terraform objects (Flux's
  # aggregated roles); one marked as a backing object is refused there as
  # before, and one without the marks changes nothing for the instance.
  can "$t" create terraforms.infra.contrib.fluxcd.io
  printf 'apiVersion: infra.contrib.fluxcd.io/v1alpha2\nkind: Terraform\nmetadata:\n  name: atkinfra-net\n  labels: {apps.cozystack.io/application.kind: E2eAtkInfra, apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.name: net, apps.cozystack.io/application.namespace: %s}\nspec:\n  interval: 1m\n  approvePlan: auto\n  sourceRef: {kind: OCIRepository, name: evil, namespace: cozy-system}\n' "$t" \
    | $a deny $B "CREATE by mallory is refused. Change the instance E2eAtkInfra/net instead" -- "${K[@]}" create -f -
  printf 'apiVersion: infra.contrib.fluxcd.io/v1alpha2\nkind: Terraform\nmetadata:\n  name: atkinfra-net\nspec:\n  interval: 1m\n  approvePlan: auto\n  sourceRef: {kind: OCIRepository, name: evil, namespace: cozy-system}\n' \
    | $a allow -- "${K[@]}" create -f -
  sleep 2
  # The instance still reports on, and approves through, its own Terraform object.
  [[ "$(kubectl -n "$t" get e2eatkinfra net -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')" != BackingObjectNotOwned ]]
  [[ -z "$(kubectl -n "$p" get terraform atkinfra-net -o jsonpath='{.metadata.deletionTimestamp}')" ]]
  "${K[@]}" delete terraform atkinfra-net
  ;;
approve-prefix)
  can "$t" patch e2eatkinfras.apps.cozystack.io
  # tofu-controller (../../_scripts/neighbours) plans with changes: the plan waits for approval.
  ../../_scripts/neighbours/tofu-controller.sh planned "$p" atkinfra-net main@sha1:6e1fb1aea8b7
  pending() { [[ "$(kubectl -n "$t" get e2eatkinfra net -o jsonpath='{.status.backend.pendingPlan}')" == plan-main-6e1fb1aea8 ]]; }
  wait_for "the instance shows the pending plan" pending
  # tofu-controller applies a pending plan whose id starts with spec.approvePlan:
  # approving a prefix would approve every later plan in advance.
  for prefix in plan- plan-main- plan-main-6e1fb1aea; do
    $a allow -- "${K[@]}" annotate --overwrite e2eatkinfra net apps.cozystack.io/approve-plan="$prefix"
    refused() {
      [[ "$(kubectl -n "$t" get e2eatkinfra net -o jsonpath='{.status.conditions[?(@.type=="PlanApproved")].reason}')" == PlanNotPending &&
         "$(kubectl -n "$t" get e2eatkinfra net -o jsonpath='{.status.conditions[?(@.type=="PlanApproved")].message}')" == *"plan $1 was not forwarded: the pending plan is plan-main-6e1fb1aea8"* ]]
    }
    wait_for "the instance reports the approval of $prefix as PlanNotPending" refused "$prefix"
    [[ -z "$(kubectl -n "$p" get terraform atkinfra-net -o jsonpath='{.spec.approvePlan}')" ]] || { echo "prefix $prefix reached spec.approvePlan"; exit 1; }
  done
  # the exact id is forwarded to the Terraform object in the platform namespace
  $a allow -- "${K[@]}" annotate --overwrite e2eatkinfra net apps.cozystack.io/approve-plan=plan-main-6e1fb1aea8
  forwarded() { [[ "$(kubectl -n "$p" get terraform atkinfra-net -o jsonpath='{.spec.approvePlan}')" == plan-main-6e1fb1aea8 ]]; }
  wait_for "the exact plan id reaches spec.approvePlan" forwarded
  ;;
strip-finalizer)
  # edit lets the tenant remove finalizers from its own instances; without
  # the terraform finalizer nothing would delete the Terraform object in the
  # platform namespace (no ownerReference crosses namespaces).
  can "$t" patch e2eatkinfras.apps.cozystack.io; can "$t" delete e2eatkinfras.apps.cozystack.io
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: E2eAtkInfra\nmetadata: {name: tmp}\nspec: {}\n' | "${K[@]}" create -f -
  created() { kubectl -n "$p" get terraform atkinfra-tmp; }
  wait_for "Terraform $p/atkinfra-tmp is written" created
  fin() { [[ "$(kubectl -n "$t" get e2eatkinfra tmp -o jsonpath='{.metadata.finalizers}')" == *apps.cozystack.io/terraform* ]]; }
  wait_for "the instance holds the terraform finalizer" fin
  "${K[@]}" patch e2eatkinfra tmp --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
  "${K[@]}" delete e2eatkinfra tmp --wait=false
  # No effect: the Terraform object goes with its instance all the same.
  gone() { ! kubectl -n "$p" get terraform atkinfra-tmp; }
  wait_for "Terraform $p/atkinfra-tmp goes with its instance" gone
  instgone() { ! kubectl -n "$t" get e2eatkinfra tmp; }
  wait_for "the instance is gone" instgone
  ;;
controller-identity)
  # RBAC lets the terraform controller create any namespace and write
  # Terraform objects anywhere; its identity policy narrows both.
  [[ "$(kubectl auth can-i create namespaces --as="$ctl")" == yes ]] || { echo "RBAC does not let the controller create namespaces"; exit 1; }
  [[ "$(kubectl auth can-i create terraforms.infra.contrib.fluxcd.io -n "$t" --as="$ctl")" == yes ]] || { echo "RBAC does not let the controller create Terraform objects in $t"; exit 1; }
  id=${NAMESPACE#chainsaw-}
  $a deny $T "the terraform controller only creates platform namespaces cozy-tf-<tenant namespace>" -- kubectl --as="$ctl" create namespace "evil-$id"
  $a deny $T "CREATE of namespace cozy-tf-bare-$id is refused" -- kubectl --as="$ctl" create namespace "cozy-tf-bare-$id"
  # relabelling a namespace as a platform namespace: not even RBAC allows it
  forbidden kubectl --as="$ctl" label namespace "$t" apps.cozystack.io/platform-namespace=Terraform
  printf 'apiVersion: infra.contrib.fluxcd.io/v1alpha2\nkind: Terraform\nmetadata: {name: runner-here}\nspec:\n  interval: 1m\n  sourceRef: {kind: OCIRepository, name: x, namespace: cozy-system}\n' \
    | $a deny $T "writes Terraform objects only in platform namespaces cozy-tf-*" -- kubectl -n "$t" --as="$ctl" create -f -
  # what it does do: the platform namespace, labelled, and a Terraform there
  [[ "$(kubectl get namespace "$p" -o jsonpath='{.metadata.labels.apps\.cozystack\.io/platform-namespace}/{.metadata.labels.apps\.cozystack\.io/tenant-namespace}')" == "Terraform/$t" ]]
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cozy-tf-ok-%s\n  labels: {apps.cozystack.io/platform-namespace: Terraform, apps.cozystack.io/tenant-namespace: ok-%s}\n' "$id" "$id" \
    | $a allow -- kubectl --as="$ctl" create --dry-run=server -f -
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
