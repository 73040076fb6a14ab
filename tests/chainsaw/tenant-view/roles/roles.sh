#!/usr/bin/env bash
# What Cozystack's tenant roles let a tenant do with kinds defined after the
# switch, one case per chainsaw step: roles.sh CASE. The tenant namespace is
# bound to cozy:tenant:view, :use, :admin and :super-admin as upstream's
# tenant chart binds them (packages/apps/tenant/templates/tenant.yaml: one
# RoleBinding per level, each naming the groups <tenant>-<level> of that level
# and above, of the tenant and of tenant-root, and their ServiceAccounts; the
# RoleBinding cozy:tenant names the ServiceAccounts). One user per level:
#
#   vera  <t>-view         reads
#   uma   <t>-use          reads (upstream's use writes no instance)
#   ada   <t>-admin        reads, creates, changes, deletes, approves plans
#   sam   <t>-super-admin  "*" on apps.cozystack.io, status included by RBAC
#   system:serviceaccount:<t>:<t>  cozy:tenant, "*" as well
#
#   t  the tenant namespace (tenant-tv-<test id>); its Terraform objects live in cozy-tf-<t>
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-tv-${NAMESPACE#chainsaw-}
p=cozy-tf-$t
a=../../_scripts/admission.sh
S=cozyplane-instance-status-policy
P=cozyplane-appdef-clusterrole-policy
sa=system:serviceaccount:$t:$t

# as LEVEL: kubectl arguments impersonating the user of that level.
as() {
  case $1 in
  view) echo "--as=vera --as-group=$t-view --as-group=system:authenticated" ;;
  use) echo "--as=uma --as-group=$t-use --as-group=system:authenticated" ;;
  admin) echo "--as=ada --as-group=$t-admin --as-group=system:authenticated" ;;
  super-admin) echo "--as=sam --as-group=$t-super-admin --as-group=system:authenticated" ;;
  sa) echo "--as=$sa --as-group=system:serviceaccounts --as-group=system:serviceaccounts:$t --as-group=system:authenticated" ;;
  esac
}
# can LEVEL EXPECT VERB RESOURCE [SUBRESOURCE]: RBAC's answer for that level in $t.
can() {
  local sub=() got
  [[ $# -gt 4 ]] && sub=(--subresource="$5")
  # shellcheck disable=SC2046
  got=$(kubectl auth can-i "$3" "$4" "${sub[@]}" -n "$t" $(as "$1") || true)
  [[ "${got}" == "$2" ]] || { echo "RBAC: $1 may $3 $4 ${5:-}: ${got}, want $2"; exit 1; }
  echo "RBAC: $1 may $3 $4 ${5:-}: $2"
}
# forbidden LEVEL ARGS...: kubectl ARGS as LEVEL in $t is refused by RBAC.
forbidden() {
  local level=$1 out; shift
  # shellcheck disable=SC2046
  if out=$(kubectl -n "$t" $(as "${level}") "$@" 2>&1); then echo "expected RBAC to refuse $level: kubectl $*"; echo "${out}"; exit 1; fi
  [[ "${out}" == *"forbidden"* ]] || { echo "expected a refusal by RBAC for $level: kubectl $*: ${out}"; exit 1; }
  echo "forbidden for $level: kubectl $*"
}
# K LEVEL: kubectl as LEVEL in $t (for admission.sh, which runs it).
K() {
  # shellcheck disable=SC2046
  echo kubectl -n "$t" $(as "$1")
}
# wait_for WHAT CMD...: retries CMD for 30 s, fails saying WHAT did not happen.
wait_for() {
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
# kubeconfig LEVEL: a kubeconfig acting as that level (impersonation in the
# user entry), for cozyplane, which takes no --as.
kubeconfig() {
  local f="${TMPDIR:-/tmp}/tv-$1-$$.kubeconfig" user groups
  case $1 in
  use) user=uma groups="[\"$t-use\",\"system:authenticated\"]" ;;
  admin) user=ada groups="[\"$t-admin\",\"system:authenticated\"]" ;;
  esac
  kubectl config view --raw --flatten -o json |
    jq --arg u "${user}" --argjson g "${groups}" '.users[].user.as = $u | .users[].user["as-groups"] = $g' >"$f"
  echo "$f"
}
ready() { # ready KIND NAME: the instance's Ready status
  kubectl -n "$t" get "$1" "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
}

case "$1" in
tenant)
  kubectl create namespace "$t"
  kubectl label namespace "$t" namespace.cozystack.io/host=tv.example.org
  kubectl -n "$t" create serviceaccount "$t"
  # One RoleBinding per level, as upstream's tenant chart writes them.
  above() { case $1 in view) echo view use admin super-admin ;; use) echo use admin super-admin ;; admin) echo admin super-admin ;; super-admin) echo super-admin ;; esac; }
  for level in view use admin super-admin; do
    {
      printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: "cozy:tenant:%s"}\n' "$level"
      printf 'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "cozy:tenant:%s"}\nsubjects:\n' "$level"
      for tenant in "$t" tenant-root; do
        printf -- '- {kind: ServiceAccount, name: %s, namespace: %s}\n' "$tenant" "$tenant"
        for l in $(above "$level"); do printf -- '- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: %s-%s}\n' "$tenant" "$l"; done
      done
    } | kubectl -n "$t" apply -f -
  done
  printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: "cozy:tenant"}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "cozy:tenant"}\nsubjects:\n- {kind: ServiceAccount, name: tenant-root, namespace: tenant-root}\n- {kind: ServiceAccount, name: %s, namespace: %s}\n' "$t" "$t" \
    | kubectl -n "$t" apply -f -
  # kube-controller-manager aggregates the kinds' tenant roles into cozy:tenant:view and :admin
  # (and through them into use and super-admin).
  aggregated() {
    # shellcheck disable=SC2046
    [[ "$(kubectl auth can-i create e2etvapps.apps.cozystack.io -n "$t" $(as admin))" == yes &&
       "$(kubectl auth can-i create e2etvinfras.apps.cozystack.io -n "$t" $(as admin))" == yes ]]
  }
  wait_for "cozy:tenant:admin covers the new kinds" aggregated
  ;;
levels)
  # Upstream's own admin role names its kinds one by one: the new kinds are in
  # cozy:tenant:admin only through the roles the appdef controller publishes.
  kubectl get clusterrole cozy:tenant:admin:base -o json | jq -e '[.rules[].resources[]] | index("e2etvapps") == null' >/dev/null
  kubectl get clusterrole cozy:tenant:admin -o json | jq -e '[.rules[] | select(.resources | index("e2etvapps")) | .verbs[]] | index("create") != null' >/dev/null
  echo "cozy:tenant:admin grants create on e2etvapps through cozystack:app:e2etvapps:tenant-admin"
  for r in e2etvapps.apps.cozystack.io e2etvinfras.apps.cozystack.io; do
    for level in view use admin super-admin sa; do
      can "$level" yes get "$r"; can "$level" yes list "$r"; can "$level" yes watch "$r"
    done
    for level in view use; do
      for verb in create update patch delete deletecollection; do can "$level" no "$verb" "$r"; done
      can "$level" no patch "$r" status
    done
    for verb in create update patch delete; do can admin yes "$verb" "$r"; done
    # as upstream's admin: no deletecollection, no status
    can admin no deletecollection "$r"
    can admin no patch "$r" status
    can admin no update "$r" status
    # "*": RBAC alone lets super-admin and the tenant ServiceAccounts write status (the status case refuses it)
    for level in super-admin sa; do
      for verb in create update patch delete deletecollection; do can "$level" yes "$verb" "$r"; done
      can "$level" yes patch "$r" status
      can "$level" yes update "$r" status
    done
  done
  ;;
create)
  # read and use levels cannot create; admin can, and reads what it created
  for level in view use; do
    printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: E2eTvApp\nmetadata: {name: theirs}\nspec: {}\n' | forbidden "$level" create -f -
  done
  # shellcheck disable=SC2046
  $a allow -- $(K admin) create -f - <<<'{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"E2eTvApp","metadata":{"name":"web"},"spec":{}}'
  # shellcheck disable=SC2046
  $a allow -- $(K admin) create -f - <<<'{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"E2eTvInfra","metadata":{"name":"net"},"spec":{}}'
  kubectl -n "$t" wait --for=create helmrelease/tv-web --timeout=30s
  wait_for "the Terraform object of net exists" kubectl -n "$p" get terraform tvinfra-net
  # every level reads the instances and the status the backends wrote
  named() { [[ "$(kubectl -n "$t" get e2etvapp web -o jsonpath='{.status.backend.name}')" == tv-web ]]; }
  wait_for "the helm backend names tv-web in web's status" named
  for level in view use admin super-admin; do
    # shellcheck disable=SC2046
    [[ "$(kubectl -n "$t" $(as "$level") get e2etvapp web -o jsonpath='{.status.backend.name}')" == tv-web ]] ||
      { echo "$level does not read the status the helm backend wrote"; exit 1; }
    # shellcheck disable=SC2046
    kubectl -n "$t" $(as "$level") get e2etvinfras >/dev/null
  done
  echo "every level reads web, whose status names its HelmRelease tv-web"
  # admin changes its instance
  # shellcheck disable=SC2046
  $a allow -- $(K admin) patch e2etvapp web --type=merge -p '{"spec":{"replicas":2}}'
  for level in view use; do forbidden "$level" patch e2etvapp web --type=merge -p '{"spec":{"replicas":5}}'; done
  changed() { [[ "$(kubectl -n "$t" get helmrelease tv-web -o jsonpath='{.spec.values.replicas}')" == 2 ]]; }
  wait_for "admin's change reaches the HelmRelease" changed
  ;;
approve)
  # tofu-controller (../../_scripts/neighbours) plans with changes: the plan waits for approval.
  ../../_scripts/neighbours/tofu-controller.sh planned "$p" tvinfra-net main@sha1:6e1fb1aea8b7
  pending() { [[ "$(kubectl -n "$t" get e2etvinfra net -o jsonpath='{.status.backend.pendingPlan}')" == plan-main-6e1fb1aea8 ]]; }
  wait_for "the terraform backend shows the pending plan on the instance" pending
  # view and use see the pending plan and cannot approve it: approving is an
  # update of the instance, which upstream grants from admin up
  for level in view use; do
    # shellcheck disable=SC2046
    [[ "$(kubectl -n "$t" $(as "$level") get e2etvinfra net -o jsonpath='{.status.backend.pendingPlan}')" == plan-main-6e1fb1aea8 ]]
    forbidden "$level" annotate --overwrite e2etvinfra net apps.cozystack.io/approve-plan=plan-main-6e1fb1aea8
  done
  use=$(kubeconfig use)
  if out=$(KUBECONFIG="${use}" cozyplane approve e2etvinfra/net -n "$t" --timeout 10s 2>&1); then echo "use approved: ${out}"; exit 1; fi
  [[ "${out}" == *"forbidden"* ]] || { echo "cozyplane approve as use failed for another reason: ${out}"; exit 1; }
  echo "cozyplane approve as use is refused: ${out}"
  [[ -z "$(kubectl -n "$p" get terraform tvinfra-net -o jsonpath='{.spec.approvePlan}')" ]] || { echo "a refused approval reached spec.approvePlan"; exit 1; }
  # admin approves with cozyplane approve
  admin=$(kubeconfig admin)
  KUBECONFIG="${admin}" cozyplane approve e2etvinfra/net -n "$t" --timeout 30s
  [[ "$(kubectl -n "$p" get terraform tvinfra-net -o jsonpath='{.spec.approvePlan}')" == plan-main-6e1fb1aea8 ]] || { echo "the approval did not reach spec.approvePlan"; exit 1; }
  echo "admin approved plan-main-6e1fb1aea8; the terraform backend forwarded it"
  rm -f "${use}" "${admin}"
  ;;
status)
  forged='{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Forged","message":"forged","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}'
  [[ "$(ready e2etvapp web)" != True ]] || { echo "web is Ready before Flux reported anything: the check would prove nothing"; exit 1; }
  for level in super-admin sa; do
    for r in e2etvapp/web e2etvinfra/net; do
      kind=E2eTvApp; [[ $r == e2etvinfra/* ]] && kind=E2eTvInfra
      # shellcheck disable=SC2046
      $a deny $S "the status of $kind $t/${r#*/} is written only by its backend controller" -- \
        $(K "$level") patch "$r" --subresource=status --type=merge -p "$forged"
      # the same as a PUT of the whole status
      # shellcheck disable=SC2046
      kubectl -n "$t" get "$r" -o json | jq '.status.conditions = [{"type":"Ready","status":"True","reason":"Forged","message":"forged","lastTransitionTime":"2026-01-01T00:00:00Z"}]' \
        | $a deny $S "of its status by" -- $(K "$level") replace --subresource=status -f -
    done
  done
  # admin and below: RBAC already refuses
  for level in view use admin; do forbidden "$level" patch e2etvapp web --subresource=status --type=merge -p "$forged"; done
  [[ "$(ready e2etvapp web)" != True ]] || { echo "a forged Ready was stored"; exit 1; }
  [[ "$(kubectl -n "$t" get e2etvapp web -o jsonpath='{.status.conditions[?(@.reason=="Forged")].reason}')" == "" ]] || { echo "a forged condition was stored"; exit 1; }
  # the backend still writes status: Flux reports the release ready, the helm backend makes web Ready
  ../../_scripts/neighbours/helm-controller.sh install-succeeded "$t" tv-web 1.0.0
  isReady() { [[ "$(ready e2etvapp web)" == True ]]; }
  wait_for "the helm backend writes web Ready" isReady
  echo "the helm backend wrote web's status: Ready=True"
  # and an administrator may, as for every policy
  $a allow -- kubectl -n "$t" patch e2etvapp web --subresource=status --type=merge -p '{"status":{"version":"1.0.0"}}' --dry-run=server
  ;;
delete)
  for level in view use; do forbidden "$level" delete e2etvapp web; done
  # a delete-collection (kubectl delete --all lists, then deletes one by one)
  forbidden admin delete --raw "/apis/apps.cozystack.io/v1alpha1/namespaces/$t/e2etvapps"
  kubectl -n "$t" get e2etvapp web >/dev/null
  # shellcheck disable=SC2046
  $a allow -- $(K admin) delete e2etvapp web --wait=true --timeout=60s
  # shellcheck disable=SC2046
  $a allow -- $(K admin) delete e2etvinfra net --wait=true --timeout=60s
  ;;
appdef-labels)
  # The appdef controller's identity aggregates its roles only into the five
  # roles it serves, and a view level only reads.
  A=system:serviceaccount:cozy-system:cozystack-appdef
  role() { # role NAME LABEL VERBS: a ClusterRole on e2eprobes with one aggregation label
    printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: "%s"\n  labels: {"%s": "true"}\nrules:\n- apiGroups: [apps.cozystack.io]\n  resources: [e2eprobes]\n  verbs: [%s]\n' "$1" "$2" "$3"
  }
  role cozystack:app:e2eprobes:tenant-admin rbac.cozystack.io/aggregate-to-tenant-admin "get, list, watch, create, update, patch, delete" \
    | $a allow -- kubectl --as="$A" create --dry-run=server -f -
  role cozystack:app:e2eprobes:tenant-view rbac.cozystack.io/aggregate-to-tenant-view "get, list, watch" \
    | $a allow -- kubectl --as="$A" create --dry-run=server -f -
  # the tenant ServiceAccounts' role, and levels the two reach anyway
  for label in rbac.cozystack.io/aggregate-to-tenant rbac.cozystack.io/aggregate-to-tenant-super-admin rbac.authorization.k8s.io/aggregate-to-cluster-reader; do
    role cozystack:app:e2eprobes:tenant-admin "$label" "get" \
      | $a deny $P "aggregates its ClusterRoles only into the built-in view, edit and admin roles and into cozy:tenant:view and cozy:tenant:admin; ClusterRole cozystack:app:e2eprobes:tenant-admin has the label $label" \
        -- kubectl --as="$A" create --dry-run=server -f -
  done
  # a view level that writes
  for label in rbac.cozystack.io/aggregate-to-tenant-view rbac.authorization.k8s.io/aggregate-to-view; do
    role cozystack:app:e2eprobes:tenant-view "$label" "get, create" \
      | $a deny $P "grants only get, list and watch to the view levels; ClusterRole cozystack:app:e2eprobes:tenant-view is labelled $label and grants more" \
        -- kubectl --as="$A" create --dry-run=server -f -
  done
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
