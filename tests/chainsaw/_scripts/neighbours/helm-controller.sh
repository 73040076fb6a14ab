#!/usr/bin/env bash
# Plays Flux's helm-controller on a HelmRelease: writes the status its
# reconciler writes at the end of a reconciliation with the given outcome,
# as its identity (lib.sh: FLUX_NAMESPACE, FLUX_ALL_IN_ONE) and field manager
# (helm-controller).
#
#   helm-controller.sh OUTCOME NAMESPACE NAME [ARGS]
#
#   install-succeeded [VERSION]     the release installed (revision 1)
#   upgrade-succeeded [VERSION]     upgraded to the next revision
#   install-failed MESSAGE [VERSION]   Helm's install returned MESSAGE after
#   upgrade-failed MESSAGE [VERSION]   storing a failed release
#   reconciled                      a reconciliation that found the release
#                                   in sync (nothing to install or upgrade)
#   succeeded [VERSION], failed MESSAGE [VERSION]
#                                   install-* when the HelmRelease has no
#                                   release in its history yet, else upgrade-*
#                                   (as helm-controller picks the action from
#                                   the release in storage)
#
# VERSION is the chart version helm-controller loaded (default: the
# HelmRelease's spec.chart.spec.version). The chart's name is
# spec.chart.spec.chart (or spec.chartRef.name), the values its spec.values.
#
# Mirrors fluxcd/helm-controller v1.6.3:
#   internal/controller/helmrelease_controller.go  reconcileRelease (storage
#       namespace, lastAttempted*, failures reset when chart or values
#       change), the deferred patch (lastHandledReconcileAt; observedGeneration
#       unless the object is requeued)
#   internal/reconcile/helmchart_template.go       status.helmChart
#   internal/reconcile/install.go, upgrade.go      the action, history,
#       Released and its messages, failure counters
#   internal/reconcile/atomic_release.go           Stalled (RetriesExceeded)
#       once remediation retries are exhausted, Reconciling with
#       ProgressingWithRetry while they are not, Reconciling removed when done
#   internal/reconcile/release.go                  summarize: Ready from
#       Released, Stalled removed when Ready is True
#   internal/release/observation.go, api/v2/snapshot_types.go  the history
#       snapshots (the digests are of this simulation's own inputs)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

outcome=${1:?usage: helm-controller.sh OUTCOME NAMESPACE NAME [ARGS]}
ns=${2:?namespace}
name=${3:?name}
shift 3
message=""
if [[ "$outcome" == succeeded || "$outcome" == failed ]]; then
  if [[ "$(kubectl -n "$ns" get helmrelease "$name" -o jsonpath='{.status.history[0].version}')" == "" ]]; then
    outcome=install-$outcome
  else
    outcome=upgrade-$outcome
  fi
fi
case "$outcome" in
install-failed|upgrade-failed) message=${1:?$outcome needs the error message}; shift ;;
install-succeeded|upgrade-succeeded|reconciled) ;;
*) nb_die "helm-controller.sh: unknown outcome $outcome" ;;
esac
version=${1:-}

hr=$(nb_get helmrelease "$ns" "$name") || nb_die "HelmRelease $ns/$name not found"
[[ -n "$version" ]] || version=$(jq -r '.spec.chart.spec.version // ""' <<<"$hr")
if [[ "$outcome" != reconciled ]]; then
  [[ -n "$version" ]] || nb_die "HelmRelease $ns/$name names no chart version: pass the one helm-controller loaded"
fi
# The digests helm-controller writes are SHA-256 digests (opencontainers
# digest.Canonical) of the values and of the release.
values_digest="sha256:$(jq -cS '.spec.values // {}' <<<"$hr" | tr -d '\n' | sha256sum | cut -d' ' -f1)"
now=$(nb_now)

# shellcheck disable=SC2016
prog='
(.metadata.generation) as $gen
| .spec as $spec
| .metadata.name as $name
| (.metadata.annotations // {}) as $ann
| ($spec.releaseName // (if ($spec.targetNamespace // "") != "" then $spec.targetNamespace + "-" + $name else $name end)) as $rls
| ($spec.targetNamespace // .metadata.namespace) as $rlsns
| ($spec.chart.spec.chart // $spec.chartRef.name // $name) as $chart
| (.status // {}) as $old
| ($old | .conditions //= [])
# reconcileRelease
| .storageNamespace = ($spec.storageNamespace // $ns)
| if $spec.chart then .helmChart = (($spec.chart.spec.sourceRef.namespace // $ns) + "/" + $ns + "-" + $name) else del(.helmChart) end
| if $outcome != "reconciled" and (($old.lastAttemptedRevision // "") != $version or ($old.lastAttemptedConfigDigest // "") != $digest)
  then del(.failures, .installFailures, .upgradeFailures) else . end
| .lastAttemptedGeneration = $gen
| if $version != "" then .lastAttemptedRevision = $version else . end
| .lastAttemptedConfigDigest = $digest
| del(.lastAttemptedValuesChecksum, .lastReleaseRevision, .lastAttemptedRevisionDigest)
| if $outcome == "reconciled" then
    # In sync: no action; summarize sets Ready again from Released.
    drop("Reconciling")
    | (.conditions | map(select(.type == "Released")) | first) as $rel
    | if $rel then flux_set({type: "Ready", status: $rel.status, reason: $rel.reason, message: $rel.message}; $gen; $now) else . end
    | if $rel.status == "True" then drop("Stalled") else . end
    | .observedGeneration = $gen
  else
    ($outcome | split("-")) as [$action, $result]
    | (if $action == "install" then "Install" else "Upgrade" end) as $Action
    | .lastAttemptedReleaseAction = $action
    | .lastAttemptedReleaseActionDuration = "2s"
    | drop("TestSuccess") | drop("Remediated")
    | (if $action == "install" then [] else (.history // []) end) as $hist
    | (($hist[0].version // 0) + 1) as $v
    | (if $result == "succeeded" then "deployed" else "failed" end) as $phase
    | {apiVersion: "v2", name: $rls, namespace: $rlsns, version: $v, status: $phase, action: $action,
       chartName: $chart, chartVersion: $version, configDigest: $digest,
       firstDeployed: (if $action == "upgrade" and $hist[0] then $hist[0].firstDeployed else $now end),
       lastDeployed: $now} as $snap
    | ($snap + {digest: ("sha256:" + $release_digest)}) as $snap
    | .history = ([$snap] + [$hist[] | if $result == "succeeded" and .status == "deployed" then .status = "superseded" else . end])[0:($spec.maxHistory // 5 | if . == 0 then 1000 else . end)]
    | if $result == "succeeded" then
        flux_set({type: "Released", status: "True", reason: ($Action + "Succeeded"),
                  message: ("Helm " + $action + " succeeded for release " + $rlsns + "/" + $rls + ".v" + ($v | tostring) + " with chart " + $chart + "@" + $version)}; $gen; $now)
        | drop("Reconciling")
        | (.conditions | map(select(.type == "Released")) | first) as $rel
        | flux_set({type: "Ready", status: "True", reason: $rel.reason, message: $rel.message}; $gen; $now)
        | drop("Stalled")
        | .observedGeneration = $gen
      else
        (($spec[$action].remediation.retries // 0)) as $retries
        | .failures = ((.failures // 0) + 1)
        | (if $action == "install" then "installFailures" else "upgradeFailures" end) as $counter
        | .[$counter] = ((.[$counter] // 0) + 1)
        | ("Helm " + $action + " failed for release " + $rlsns + "/" + $rls + " with chart " + $chart + "@" + $version + ": " + $message) as $msg
        | flux_set({type: "Released", status: "False", reason: ($Action + "Failed"), message: $msg}; $gen; $now)
        | flux_set({type: "Ready", status: "False", reason: ($Action + "Failed"), message: $msg}; $gen; $now)
        | if $retries >= 0 and .[$counter] > $retries then
            drop("Reconciling")
            | flux_set({type: "Stalled", status: "True", reason: "RetriesExceeded",
                        message: ("Failed to " + $action + " after " + (.[$counter] | tostring) + " attempt(s)")}; $gen; $now)
            | .observedGeneration = $gen
          else
            flux_set({type: "Reconciling", status: "True", reason: "ProgressingWithRetry", message: $msg}; $gen; $now)
          end
      end
  end
| if $ann["reconcile.fluxcd.io/requestedAt"] then .lastHandledReconcileAt = $ann["reconcile.fluxcd.io/requestedAt"] else . end
'
release_digest=$(printf '%s/%s/%s/%s' "$ns" "$name" "$version" "$now" | sha256sum | cut -d' ' -f1)
# shellcheck disable=SC2046
nb_patch_status helmrelease "$ns" "$name" helm-controller "$(nb_as "$NB_FLUX_NS" "$NB_HELM_SA")" "$prog" \
  --arg ns "$ns" --arg outcome "$outcome" --arg version "$version" --arg digest "$values_digest" \
  --arg message "$message" --arg now "$now" --arg release_digest "$release_digest"
