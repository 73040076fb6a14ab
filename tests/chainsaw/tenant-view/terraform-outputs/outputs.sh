#!/usr/bin/env bash
# A Terraform instance's outputs and pending plan, as its tenant sees them,
# one case per chainsaw step: outputs.sh CASE. tofu-controller and its runner
# are played by ../../_scripts/neighbours/tofu-controller.sh, as their
# identities: the Terraform status and the outputs Secret in the platform
# namespace.
#
#   t     the tenant namespace (tenant-to-<test id>)
#   p     its platform namespace cozy-tf-<t>, where the Terraform objects live
#   tina  the tenant: reads Secrets and E2eTfOut instances of t, approves plans
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-to-${NAMESPACE#chainsaw-}
p=cozy-tf-$t
a=../../_scripts/admission.sh
P=cozyplane-terraform-identity-policy
# The runner of the platform namespace (tofu-controller's default runner
# ServiceAccount there, bound by the terraform controller).
runner="--as=system:serviceaccount:$p:tf-runner --as-group=system:serviceaccounts --as-group=system:serviceaccounts:$p --as-group=system:authenticated"
tf="--as=system:serviceaccount:cozy-system:cozystack-terraform"
tina="--as=tina --as-group=system:authenticated"
# wait_for WHAT CMD...: retries CMD for 60 s, fails saying WHAT did not happen.
wait_for() {
  local what=$1; shift
  for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
# tenant ARGS...: kubectl as tina in t.
tenant() {
  # shellcheck disable=SC2086
  kubectl -n "$t" $tina "$@"
}
# tofu OUTCOME TF ARGS...: tofu-controller reports OUTCOME on the Terraform
# object TF (../../_scripts/neighbours/tofu-controller.sh).
tofu() { ../../_scripts/neighbours/tofu-controller.sh "$1" "$p" "${@:2}"; }
# approve INSTANCE PLAN: the tenant approves PLAN, which reaches the Terraform
# object's spec.approvePlan.
approve() {
  tenant annotate --overwrite e2etfout "$1" apps.cozystack.io/approve-plan="$2" >/dev/null
  wait_for "the approval of $2 reaches the Terraform object" approved "out-$1" "$2"
}
secret_value() { # secret_value NAME KEY: as the tenant
  tenant get secret "$1" -o jsonpath="{.data.$2}" | base64 -d
}
has_value() { [[ "$(secret_value "$1" "$2")" == "$3" ]]; }
pending_reason() { # pending_reason NAME REASON: the PendingPlan condition's reason, as the tenant reads it ("" when none)
  [[ "$(tenant get e2etfout "$1" -o jsonpath='{.status.conditions[?(@.type=="PendingPlan")].reason}')" == "$2" ]]
}
approved() { [[ "$(kubectl -n "$p" get terraform "$1" -o jsonpath='{.spec.approvePlan}')" == "$2" ]]; }
gone() { ! kubectl -n "$t" get secret "$1" >/dev/null 2>&1; }
not_copied() { # not_copied INSTANCE: an event on it says its outputs were not copied
  kubectl -n "$t" get events -o json | jq -e --arg i "$1" --arg m "Secret $t/$1-outputs exists and is not controlled by E2eTfOut $1" \
    '.items[] | select(.reason == "OutputsNotCopied" and .involvedObject.name == $i and (.message | contains($m)))'
}

case "$1" in
setup)
  kubectl create namespace "$t" >/dev/null
  kubectl -n "$t" create role tenant --verb=get,list,watch --resource=secrets,e2etfouts.apps.cozystack.io >/dev/null
  kubectl -n "$t" create role tenant-approve --verb=patch,update --resource=e2etfouts.apps.cozystack.io >/dev/null
  kubectl -n "$t" create rolebinding tenant --role=tenant --user=tina >/dev/null
  kubectl -n "$t" create rolebinding tenant-approve --role=tenant-approve --user=tina >/dev/null
  kubectl -n "$t" apply -f - >/dev/null <<YAML
apiVersion: apps.cozystack.io/v1alpha1
kind: E2eTfOut
metadata: {name: db}
spec: {size: small}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: E2eTfOut
metadata: {name: taken}
spec: {size: small}
YAML
  wait_for "Terraform $p/out-db exists" kubectl -n "$p" get terraform out-db
  wait_for "Terraform $p/out-taken exists" kubectl -n "$p" get terraform out-taken
  # The tenant reads neither the Terraform objects nor the platform namespace's Secrets.
  # shellcheck disable=SC2086
  [[ "$(kubectl auth can-i get secrets -n "$p" $tina || true)" == no ]] || { echo "the tenant may read Secrets of $p"; exit 1; }
  # shellcheck disable=SC2086
  [[ "$(kubectl auth can-i get terraforms.infra.contrib.fluxcd.io -n "$p" $tina || true)" == no ]] || { echo "the tenant may read Terraform objects"; exit 1; }
  echo "the tenant reads neither Secrets nor Terraform objects of $p"
  ;;
plan)
  # tofu-controller plans with changes; the plan waits for approval. The
  # Terraform object asks for a readable plan, so the runner first stores
  # terraform show's text of it (runner/server_save_tfplan.go, api/plan/plan.go
  # ToConfigMap in flux-iac/tofu-controller), then the controller reports it
  # pending.
  [[ "$(kubectl -n "$p" get terraform out-db -o jsonpath='{.spec.storeReadablePlan}')" == human ]] || { echo "storeReadablePlan is not human"; exit 1; }
  uid=$(kubectl -n "$p" get terraform out-db -o jsonpath='{.metadata.uid}')
  # shellcheck disable=SC2086
  wait_for "the runner may write ConfigMaps of $p" bash -c "[[ \$(kubectl -n $p auth can-i create configmaps $runner) == yes ]]"
  # shellcheck disable=SC2086
  kubectl -n "$p" $runner apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: tfplan-default-out-db
  labels: {infra.contrib.fluxcd.io/plan-name: out-db, infra.contrib.fluxcd.io/plan-workspace: default}
  annotations:
    infra.contrib.fluxcd.io/plan-full-name: out-db
    infra.contrib.fluxcd.io/plan-full-workspace: default
    savedPlan: plan-main-6e1fb1aea8
  ownerReferences: [{apiVersion: infra.contrib.fluxcd.io/v1alpha2, kind: Terraform, name: out-db, uid: ${uid}}]
data:
  tfplan: |

    Terraform will perform the following actions:

      # aws_db_instance.main will be created
      + resource "aws_db_instance" "main" {
          + password = (sensitive value)
          + username = "tenant-admin"
        }

      # aws_security_group.db will be updated in-place
      ~ resource "aws_security_group" "db" {
          ~ description = "old" -> "new"
        }

    Plan: 1 to add, 1 to change, 0 to destroy.
YAML
  tofu planned out-db main@sha1:6e1fb1aea8b7
  want="plan plan-main-6e1fb1aea8 of main@sha1:6e1fb1aea8b7 creates, changes or destroys resources of the module: 1 to add, 1 to change, 0 to destroy (create aws_db_instance.main, update aws_security_group.db); tofu-controller: Plan generated (TerraformPlannedWithChanges)"
  summarized() { [[ "$(tenant get e2etfout db -o jsonpath='{.status.conditions[?(@.type=="PendingPlan")].reason} {.status.conditions[?(@.type=="PendingPlan")].message}')" == "PlanChanges $want" ]]; }
  wait_for "the tenant reads what the pending plan would change" summarized || {
    echo "PendingPlan: $(tenant get e2etfout db -o jsonpath='{.status.conditions[?(@.type=="PendingPlan")].message}')"
    echo "plan summary on the Terraform object: $(kubectl -n "$p" get terraform out-db -o jsonpath='{.metadata.annotations.apps\.cozystack\.io/plan-summary}')"
    exit 1
  }
  echo "the tenant reads, before approving: $want"
  # Counts and addresses only: no value of the plan reaches the instance.
  if tenant get e2etfout db -o json | grep -q tenant-admin; then echo "a value of the plan reached the instance"; exit 1; fi
  # A destroy plan says so: tofu-controller plans one when the Terraform
  # object asks for it (spec.destroy, which an administrator sets; the
  # suite's Terraform CRD does not carry it).
  tofu planned out-taken main@sha1:6e1fb1aea8b7 destroy
  wait_for "the tenant reads that the pending plan destroys" pending_reason taken PlanDestroys
  echo "the tenant reads that the plan of taken destroys every resource"
  # The tenant approves; the summary goes once nothing waits.
  approve db plan-main-6e1fb1aea8
  wait_for "the summary is gone once the plan is approved" pending_reason db ""
  echo "approved; no plan waits"
  ;;
outputs)
  # The approved plan applied; the runner writes the outputs Secret.
  tofu applied out-db main@sha1:6e1fb1aea8b7 endpoint=db.internal:5432 password=first-password internal_id=i-0abc
  wait_for "the tenant reads the outputs in $t" has_value db-outputs endpoint db.internal:5432
  has_value db-outputs password first-password
  s=$(kubectl -n "$t" get secret db-outputs -o json)
  uid=$(kubectl -n "$t" get e2etfout db -o jsonpath='{.metadata.uid}')
  jq -e --arg uid "$uid" '
    .metadata.labels["apps.cozystack.io/application.group"] == "apps.cozystack.io" and
    .metadata.labels["apps.cozystack.io/application.kind"] == "E2eTfOut" and
    .metadata.labels["apps.cozystack.io/application.name"] == "db" and
    .metadata.labels["internal.cozystack.io/tenantresource"] == "true" and
    (.metadata.ownerReferences | length == 1) and .metadata.ownerReferences[0].uid == $uid and .metadata.ownerReferences[0].controller == true and
    (.data | keys) == ["endpoint", "password"]' <<<"$s" >/dev/null || { echo "unexpected copy: $s"; exit 1; }
  echo "Secret $t/db-outputs: the two outputs the definition lists, the application labels, a tenant resource, controlled by the instance"
  # The controller read and wrote them through the RoleBindings it gave itself, one per namespace.
  for b in "$p reader" "$t writer"; do
    set -- $b
    kubectl -n "$1" get rolebinding cozystack-terraform-outputs -o json | jq -e --arg role "cozystack-terraform-outputs-$2" '
      .roleRef.name == $role and .subjects == [{"kind": "ServiceAccount", "name": "cozystack-terraform", "namespace": "cozy-system"}] and
      .metadata.labels["app.kubernetes.io/managed-by"] == "cozystack-terraform"' >/dev/null ||
      { echo "RoleBinding $1/cozystack-terraform-outputs: $(kubectl -n "$1" get rolebinding cozystack-terraform-outputs -o yaml 2>&1)"; exit 1; }
    echo "RoleBinding $1/cozystack-terraform-outputs binds the controller to cozystack-terraform-outputs-$2"
  done
  ;;
follow)
  # A new revision, planned, approved and applied, rewrites the outputs; the
  # copy follows.
  tofu planned out-db main@sha1:0f2c3d4e5a6b
  approve db plan-main-0f2c3d4e5a
  tofu applied out-db main@sha1:0f2c3d4e5a6b endpoint=db.internal:5432 password=second-password internal_id=i-0abc
  wait_for "the copy follows tofu-controller's Secret" has_value db-outputs password second-password
  echo "the copy follows: password rotated"
  # The tenant's own Secret of the instance's outputs name is not overwritten.
  kubectl -n "$t" create secret generic taken-outputs --from-literal=endpoint=mine >/dev/null
  # The administrator no longer asks for a destroy: a plan to build the
  # module, approved by the tenant and applied, writes its outputs.
  tofu planned out-taken main@sha1:6e1fb1aea8b7
  approve taken plan-main-6e1fb1aea8
  tofu applied out-taken main@sha1:6e1fb1aea8b7 endpoint=db2.internal:5432 password=p2 internal_id=i-0abc
  wait_for "an event says the outputs of taken were not copied" not_copied taken
  has_value taken-outputs endpoint mine
  [[ -z "$(kubectl -n "$t" get secret taken-outputs -o jsonpath='{.metadata.ownerReferences}')" ]] || { echo "taken-outputs was taken over"; exit 1; }
  echo "the tenant's own Secret taken-outputs is left alone and the instance's events say why"
  ;;
identity)
  # RBAC: the terraform controller holds rights on Secrets only where it bound
  # itself: get in the platform namespace, writes in the tenant namespace of
  # an outputs copy; none elsewhere. There the policy lets it write only
  # outputs copies.
  can() { # can EXPECT VERB NAMESPACE
    # shellcheck disable=SC2086
    [[ "$(kubectl auth can-i "$2" secrets -n "$3" $tf || true)" == "$1" ]] || { echo "RBAC: the terraform controller may $2 secrets in $3: want $1"; exit 1; }
  }
  for v in get create update delete; do can yes "$v" "$t"; can no "$v" kube-system; done
  can yes get "$p"
  for v in create update delete; do can no "$v" "$p"; done
  echo "RBAC: the terraform controller reads Secrets of $p and writes Secrets of $t, and nothing in kube-system"
  uid=$(kubectl -n "$t" get e2etfout db -o jsonpath='{.metadata.uid}')
  copy() { # copy NAMESPACE NAME [OWNER-KIND [LABEL-NAME]]
    printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.kind: E2eTfOut, apps.cozystack.io/application.name: %s}\n  ownerReferences: [{apiVersion: apps.cozystack.io/v1alpha1, kind: %s, name: db, uid: %s, controller: true}]\nstringData: {endpoint: x}\n' \
      "$2" "$1" "${4:-db}" "${3:-E2eTfOut}" "$uid"
  }
  # shellcheck disable=SC2086
  copy "$t" probe-outputs | $a allow -- kubectl $tf create --dry-run=server -f -
  # shellcheck disable=SC2086
  copy "$t" probe-outputs E2eTfOut other | $a deny $P "carrying its application labels; CREATE of Secret $t/probe-outputs is refused" -- kubectl $tf create --dry-run=server -f -
  # shellcheck disable=SC2086
  printf 'apiVersion: v1\nkind: Secret\nmetadata: {name: probe, namespace: %s}\nstringData: {a: b}\n' "$t" |
    $a deny $P "Secrets in tenant-* namespaces controlled by an apps.cozystack.io instance" -- kubectl $tf create --dry-run=server -f -
  # The tenant's own Secret: neither changed, nor taken over, nor deleted.
  # (Updates, as the controller writes: its role grants update, not patch.)
  relabel() { kubectl -n "$1" get secret "$2" -o json | jq '.metadata.labels.x = "y"'; }
  # shellcheck disable=SC2086
  relabel "$t" taken-outputs | $a deny $P "UPDATE of Secret $t/taken-outputs is refused" -- kubectl $tf replace --dry-run=server -f -
  # shellcheck disable=SC2086
  kubectl -n "$t" get secret taken-outputs -o json | jq --arg uid "$uid" '.metadata.labels = {"apps.cozystack.io/application.group": "apps.cozystack.io", "apps.cozystack.io/application.kind": "E2eTfOut", "apps.cozystack.io/application.name": "db"} | .metadata.ownerReferences = [{apiVersion: "apps.cozystack.io/v1alpha1", kind: "E2eTfOut", name: "db", uid: $uid, controller: true}]' |
    $a deny $P "UPDATE of Secret $t/taken-outputs is refused" -- kubectl $tf replace --dry-run=server -f -
  # shellcheck disable=SC2086
  $a deny $P "DELETE of Secret $t/taken-outputs is refused" -- kubectl -n "$t" $tf delete secret taken-outputs --dry-run=server
  # Its own copy it updates and deletes.
  # shellcheck disable=SC2086
  relabel "$t" db-outputs | $a allow -- kubectl $tf replace --dry-run=server -f -
  # shellcheck disable=SC2086
  $a allow -- kubectl -n "$t" $tf delete secret db-outputs --dry-run=server
  ;;
delete)
  kubectl -n "$t" delete e2etfout db --timeout=60s >/dev/null
  wait_for "the copy goes with the instance" gone db-outputs
  echo "Secret $t/db-outputs is gone with the instance"
  ;;
cleanup)
  kubectl -n "$t" delete e2etfouts --all --timeout=60s --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete namespace "$t" "$p" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  ;;
esac
