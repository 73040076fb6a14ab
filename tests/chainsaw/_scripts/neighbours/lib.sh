# shellcheck shell=bash
# Shared by the neighbours' simulations (helm-controller.sh,
# tofu-controller.sh, cert-manager.sh; sourced): who each neighbour is, and
# how it writes a status.
#
# The local control plane runs none of Flux, tofu-controller or cert-manager,
# so the suite writes what they would write. Each write is made as the
# neighbour's own identity, impersonated the way the API server authenticates
# its ServiceAccount token (the username and the groups
# system:serviceaccounts, system:serviceaccounts:<namespace> and
# system:authenticated), with the RBAC a real install gives it (rbac.sh,
# applied by hack/e2e.sh before the suite runs): a write the real controller
# could not make fails here too, and the admission policies see the real
# caller. The layout follows the environment hack/e2e.sh sets:
#
#   FLUX_NAMESPACE          where Flux runs (default cozy-fluxcd)
#   FLUX_ALL_IN_ONE         the ServiceAccount helm-controller runs as: flux
#                           in Cozystack's all-in-one Flux (the default),
#                           helm-controller in a stock Flux
#   TOFU_NAMESPACE          where tofu-controller runs (default cozy-fluxcd;
#                           ServiceAccount tofu-controller)
#   CERT_MANAGER_NAMESPACE  where cert-manager runs (default
#                           cozy-cert-manager; ServiceAccount cert-manager)
#
# E2E_IDENTITIES=stock (hack/e2e.sh) sets them for a stock install:
# flux-system, helm-controller, flux-system, cert-manager.
set -euo pipefail

NB_FLUX_NS=${FLUX_NAMESPACE:-cozy-fluxcd}
NB_HELM_SA=${FLUX_ALL_IN_ONE:-flux}
NB_TOFU_NS=${TOFU_NAMESPACE:-cozy-fluxcd}
NB_CERT_MANAGER_NS=${CERT_MANAGER_NAMESPACE:-cozy-cert-manager}

# nb_as NAMESPACE NAME: kubectl arguments impersonating that ServiceAccount.
nb_as() {
  echo "--as=system:serviceaccount:$1:$2 --as-group=system:serviceaccounts --as-group=system:serviceaccounts:$1 --as-group=system:authenticated"
}

# nb_now: the current time as the API server serialises metav1.Time.
nb_now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# nb_die MESSAGE: the simulation cannot do what it was asked.
nb_die() { echo "neighbours: $*" >&2; exit 1; }

# nb_get KIND NAMESPACE NAME: the object as JSON, as its controller reads it.
nb_get() { kubectl -n "$2" get "$1" "$3" -o json; }

# nb_patch_status KIND NAMESPACE NAME FIELD-MANAGER AS JQ [JQ-ARGS...]: reads
# the object, computes its new status with the jq program JQ (NB_JQ's
# definitions in scope; input: the object; output: the whole new status;
# JQ-ARGS: jq's --arg and --argjson) and writes it as AS (kubectl
# arguments) with a JSON patch of the status subresource, as Flux's patch
# helper and tofu-controller patch theirs. The patch is conditional on the
# resourceVersion read, so a write that raced another is computed again
# from the object it lost to.
nb_patch_status() {
  local kind=$1 ns=$2 name=$3 manager=$4 as=$5 prog=$6 obj rv status patch out=""
  shift 6
  for _ in $(seq 1 20); do
    obj=$(nb_get "$kind" "$ns" "$name") || nb_die "$kind $ns/$name not found"
    rv=$(jq -r .metadata.resourceVersion <<<"$obj")
    status=$(jq -c "$@" "${NB_JQ} ${prog}" <<<"$obj") || nb_die "computing the status of $kind $ns/$name"
    patch=$(jq -nc --arg rv "$rv" --argjson s "$status" \
      '[{op:"test",path:"/metadata/resourceVersion",value:$rv},{op:"add",path:"/status",value:$s}]')
    # shellcheck disable=SC2086
    if out=$(kubectl -n "$ns" $as patch "$kind" "$name" --subresource=status --type=json --field-manager="$manager" -p "$patch" 2>&1); then
      return 0
    fi
    # A failed test operation is refused as an invalid request: the
    # object changed since it was read when its resourceVersion did.
    [[ "$(kubectl -n "$ns" get "$kind" "$name" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)" != "$rv" ]] ||
      { echo "$out" >&2; return 1; }
    sleep 0.2
  done
  echo "$out" >&2
  nb_die "$kind $ns/$name kept changing; its status was not written"
}

# nb_update_status KIND NAMESPACE NAME FIELD-MANAGER AS JQ [JQ-ARGS...]: the
# same computed from the object read, written as an update of the status
# subresource (cert-manager's UpdateStatus), which the API server refuses
# when the object changed meanwhile; then computed again.
nb_update_status() {
  local kind=$1 ns=$2 name=$3 manager=$4 as=$5 prog=$6 obj out=""
  shift 6
  for _ in $(seq 1 20); do
    obj=$(nb_get "$kind" "$ns" "$name") || nb_die "$kind $ns/$name not found"
    obj=$(jq -c "$@" "${NB_JQ} . as \$o | (\$o | ${prog}) as \$s | \$o | .status = \$s" <<<"$obj") || nb_die "computing the status of $kind $ns/$name"
    # shellcheck disable=SC2086
    if out=$(kubectl -n "$ns" $as replace --subresource=status --field-manager="$manager" -f - <<<"$obj" 2>&1); then
      return 0
    fi
    case "$out" in
    *Conflict*|*"the object has been modified"*) sleep 0.2 ;;
    *) echo "$out" >&2; return 1 ;;
    esac
  done
  echo "$out" >&2
  nb_die "$kind $ns/$name kept changing; its status was not written"
}

# NB_JQ: jq definitions the simulations share.
#
#   flux_set(c; gen; now)   fluxcd/pkg/runtime/conditions.Set, which Flux
#                           and tofu-controller use: the condition's
#                           observedGeneration is the object's generation,
#                           and lastTransitionTime changes only when status,
#                           reason or message does
#   cm_set(c; gen; now)     cert-manager's apiutil.SetCertificateCondition
#                           and SetIssuerCondition: observedGeneration the
#                           object's generation, lastTransitionTime kept
#                           while the status stays the same
#   drop(t)                 removes the condition of type t
# shellcheck disable=SC2016
NB_JQ='
def flux_set($c; $gen; $now):
  .conditions = ((.conditions // []) as $cs
    | if any($cs[]; .type == $c.type) then
        [$cs[] | if .type == $c.type then
           $c + {observedGeneration: $gen,
                 lastTransitionTime: (if .status == $c.status and .reason == $c.reason and .message == $c.message
                                      then .lastTransitionTime else $now end)}
         else . end]
      else $cs + [$c + {observedGeneration: $gen, lastTransitionTime: $now}] end);
def cm_set($c; $gen; $now):
  .conditions = ((.conditions // []) as $cs
    | if any($cs[]; .type == $c.type) then
        [$cs[] | if .type == $c.type then
           $c + {observedGeneration: $gen,
                 lastTransitionTime: (if .status == $c.status then .lastTransitionTime else $now end)}
         else . end]
      else $cs + [$c + {observedGeneration: $gen, lastTransitionTime: $now}] end);
def drop($t): .conditions = [(.conditions // [])[] | select(.type != $t)];
'
