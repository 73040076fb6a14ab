#!/usr/bin/env bash
# Where a HelmRelease's chart and values come from, one case per chainsaw
# step: values.sh CASE. The tenant's cases first check that RBAC alone would
# let it act (kubectl auth can-i), so the refusal that follows is the
# admission policy's; each refusal is checked for who refused it and for a
# message saying what to do instead, next to the legitimate action.
#
#   t       the tenant namespace (tenant-val-<test id>), apex val.example.org
#   tenant  kubectl arguments impersonating the tenant, mallory
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-val-${NAMESPACE#chainsaw-}
tenant=(--as=mallory --as-group=system:authenticated)
a=../../_scripts/admission.sh
V=cozyplane-values-secret-policy
KEYS=cozyplane-appdef-instance-keys
K=(kubectl -n "$t" "${tenant[@]}")
admin() { kubectl -n "$t" "$@"; }

can() { # can VERB RESOURCE: fails unless RBAC lets the tenant do it in $t.
  if [[ "$(kubectl auth can-i "$1" "$2" -n "$t" "${tenant[@]}" || true)" != yes ]]; then
    echo "RBAC does not let the tenant $1 $2: the attack would prove nothing"; exit 1
  fi
  echo "RBAC alone allows the tenant to $1 $2"
}
wait_for() { # wait_for WHAT CMD...: retries CMD for 60 s, fails saying WHAT did not happen.
  local what=$1; shift
  for _ in $(seq 1 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "timed out waiting until ${what}"; return 1
}
# invalid TEXT -- CMD...: CMD is refused by the API server's validation of the
# object (the CRD's rules), with TEXT in the message.
invalid() {
  local text=$1; shift 2
  local out rc
  out=$("$@" 2>&1) && rc=0 || rc=$?
  if [[ ${rc} -eq 0 ]]; then echo "expected the CRD to refuse: $*"; echo "${out}"; exit 1; fi
  if [[ "${out}" != *"is invalid"*"${text}"* ]]; then echo "expected a CRD refusal saying \"${text}\", got: ${out}"; exit 1; fi
  echo "refused by the CRD: ${text}"
}
def() { # def NAME BACKEND-YAML: an ApplicationDefinition manifest
  printf 'apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: %s}\nspec:\n  application: {kind: E2eValX, plural: e2evalxs, singular: e2evalx, openAPISchema: "{}"}\n%s\n' "$1" "$2"
}
inst() { # inst KIND NAME SPEC: an instance manifest
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: %s\nmetadata: {name: %s}\nspec: %s\n' "$1" "$2" "$3"
}
ready() { # ready KIND NAME: "<status> <reason>: <message>" of the instance's Ready
  admin get "$1" "$2" -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.reason}: {.message}{end}'
}
CRD=applicationdefinitions.cozystack.io
# The definition CRD as the cluster serves it, saved before its rules are taken out.
SAVED=${TMPDIR:-/tmp}/values-sources-crd-${NAMESPACE}.json
restore_crd() { # restore_crd: the saved CRD's spec back on the live one (nothing saved: nothing to do)
  [[ -s "${SAVED}" ]] || return 0
  kubectl get crd "$CRD" -o json | jq --slurpfile s "${SAVED}" '.spec = $s[0].spec' | kubectl replace -f - >/dev/null
  echo "CRD $CRD restored"
}

case "$1" in
setup)
  kubectl create namespace "$t"
  kubectl label namespace "$t" namespace.cozystack.io/host=val.example.org
  admin create secret generic cozystack-values --from-literal=values.yaml='_namespace: {host: val.example.org}'
  # the platform's further values object, written by the administrator (or the platform's charts)
  admin create configmap cozystack-values-defaults --from-literal=values.yaml='monitoring: {enabled: true}'
  admin create rolebinding mallory-edit --clusterrole=edit --user=mallory
  # edit holds the kinds once the aggregation controller copied their roles
  for kind in e2evalapps e2evalfrees; do
    wait_for "edit covers ${kind}" test "$(kubectl auth can-i create "${kind}.apps.cozystack.io" -n "$t" "${tenant[@]}")" = yes
  done
  inst E2eValApp web '{}' | "${K[@]}" create -f -
  wait_for "HelmRelease val-web is created" admin get helmrelease val-web
  ;;
definition-sources)
  def e2e-val-cm '  backend: {type: Helm, helm: {chartRef: {kind: OCIRepository, name: c, namespace: cozy-system}, valuesFrom: [{kind: Secret, name: cozystack-values}, {kind: ConfigMap, name: platform-defaults}]}}' \
    | invalid "spec.backend.helm.valuesFrom[1]: Invalid value: valuesFrom names ConfigMap platform-defaults, which a tenant can create in its namespace and which, merged after cozystack-values, would override the platform values (_namespace, _cluster). Name only Secrets or ConfigMaps called cozystack-values or cozystack-values-<suffix>" -- \
      kubectl create --dry-run=server -f -
  def e2e-val-secret '  backend: {type: Helm, helm: {chartRef: {kind: OCIRepository, name: c, namespace: cozy-system}, valuesFrom: [{kind: Secret, name: my-values}]}}' \
    | invalid "valuesFrom names Secret my-values" -- kubectl create --dry-run=server -f -
  # a look-alike of the reserved names is not one
  def e2e-val-alike '  backend: {type: Helm, helm: {chartRef: {kind: OCIRepository, name: c, namespace: cozy-system}, valuesFrom: [{kind: Secret, name: cozystack-valuesx}]}}' \
    | invalid "valuesFrom names Secret cozystack-valuesx" -- kubectl create --dry-run=server -f -
  def e2e-val-nons '  backend: {type: Helm, helm: {chartRef: {kind: OCIRepository, name: c}}}' \
    | invalid "spec.backend.helm.chartRef: Invalid value: chartRef OCIRepository c names no namespace, so it resolves in each HelmRelease namespace, the tenant one: a tenant could supply the chart helm-controller installs. Set chartRef.namespace to the platform namespace holding the source, such as cozy-system" -- \
      kubectl create --dry-run=server -f -
  def e2e-val-tenantns '  backend: {type: Helm, helm: {chartRef: {kind: OCIRepository, name: c, namespace: tenant-root}}}' \
    | invalid "chartRef OCIRepository c is in the tenant namespace tenant-root" -- kubectl create --dry-run=server -f -
  # upstream's legacy form is held to the same rule
  def e2e-val-legacy '  release: {chartRef: {kind: ExternalArtifact, name: c}}' \
    | invalid "spec.release.chartRef: Invalid value: chartRef ExternalArtifact c names no namespace" -- kubectl create --dry-run=server -f -
  def e2e-val-tf '  backend: {type: Terraform, terraform: {sourceRef: {kind: OCIRepository, name: m, namespace: tenant-root}}}' \
    | invalid "sourceRef.namespace tenant-root is a tenant namespace: a tenant could supply the module tofu-controller runs" -- kubectl create --dry-run=server -f -
  # changing a stored definition to such a source is refused too
  invalid "valuesFrom names ConfigMap platform-defaults" -- kubectl patch applicationdefinition e2e-val-app --type=json \
    -p '[{"op":"add","path":"/spec/backend/helm/valuesFrom/-","value":{"kind":"ConfigMap","name":"platform-defaults"}}]'
  # the legitimate forms: platform values objects, a chart in cozy-system, a module in the platform namespace
  def e2e-val-ok '  backend: {type: Helm, helm: {chartRef: {kind: OCIRepository, name: c, namespace: cozy-system}, valuesFrom: [{kind: Secret, name: cozystack-values}, {kind: ConfigMap, name: cozystack-values-defaults}, {kind: Secret, name: cozystack-values-db}]}}' \
    | kubectl create --dry-run=server -f -
  def e2e-val-legacy-ok '  release: {chartRef: {kind: ExternalArtifact, name: c, namespace: cozy-system}}' | kubectl create --dry-run=server -f -
  def e2e-val-tf-ok '  backend: {type: Terraform, terraform: {sourceRef: {kind: OCIRepository, name: m}}}' | kubectl create --dry-run=server -f -
  ;;
tenant-values-objects)
  can create configmaps; can update configmaps; can delete configmaps; can deletecollection configmaps; can create secrets
  $a deny $V "CREATE by mallory is refused. Keep your own values in a Secret or ConfigMap of another name" -- \
    "${K[@]}" create configmap cozystack-values-extra --from-literal=values.yaml='_namespace: {host: victim.example.net}'
  $a deny $V "Secret $t/cozystack-values-db has a name the platform reserves" -- \
    "${K[@]}" create secret generic cozystack-values-db --from-literal=values.yaml='_cluster: {}'
  $a deny $V "ConfigMap $t/cozystack-values has a name the platform reserves" -- "${K[@]}" create configmap cozystack-values --from-literal=a=b
  $a deny $V "ConfigMap $t/cozystack-values-defaults has a name the platform reserves for the values it gives applications" -- \
    "${K[@]}" patch configmap cozystack-values-defaults --type=merge -p '{"data":{"values.yaml":"_namespace: {host: victim.example.net}"}}'
  $a deny $V "DELETE by mallory is refused" -- "${K[@]}" delete configmap cozystack-values-defaults
  # delete-collection deletes one by one, each checked on its own
  $a deny $V "DELETE by mallory is refused" -- "${K[@]}" delete --raw "/api/v1/namespaces/$t/configmaps"
  [[ "$(admin get configmap cozystack-values-defaults -o jsonpath='{.data.values\.yaml}')" == 'monitoring: {enabled: true}' ]]
  # the tenant's own values objects have other names
  $a allow -- "${K[@]}" create configmap platform-defaults --from-literal=values.yaml='_namespace: {host: victim.example.net}'
  $a allow -- "${K[@]}" create secret generic my-values --from-literal=values.yaml='replicas: 2'
  $a allow -- "${K[@]}" create secret generic cozystack-valuesx --from-literal=values.yaml='replicas: 2'
  ;;
helmrelease-values)
  got=$(admin get helmrelease val-web -o jsonpath='{range .spec.valuesFrom[*]}{.kind}/{.name} {end}')
  [[ "${got}" == "Secret/cozystack-values ConfigMap/cozystack-values-defaults " ]] || { echo "valuesFrom of val-web: ${got}"; exit 1; }
  echo "val-web reads ${got}"
  [[ "$(admin get helmrelease val-web -o jsonpath='{.spec.chartRef.namespace}')" == cozy-system ]]
  ;;
reserved-key-stored)
  can create e2evalfrees.apps.cozystack.io
  inst E2eValFree leak '{replicas: 1, _namespace: {host: victim.example.net}}' \
    | $a deny $KEYS 'top-level spec keys starting with "_" are reserved' -- "${K[@]}" create -f -
  inst E2eValFree clean '{replicas: 1}' | $a allow -- "${K[@]}" create -f -
  wait_for "HelmRelease valfree-clean is created" admin get helmrelease valfree-clean
  # As before the rule existed: the binding only warns while the administrator writes the instance.
  kubectl patch validatingadmissionpolicybinding "$KEYS" --type=merge -p '{"spec":{"validationActions":["Warn"]}}'
  stored() { inst E2eValFree leak '{replicas: 1, _namespace: {host: victim.example.net}}' | admin create -f - 2>&1; }
  wait_for "the instance with a reserved key is stored" stored
  kubectl patch validatingadmissionpolicybinding "$KEYS" --type=merge -p '{"spec":{"validationActions":["Deny"]}}'
  enforced() { local out; out=$(inst E2eValFree probe '{_x: 1}' | admin create --dry-run=server -f - 2>&1) || true; [[ "${out}" == *"ValidatingAdmissionPolicy '$KEYS'"* ]]; }
  wait_for "the instance keys policy denies again" enforced
  stalled() { [[ "$(ready e2evalfree leak)" == 'False ReservedKey: '* ]]; }
  wait_for "instance leak reports ReservedKey" stalled
  msg=$(ready e2evalfree leak); echo "leak: ${msg}"
  [[ "${msg}" == *'"_namespace"'*'nothing is written to the backing object until they are removed'*'{"op":"remove","path":"/spec/_namespace"}'* ]]
  [[ "$(admin get e2evalfree leak -o jsonpath='{.status.conditions[?(@.type=="Stalled")].status}')" == True ]]
  if admin get helmrelease valfree-leak 2>/dev/null; then echo "a HelmRelease was written for the instance with a reserved key"; exit 1; fi
  # The fix the message names: remove the key (the policy allows the update, which drops it).
  $a allow -- "${K[@]}" patch e2evalfree leak --type=json -p '[{"op":"remove","path":"/spec/_namespace"}]'
  wait_for "HelmRelease valfree-leak is created once the key is gone" admin get helmrelease valfree-leak
  values=$(admin get helmrelease valfree-leak -o jsonpath='{.spec.values}')
  [[ "${values}" == '{"replicas":1}' ]] || { echo "values of valfree-leak: ${values}"; exit 1; }
  ;;
stored-definition)
  kubectl get crd "$CRD" -o json > "${SAVED}"
  old() { printf 'apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: %s}\nspec:\n  application: {kind: E2eValOld, plural: e2evalolds, singular: e2evalold, openAPISchema: "{}"}\n  backend: {type: Helm, helm: {prefix: old-, chartRef: {kind: ExternalArtifact, name: old-chart, namespace: cozy-system}, valuesFrom: [{kind: ConfigMap, name: platform-defaults}]}}\n' "${1:-e2e-val-old}"; }
  old | invalid "valuesFrom names ConfigMap platform-defaults" -- kubectl create -f -
  # As an earlier version installed it: the CRD without its CEL rules while the definition is written.
  jq 'del(.metadata.managedFields, .status) | del(.. | ."x-kubernetes-validations"?)' "${SAVED}" | kubectl replace -f - >/dev/null
  written() { old | kubectl create -f - 2>&1; }
  wait_for "the definition is stored without the source rules" written
  restore_crd
  back() { local out; out=$(old e2e-val-old2 | kubectl create --dry-run=server -f - 2>&1) || true; [[ "${out}" == *"valuesFrom names ConfigMap platform-defaults"* ]]; }
  wait_for "the source rules are enforced again" back
  reported() { [[ "$(kubectl get applicationdefinition e2e-val-old -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')" == SourceNotPlatformOwned ]]; }
  wait_for "the definition reports SourceNotPlatformOwned" reported
  msg=$(kubectl get applicationdefinition e2e-val-old -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}'); echo "e2e-val-old: ${msg}"
  [[ "${msg}" == *"CRD e2evalolds.apps.cozystack.io serves kind E2eValOld, but no backing object is written for its instances"*"spec.backend.helm.valuesFrom[0] (ConfigMap platform-defaults) is not a platform values object"* ]]
  # still served: the tenant's instance is accepted and says why nothing happens
  wait_for "edit covers e2evalolds" test "$(kubectl auth can-i create e2evalolds.apps.cozystack.io -n "$t" "${tenant[@]}")" = yes
  inst E2eValOld db '{}' | $a allow -- "${K[@]}" create -f -
  refused() { [[ "$(ready e2evalold db)" == 'False SourceNotPlatformOwned: '* ]]; }
  wait_for "the instance reports SourceNotPlatformOwned" refused
  msg=$(ready e2evalold db); echo "db: ${msg}"
  [[ "${msg}" == *"definition e2e-val-old: spec.backend.helm.valuesFrom[0] (ConfigMap platform-defaults) is not a platform values object"*"ask the platform team to fix the definition"* ]]
  if admin get helmrelease old-db 2>/dev/null; then echo "a HelmRelease was written for a definition with a tenant values source"; exit 1; fi
  # fixed by the administrator: served again, and the HelmRelease reads the platform's ConfigMap
  kubectl patch applicationdefinition e2e-val-old --type=json -p '[{"op":"replace","path":"/spec/backend/helm/valuesFrom/0/name","value":"cozystack-values-defaults"}]'
  served() { [[ "$(kubectl get applicationdefinition e2e-val-old -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')" == Served ]]; }
  wait_for "the fixed definition is served" served
  wait_for "HelmRelease old-db is created" admin get helmrelease old-db
  got=$(admin get helmrelease old-db -o jsonpath='{range .spec.valuesFrom[*]}{.kind}/{.name} {end}')
  [[ "${got}" == "Secret/cozystack-values ConfigMap/cozystack-values-defaults " ]] || { echo "valuesFrom of old-db: ${got}"; exit 1; }
  ;;
restore-crd)
  # Puts the source rules back if a failed step left the CRD without them.
  restore_crd
  rm -f "${SAVED}"
  ;;
*) echo "unknown case $1"; exit 1 ;;
esac
