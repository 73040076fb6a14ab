#!/usr/bin/env bash
# Exhaustion by a tenant holding the built-in edit ClusterRole in its
# namespace, one case per chainsaw step: quota.sh CASE. Each case first checks
# what RBAC alone allows (kubectl auth can-i), then that the default quota the
# appdef controller writes (ResourceQuota cozystack-instances) stops the
# (N+1)th instance or child tenant with Kubernetes' own quota message, and
# that the legitimate use next to it works.
#
#   t       the tenant namespace (tenant-quota-<test id>); the administrator
#           set its limits to 2 instances per kind and 1 child tenant with the
#           namespace annotations apps.cozystack.io/instance-quota and
#           apps.cozystack.io/tenant-quota
#   tenant  kubectl arguments impersonating the tenant, mallory
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-quota-${NAMESPACE#chainsaw-}
tenant=(--as=mallory --as-group=system:authenticated)
Q=cozystack-instances
K=(kubectl -n "$t" "${tenant[@]}")
admin() { kubectl -n "$t" "$@"; }

# can VERB RESOURCE: fails unless RBAC lets the tenant do it in $t.
can() {
  if [[ "$(kubectl auth can-i "$1" "$2" -n "$t" "${tenant[@]}" || true)" != yes ]]; then
    echo "RBAC does not let the tenant $1 $2: the case would prove nothing"; exit 1
  fi
  echo "RBAC alone allows the tenant to $1 $2"
}
# cannot VERB RESOURCE: fails if RBAC lets the tenant do it in $t.
cannot() {
  if [[ "$(kubectl auth can-i "$1" "$2" -n "$t" "${tenant[@]}" || true)" != no ]]; then
    echo "RBAC lets the tenant $1 $2"; exit 1
  fi
  echo "RBAC refuses the tenant to $1 $2"
}
# wait_for WHAT SECONDS CMD...: retries CMD, fails saying WHAT did not happen.
wait_for() {
  local what=$1 secs=$2; shift 2
  for _ in $(seq 1 $((secs * 2))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out after ${secs}s waiting until ${what}"; return 1
}
inst() { # inst KIND NAME: an instance manifest
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: %s\nmetadata: {name: %s}\nspec: {}\n' "$1" "$2"
}
create_inst() { inst "$1" "$2" | "${K[@]}" create -f -; }
# hard RESOURCE [FIELD]: the quota's limit (spec.hard) of RESOURCE, or of
# status.FIELD; empty when absent.
hard() { admin get resourcequota "$Q" -o json | jq -r --arg r "$1" --arg f "${2:-}" 'if $f == "" then .spec.hard[$r] else .status[$f][$r] end // ""'; }
# quota_counts RESOURCE LIMIT: the quota limits RESOURCE to LIMIT and the
# quota controller has computed its usage (only then does the API server
# enforce it).
quota_counts() {
  [[ "$(hard "$1")" == "$2" && "$(hard "$1" hard)" == "$2" && -n "$(hard "$1" used)" ]]
}
# event_says REASON TEXT: a core event of REASON carries TEXT.
event_says() {
  kubectl get events -A --field-selector "reason=$1" -o json | jq -r '.items[].message' | grep -qF "$2"
}
# refused_by_quota RESOURCE CMD...: CMD (a create) fails with Kubernetes'
# quota message naming our quota and RESOURCE.
refused_by_quota() {
  local res=$1 out; shift
  if out=$("$@" 2>&1); then echo "expected the quota to refuse: $*"; echo "${out}"; exit 1; fi
  if [[ "${out}" != *"exceeded quota: ${Q}"*"requested: ${res}=1"* ]]; then
    echo "expected Kubernetes' quota message for ${Q} on ${res}, got: ${out}"; exit 1
  fi
  echo "refused by quota ${Q}: ${out##*forbidden: }"
}

case "$1" in
default)
  # Written by the appdef controller, labelled as its own, counting every
  # served kind (each once it has been served a minute: see
  # quota.DefaultKindDelay) with the namespace's limits.
  wait_for "quota ${Q} counts e2equotaapps" 120 quota_counts count/e2equotaapps.apps.cozystack.io 2
  wait_for "quota ${Q} counts e2equotainfras" 30 quota_counts count/e2equotainfras.apps.cozystack.io 2
  wait_for "quota ${Q} counts tenants" 30 quota_counts count/tenants.apps.cozystack.io 1
  [[ "$(admin get resourcequota "$Q" -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}')" == cozystack-appdef ]]
  echo "quota ${Q}: $(admin get resourcequota "$Q" -o jsonpath='{.spec.hard}')"
  ;;
instances)
  can create e2equotaapps.apps.cozystack.io
  inst E2eQuotaApp one | "${K[@]}" create -f -
  inst E2eQuotaApp two | "${K[@]}" create -f -
  refused_by_quota count/e2equotaapps.apps.cozystack.io "${K[@]}" create -f - < <(inst E2eQuotaApp three)
  # Another kind has its own count.
  inst E2eQuotaInfra net | "${K[@]}" create -f -
  # Deleting one makes room again (the quota controller frees it).
  "${K[@]}" delete e2equotaapp one --wait=true
  wait_for "a deleted instance makes room" 60 create_inst E2eQuotaApp three
  admin get e2equotaapp three >/dev/null
  ;;
tenants)
  can create tenants.apps.cozystack.io
  inst Tenant alpha | "${K[@]}" create -f -
  refused_by_quota count/tenants.apps.cozystack.io "${K[@]}" create -f - < <(inst Tenant beta)
  ;;
tamper)
  # edit reads quotas and nothing more: the tenant can neither loosen nor
  # remove the limit, nor add a quota of its own.
  can get resourcequotas
  for verb in update patch delete create deletecollection; do cannot "$verb" resourcequotas; done
  if out=$("${K[@]}" delete resourcequota "$Q" 2>&1); then echo "the tenant deleted the quota: ${out}"; exit 1; fi
  [[ "${out}" == *forbidden* ]] || { echo "unexpected answer: ${out}"; exit 1; }
  if out=$("${K[@]}" patch resourcequota "$Q" --type=merge -p '{"spec":{"hard":{"count/e2equotaapps.apps.cozystack.io":"1000"}}}' 2>&1); then
    echo "the tenant raised the quota: ${out}"; exit 1
  fi
  [[ "${out}" == *forbidden* ]] || { echo "unexpected answer: ${out}"; exit 1; }
  # Nor can it annotate its namespace to lift the limit.
  if [[ "$(kubectl auth can-i patch namespaces "${tenant[@]}" 2>/dev/null || true)" != no ]]; then echo "RBAC lets the tenant patch namespaces"; exit 1; fi
  echo "the tenant cannot change or delete ${Q}, nor its namespace's annotations"
  ;;
restore)
  # A quota changed by someone else (an administrator's slip) is put back.
  admin patch resourcequota "$Q" --type=merge -p '{"spec":{"hard":{"count/e2equotaapps.apps.cozystack.io":"1000"}}}'
  wait_for "the appdef controller puts the limit back" 30 quota_counts count/e2equotaapps.apps.cozystack.io 2
  ;;
override)
  # The platform team lifts the instance limit of this namespace.
  kubectl annotate namespace "$t" apps.cozystack.io/instance-quota=unlimited --overwrite
  lifted() { [[ -z "$(hard count/e2equotaapps.apps.cozystack.io)" && -z "$(hard count/e2equotaapps.apps.cozystack.io hard)" ]]; }
  wait_for "the instance limits are lifted" 30 lifted
  inst E2eQuotaApp four | "${K[@]}" create -f -
  quota_counts count/tenants.apps.cozystack.io 1
  # A bad value changes nothing and is reported on the namespace.
  kubectl annotate namespace "$t" apps.cozystack.io/tenant-quota=lots --overwrite
  wait_for "an InvalidInstanceQuotaAnnotation event" 30 event_says InvalidInstanceQuotaAnnotation 'apps.cozystack.io/tenant-quota="lots"' 
  quota_counts count/tenants.apps.cozystack.io 1
  ;;
foreign)
  # A quota of that name the controller did not create is never written.
  # The namespace starts with every limit lifted (the controller writes
  # nothing), gets someone else's quota, then the limits back.
  f=$t-x
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  annotations: {apps.cozystack.io/instance-quota: unlimited, apps.cozystack.io/tenant-quota: unlimited}\n' "$f" |
    kubectl create -f -
  kubectl -n "$f" create quota "$Q" --hard=pods=7
  kubectl annotate namespace "$f" apps.cozystack.io/instance-quota- apps.cozystack.io/tenant-quota-
  wait_for "an InstanceQuotaNotOwned event" 30 event_says InstanceQuotaNotOwned "$f/$Q exists but was not created"
  [[ "$(kubectl -n "$f" get resourcequota "$Q" -o jsonpath='{.spec.hard}')" == '{"pods":"7"}' ]]
  kubectl delete namespace "$f" --wait=false
  ;;
runner)
  # The runner Pods of the tenant's Terraform objects are capped in the
  # platform namespace the terraform controller created for it, and
  # accounted to the tenant namespace it names.
  p=cozy-tf-$t
  wait_for "ResourceQuota cozystack-runner-pods in ${p}" 60 kubectl -n "$p" get resourcequota cozystack-runner-pods
  [[ "$(kubectl -n "$p" get resourcequota cozystack-runner-pods -o jsonpath='{.spec.hard.pods}')" == 10 ]]
  [[ "$(kubectl -n "$p" get resourcequota cozystack-runner-pods -o jsonpath='{.metadata.labels.app\.kubernetes\.io/managed-by}')" == cozystack-terraform ]]
  [[ "$(kubectl get namespace "$p" -o jsonpath='{.metadata.labels.apps\.cozystack\.io/tenant-namespace}')" == "$t" ]]
  # The tenant holds no right there.
  if [[ "$(kubectl auth can-i delete resourcequotas -n "$p" "${tenant[@]}" || true)" != no ]]; then echo "the tenant may delete the runner quota"; exit 1; fi
  echo "runner Pods of ${t} capped in ${p}: $(kubectl -n "$p" get resourcequota cozystack-runner-pods -o jsonpath='{.spec.hard}')"
  ;;
identity)
  # RBAC lets the appdef and terraform controllers write ResourceQuotas in
  # every namespace; cozyplane-quota-identity-policy keeps each to its own.
  a=../../_scripts/admission.sh
  P=cozyplane-quota-identity-policy
  appdef=(--as=system:serviceaccount:cozy-system:cozystack-appdef --as-group=system:serviceaccounts --as-group=system:serviceaccounts:cozy-system --as-group=system:authenticated)
  tf=(--as=system:serviceaccount:cozy-system:cozystack-terraform --as-group=system:serviceaccounts --as-group=system:serviceaccounts:cozy-system --as-group=system:authenticated)
  [[ "$(kubectl auth can-i create resourcequotas -n kube-system "${appdef[@]}")" == yes ]] || { echo "RBAC does not let appdef create quotas: nothing to prove"; exit 1; }
  [[ "$(kubectl auth can-i create resourcequotas -n kube-system "${tf[@]}")" == yes ]] || { echo "RBAC does not let terraform create quotas: nothing to prove"; exit 1; }
  echo "RBAC alone lets both controllers create ResourceQuotas in kube-system"
  rq() { printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {app.kubernetes.io/managed-by: %s}\nspec:\n  hard: {pods: "1"}\n' "$@"; }
  rq cozystack-instances kube-system cozystack-appdef | $a deny $P "writes only its own ResourceQuota cozystack-instances" -- \
    kubectl "${appdef[@]}" create --dry-run=server -f -
  admin create quota admin-extra --hard=count/secrets=50
  $a deny $P "writes only its own ResourceQuota cozystack-instances" -- kubectl -n "$t" "${appdef[@]}" delete --dry-run=server resourcequota admin-extra
  $a deny $P "writes only its own ResourceQuota cozystack-instances" -- \
    kubectl -n "$t" "${appdef[@]}" label --dry-run=server resourcequota admin-extra app.kubernetes.io/managed-by=cozystack-appdef
  rq cozystack-instances "$t" cozystack-appdef | $a allow -- kubectl "${appdef[@]}" apply --server-side --field-manager=cozystack-appdef --dry-run=server -f -
  # The status: only of its own quota (cozyplane-quota-status-identity-policy).
  [[ "$(kubectl auth can-i patch resourcequotas/status -n kube-system "${appdef[@]}")" == yes ]] || { echo "RBAC does not let appdef write quota status: nothing to prove"; exit 1; }
  # kubectl reads the status before it patches it, which appdef's role does
  # not grant (patch only): a group of this namespace may read it, nothing more.
  admin create role e2e-quota-status-reader --verb=get --resource=resourcequotas/status
  admin create rolebinding e2e-quota-status-reader --role=e2e-quota-status-reader --group=e2e-quota-status-readers
  reader=("${appdef[@]}" --as-group=e2e-quota-status-readers)
  $a deny cozyplane-quota-status-identity-policy "writes the status only of its own ResourceQuota cozystack-instances" -- \
    kubectl -n "$t" "${reader[@]}" patch --dry-run=server --subresource=status resourcequota admin-extra --type=merge \
    -p '{"status":{"used":{"count/secrets":"0"}}}'
  $a allow -- kubectl -n "$t" "${reader[@]}" patch --dry-run=server --subresource=status resourcequota "$Q" --type=merge \
    -p '{"status":{"used":{"count/e2equotaapps.apps.cozystack.io":"0"}}}'
  rq cozystack-runner-pods "$t" cozystack-terraform | $a deny $P "only creates its ResourceQuota cozystack-runner-pods" -- \
    kubectl "${tf[@]}" create --dry-run=server -f -
  rq cozystack-runner-pods kube-system cozystack-terraform | $a deny $P "only creates its ResourceQuota cozystack-runner-pods" -- \
    kubectl "${tf[@]}" create --dry-run=server -f -
  y=cozy-tf-$t-y
  kubectl create namespace "$y"
  kubectl label namespace "$y" apps.cozystack.io/platform-namespace=Terraform apps.cozystack.io/tenant-namespace="$t-y"
  rq cozystack-runner-pods "$y" cozystack-terraform | $a allow -- kubectl "${tf[@]}" create --dry-run=server -f -
  kubectl delete namespace "$y" --wait=false
  ;;
*)
  echo "unknown case $1"; exit 2 ;;
esac
