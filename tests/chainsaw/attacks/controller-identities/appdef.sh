#!/usr/bin/env bash
# The limits of the appdef controller's identity on admission policies and
# ClusterRoles, checked as that identity: what RBAC grants (a
# SubjectAccessReview through kubectl auth can-i), then server-side dry-runs
# impersonating it. The API server runs no admission policy on writes of
# admission policies, so RBAC alone keeps appdef to its one policy
# (cozyplane-appdef-instance-keys); its ClusterRoles are narrowed by the
# appdef identity policy. appdef.sh CASE.
set -euo pipefail
cd "$(dirname "$0")"
a=../../_scripts/admission.sh
A=system:serviceaccount:cozy-system:cozystack-appdef
K=cozyplane-appdef-instance-keys
# can EXPECT VERB RESOURCE: a SubjectAccessReview for appdef
can() {
  local got
  got=$(kubectl auth can-i "$2" "$3" --as="$A" || true)
  [[ "${got}" == "$1" ]] || { echo "RBAC: appdef may $2 $3: ${got}, want $1"; exit 1; }
  echo "RBAC: appdef may $2 $3: $1"
}
# forbidden ARGS...: kubectl ARGS as appdef is refused by RBAC
forbidden() {
  local out
  if out=$(kubectl --as="$A" "$@" 2>&1); then echo "expected RBAC to refuse: kubectl $*"; echo "${out}"; exit 1; fi
  [[ "${out}" == *"forbidden"* ]] || { echo "expected a refusal by RBAC: kubectl $*: ${out}"; exit 1; }
  echo "forbidden: kubectl $*"
}
case "$1" in
policies)
  # its own policy: read and patched, never created, deleted or rebound
  can yes patch validatingadmissionpolicies.admissionregistration.k8s.io/$K
  can yes get validatingadmissionpolicybindings.admissionregistration.k8s.io/$K
  can no delete validatingadmissionpolicies.admissionregistration.k8s.io/$K
  can no patch validatingadmissionpolicybindings.admissionregistration.k8s.io/$K
  can no delete validatingadmissionpolicybindings.admissionregistration.k8s.io/$K
  can no create validatingadmissionpolicies.admissionregistration.k8s.io
  can no create validatingadmissionpolicybindings.admissionregistration.k8s.io
  # nobody else's: the hostname layers and the identity policy itself
  for p in cozyplane-gateway-hostname-policy cozyplane-route-hostname-policy cozyplane-namespace-host-label-policy cozyplane-appdef-identity-policy; do
    can no delete validatingadmissionpolicies.admissionregistration.k8s.io/$p
    can no patch validatingadmissionpolicies.admissionregistration.k8s.io/$p
    can no delete validatingadmissionpolicybindings.admissionregistration.k8s.io/$p
  done
  can no create validatingwebhookconfigurations.admissionregistration.k8s.io
  can no create mutatingwebhookconfigurations.admissionregistration.k8s.io
  # the same, as requests
  $a allow -- kubectl --as="$A" patch validatingadmissionpolicy $K --type=merge -p '{"metadata":{"annotations":{"e2e":"x"}}}' --dry-run=server
  forbidden delete validatingadmissionpolicy cozyplane-gateway-hostname-policy --dry-run=server
  forbidden delete validatingadmissionpolicybinding cozyplane-route-hostname-policy --dry-run=server
  forbidden patch validatingadmissionpolicy cozyplane-namespace-host-label-policy --type=merge -p '{"spec":{"failurePolicy":"Ignore"}}' --dry-run=server
  forbidden delete validatingadmissionpolicy $K --dry-run=server
  forbidden patch validatingadmissionpolicybinding $K --type=merge -p '{"spec":{"matchResources":null}}' --dry-run=server
  printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: e2e-evil}\nspec: {policyName: %s, validationActions: [Deny]}\n' $K \
    | forbidden create --dry-run=server -f -
  ;;
clusterroles)
  # ClusterRoles named for each kind: RBAC must grant every name, the policy narrows it
  P=cozyplane-appdef-clusterrole-policy
  role() { # role NAME GROUP RESOURCE: a ClusterRole with one rule
    printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "%s"}\nrules:\n- apiGroups: ["%s"]\n  resources: [%s]\n  verbs: [get, list, watch]\n' "$1" "$2" "$3"
  }
  can yes create clusterroles.rbac.authorization.k8s.io
  can yes delete clusterroles.rbac.authorization.k8s.io
  can no escalate clusterroles.rbac.authorization.k8s.io
  can no bind clusterroles.rbac.authorization.k8s.io
  can no create clusterrolebindings.rbac.authorization.k8s.io
  can no create rolebindings.rbac.authorization.k8s.io
  role cozystack:app:e2eprobes:view apps.cozystack.io e2eprobes | $a allow -- kubectl --as="$A" create --dry-run=server -f -
  role e2e-evil apps.cozystack.io e2eprobes \
    | $a deny $P "writes only ClusterRoles named cozystack:app:<plural>:<level>; CREATE of ClusterRole e2e-evil is refused" -- kubectl --as="$A" create --dry-run=server -f -
  # a verb it holds, on another group: RBAC's escalation check lets it through, the policy does not
  role cozystack:app:e2eprobes:edit apiextensions.k8s.io customresourcedefinitions \
    | $a deny $P "grants only access to apps.cozystack.io resources" -- kubectl --as="$A" create --dry-run=server -f -
  $a deny $P "DELETE of ClusterRole admin is refused" -- kubectl --as="$A" delete clusterrole admin --dry-run=server
  # a role whose rules it holds, not named for a kind: only the policy stands in the way
  T=e2e-appdef-target-${NAMESPACE#chainsaw-}
  trap 'kubectl delete clusterrole "$T" --ignore-not-found >/dev/null' EXIT
  role "$T" apps.cozystack.io e2eprobes | kubectl create -f - >/dev/null
  $a deny $P "UPDATE of ClusterRole $T is refused" -- \
    kubectl --as="$A" patch clusterrole "$T" --type=merge -p '{"metadata":{"labels":{"e2e":"x"}}}' --dry-run=server
  $a deny $P "DELETE of ClusterRole $T is refused" -- kubectl --as="$A" delete clusterrole "$T" --dry-run=server
  # edit holds rules appdef does not: RBAC's escalation check refuses it first
  forbidden patch clusterrole edit --type=merge -p '{"metadata":{"labels":{"e2e":"x"}}}' --dry-run=server
  # what it does not hold, RBAC refuses outright
  role cozystack:app:e2eprobes:admin "" secrets | forbidden create --dry-run=server -f -
  printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "cozystack:app:e2eprobes:view"}\naggregationRule:\n  clusterRoleSelectors: [{matchLabels: {rbac.authorization.k8s.io/aggregate-to-admin: "true"}}]\n' \
    | forbidden create --dry-run=server -f -
  # an administrator is not this policy's business
  role e2e-admin-made apps.cozystack.io e2eprobes | $a allow -- kubectl create --dry-run=server -f -
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
