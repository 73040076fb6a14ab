#!/usr/bin/env bash
# Plays tofu-controller on a Terraform object (infra.contrib.fluxcd.io/v1alpha2):
# writes the status its reconciler patches at the end of a reconciliation with
# the given outcome, as its identity (lib.sh: TOFU_NAMESPACE, ServiceAccount
# tofu-controller) and field manager (tf-controller); the outputs Secret is
# written by the runner, as the runner's ServiceAccount (spec.serviceAccountName,
# default tf-runner, of the Terraform's namespace).
#
#   tofu-controller.sh OUTCOME NAMESPACE NAME [ARGS]
#
#   planned REVISION [destroy]  planned with changes: the plan is pending
#                               (approved by spec.approvePlan, or applied at
#                               once when approvePlan is auto); a destroy
#                               plan when the Terraform object's spec.destroy
#                               is true, or with "destroy" (the suite's
#                               Terraform CRD, a subset of tofu-controller's,
#                               has no spec.destroy)
#   planned-no-changes REVISION nothing to change: Ready
#   applied REVISION [OUTPUT=VALUE...]
#                               the pending plan applied; with
#                               spec.writeOutputsToSecret and OUTPUTs, the
#                               runner writes them to that Secret first
#   apply-failed REVISION MESSAGE   terraform apply failed with MESSAGE
#   failed REVISION REASON MESSAGE  any other failure (TerraformNotReady:
#                               e.g. TFExecPlanFailed, ArtifactFailed)
#
# REVISION is the source revision, <branch>@<algorithm>:<digest> (e.g.
# main@sha1:6e1fb1aea8b7...); the plan id is plan-<branch>-<first 10 hex>.
#
# Mirrors flux-iac/tofu-controller v0.16.5:
#   api/v1alpha2/terraform_types.go   SetTerraformReadiness,
#       TerraformPlannedWithChanges, TerraformPlannedNoChanges,
#       TerraformApplied, TerraformOutputsAvailable, TerraformOutputsWritten,
#       TerraformAppliedFailResetPlanAndNotReady, TerraformNotReady,
#       TerraformStateLockReleased, TerraformResetRetry
#   api/v1alpha2/condition_types.go   condition types and reasons
#   api/planid/plain_id.go            GetPlanID, GetApproveMessage
#   controllers/tf_controller.go      lastSuccessfulReconcileAt and the
#       failure count after each reconciliation
#   controllers/tf_controller_reconcile.go  a Ready left Unknown by an
#       apply turns True at the end of the reconciliation
#   controllers/tf_controller_plan.go, tf_controller_apply.go,
#       tf_controller_outputs.go      the messages
#   runner/server_outputs.go          WriteOutputs: the outputs Secret
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

outcome=${1:?usage: tofu-controller.sh OUTCOME NAMESPACE NAME [ARGS]}
ns=${2:?namespace}
name=${3:?name}
revision=${4:?the source revision}
shift 4
reason="" message=""
declare -a outputs=()
destroy=false
case "$outcome" in
planned) [[ "${1:-}" != destroy ]] || destroy=true ;;
planned-no-changes) ;;
applied) outputs=("$@") ;;
apply-failed) message=${1:?apply-failed needs the error message} ;;
failed) reason=${1:?failed needs a reason}; message=${2:?failed needs a message} ;;
*) nb_die "tofu-controller.sh: unknown outcome $outcome" ;;
esac

# plan_id REVISION: planid.GetPlanID.
plan_id() {
  local branch=${1%%@*} hash=${1#*@}
  hash=${hash#*:}
  echo "plan-${branch}-${hash:0:10}"
}

tf=$(nb_get terraform "$ns" "$name") || nb_die "Terraform $ns/$name not found"
now=$(nb_now)

# tofu-controller applies only the plan it planned, and in the manual mode
# (no approvePlan auto, no force) only once spec.approvePlan names it or a
# prefix of it, never in the plan-only mode (tf_controller_apply.go
# shouldApply).
if [[ "$outcome" == applied || "$outcome" == apply-failed ]]; then
  pending=$(jq -r '.status.plan.pending // ""' <<<"$tf")
  approved=$(jq -r '.spec.approvePlan // ""' <<<"$tf")
  planned_rev=$(jq -r '.status.lastPlannedRevision // ""' <<<"$tf")
  [[ -n "$pending" ]] || nb_die "Terraform $ns/$name has no pending plan: tofu-controller applies none (plan it first)"
  [[ "$planned_rev" == "$revision" ]] || nb_die "Terraform $ns/$name planned $planned_rev, not $revision"
  if [[ "$(jq -r '.spec.force // false' <<<"$tf")" != true ]]; then
    [[ "$(jq -r '.spec.planOnly // false' <<<"$tf")" != true ]] || nb_die "Terraform $ns/$name is plan-only: tofu-controller does not apply it"
    # approvePlan auto, the pending plan's id, or a prefix of it.
    if [[ -z "$approved" || ( "$approved" != auto && "$pending" != "$approved"* ) ]]; then
      nb_die "Terraform $ns/$name: the pending plan $pending is not approved (spec.approvePlan: ${approved:-none}); tofu-controller does not apply it"
    fi
  fi
fi

# The runner writes the outputs Secret (WriteOutputs): created with the
# Terraform as its controller owner, or its data replaced.
secret=$(jq -r '.spec.writeOutputsToSecret.name // ""' <<<"$tf")
names="[]"
if [[ "$outcome" == applied && ${#outputs[@]} -gt 0 ]]; then
  names=$(printf '%s\n' "${outputs[@]}" | cut -d= -f1 | sort | jq -Rsc 'split("\n") | map(select(. != ""))')
fi
wrote=false
if [[ -n "$secret" && "$names" != "[]" ]]; then
  runner_sa=$(jq -r '.spec.serviceAccountName // "tf-runner"' <<<"$tf")
  declare -a lits=()
  # spec.writeOutputsToSecret.outputs, when set, picks which are written.
  wanted=$(jq -c '.spec.writeOutputsToSecret.outputs // []' <<<"$tf")
  for o in "${outputs[@]}"; do
    if [[ "$wanted" == "[]" ]] || jq -e --arg k "${o%%=*}" 'index($k) != null' <<<"$wanted" >/dev/null; then
      lits+=("--from-literal=$o")
    fi
  done
  body=$(kubectl create secret generic "$secret" -n "$ns" "${lits[@]}" --dry-run=client -o json |
    jq -c --argjson tf "$tf" '.type = "Opaque"
      | .metadata.labels = ($tf.spec.writeOutputsToSecret.labels // null)
      | .metadata.annotations = ($tf.spec.writeOutputsToSecret.annotations // null)
      | .metadata.ownerReferences = [{apiVersion: "infra.contrib.fluxcd.io/v1alpha2", kind: "Terraform",
          name: $tf.metadata.name, uid: $tf.metadata.uid, controller: true}]
      | del(.metadata.creationTimestamp) | del(..|nulls)')
  as=$(nb_as "$ns" "$runner_sa")
  # The runner's rights come from the RoleBinding the platform writes in
  # the Terraform's namespace; a runner started before it fails and is
  # started again, so wait for it as long.
  for _ in $(seq 1 60); do
    # shellcheck disable=SC2086
    [[ "$(kubectl -n "$ns" auth can-i create secrets $as 2>/dev/null)" == yes ]] && break
    sleep 0.5
  done
  # shellcheck disable=SC2086
  if existing=$(kubectl -n "$ns" get secret "$secret" -o json 2>/dev/null); then
    jq -c --argjson b "$body" '.data = $b.data' <<<"$existing" | kubectl -n "$ns" $as replace -f - >/dev/null
  else
    kubectl -n "$ns" $as create -f - <<<"$body" >/dev/null
  fi
  wrote=true
fi

# shellcheck disable=SC2016
prog='
(.metadata.generation) as $gen
| .spec as $spec
| (.status // {}) as $old
| ($old | .conditions //= [])
| (.plan // {}) as $plan
| def ready($status; $reason; $message):
    (if $status != "Unknown" then drop("Reconciling") else . end)
    | flux_set({type: "Ready", status: $status, reason: $reason, message: $message}; $gen; $now)
    | .observedGeneration = $gen
    | .lastAttemptedRevision = $rev;
  def lock_released: drop("StateLocked") | .lock = {};
  if $outcome == "planned" then
    flux_set({type: "Plan", status: "True", reason: "TerraformPlannedWithChanges", message: "Plan generated"}; $gen; $now)
    | .plan = ({lastApplied: $plan.lastApplied, pending: $planid, isDestroyPlan: ($spec.destroy // $destroy)} | with_entries(select(.value != null and .value != false and .value != "")))
    | .lastAttemptedRevision = $rev | .lastPlannedRevision = $rev
    | .lastPlannedGeneration = $gen
    | .lastPlanAt = $now
    | lock_released
    | if $spec.planOnly then ready("Unknown"; "TerraformPlannedWithChanges"; "Plan generated: This object is in the plan only mode.")
      elif ($spec.approvePlan // "") == "auto" or ($spec.force // false) then ready("Unknown"; "TerraformPlannedWithChanges"; "Plan generated")
      else ready("Unknown"; "TerraformPlannedWithChanges"; "Plan generated: set approvePlan: \"" + $planid + "\" to approve this plan.") end
  elif $outcome == "planned-no-changes" then
    flux_set({type: "Plan", status: "False", reason: "TerraformPlannedNoChanges", message: "Plan no changes"}; $gen; $now)
    | .plan = ({lastApplied: $plan.lastApplied, isDestroyPlan: ($spec.destroy // false)} | with_entries(select(.value != null and .value != false and .value != "")))
    | .lastAttemptedRevision = $rev | .lastPlannedRevision = $rev
    | .lastPlannedGeneration = $gen
    | .lastPlanAt = $now
    | lock_released
    | ready("True"; "TerraformPlannedNoChanges"; "Plan no changes: " + $rev)
  elif $outcome == "applied" then
    (if $plan.isDestroyPlan then "Destroy applied successfully" else "Applied successfully" end) as $msg
    | flux_set({type: "Apply", status: "True", reason: "TerraformAppliedSucceed", message: $msg}; $gen; $now)
    | .plan = ({lastApplied: $plan.pending, isDestroyPlan: ($plan.isDestroyPlan // false)} | with_entries(select(.value != null and .value != false and .value != "")))
    | .lastAppliedRevision = $rev
    | lock_released
    | ready("Unknown"; "TerraformAppliedSucceed"; $msg + ": " + $rev)
    | if ($names | length) > 0 then
        flux_set({type: "Output", status: "True", reason: "TerraformOutputsAvailable", message: "Outputs available"}; $gen; $now)
        | .availableOutputs = $names
      else . end
    | if $wrote then
        flux_set({type: "Output", status: "True", reason: "TerraformOutputsWritten", message: "Outputs written"}; $gen; $now)
        | ready("True"; "TerraformOutputsWritten"; "Outputs written: " + $rev)
      else
        # The end of the reconciliation turns the Unknown Ready True.
        .conditions = [.conditions[] | if .type == "Ready" then .status = "True" else . end]
        | drop("Reconciling")
      end
    | if ($spec.enableInventory // false) | not then del(.inventory) else . end
  elif $outcome == "apply-failed" then
    flux_set({type: "Apply", status: "False", reason: "TerraformAppliedFail", message: $message}; $gen; $now)
    | ready("False"; "TFExecApplyFailed"; $message) | drop("Reconciling")
    | .plan.pending = "" | .plan |= del(.pending)
  else
    ready("False"; $reason; $message) | drop("Reconciling")
  end
# The end of each reconciliation (tf_controller.go).
| if $outcome == "apply-failed" or $outcome == "failed" then
    .reconciliationFailures = ((.reconciliationFailures // 0) + 1)
  else
    drop("Stalled") | del(.reconciliationFailures) | .lastSuccessfulReconcileAt = $now
  end
'
nb_patch_status terraform "$ns" "$name" tf-controller "$(nb_as "$NB_TOFU_NS" tofu-controller)" "$prog" \
  --arg outcome "$outcome" --arg rev "$revision" --arg planid "$(plan_id "$revision")" \
  --arg message "$message" --arg reason "$reason" --arg now "$now" \
  --argjson names "$names" --argjson wrote "$wrote" --argjson destroy "$destroy"
