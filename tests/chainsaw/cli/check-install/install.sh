#!/usr/bin/env bash
# cozyplane check --pre, the umbrella chart's preflight and cozyplane check,
# from an empty cluster to an installed platform, on a control plane of its
# own (not the suite's: the charts install cluster-wide objects, and the
# checks judge the whole cluster). One phase per chainsaw step:
#
#   install.sh up|down       start (no CRD at all) or stop that control plane
#   install.sh empty         check --pre on the empty cluster names every missing piece
#   install.sh preflight     helm install of the packaged charts fails with the preflight's reason
#   install.sh neighbours    the third-party CRDs and the neighbours' Deployments: check --pre passes
#   install.sh installed     helm install of the packaged charts, the Deployments' status played: check passes
#   install.sh broken        each precondition broken in turn, its finding and exit status, then restored
#
# The control plane runs on CHECK_INSTALL_PORT_BASE (default PORT_BASE+300:
# clear of the suite's control plane, its controllers' ports and the dev-loop
# scenario's, PORT_BASE+100) in ${TMPDIR:-/tmp}/cozyplane-check-install-$NAMESPACE,
# etcd's data on tmpfs. Nothing runs pods there: no kubelet, and its
# kube-controller-manager runs no deployment controller, so the status this
# script writes on the Deployments (as a kubelet and that controller would)
# stays what it wrote. The charts are the release's packages (make release's
# code: hack/tools/release -charts-only), with image references this script
# makes up, as the images are never pulled.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# hack/lib.sh: ROOT, the tool cache's bin first in PATH, the pinned versions, moddir.
# shellcheck source=../../../../hack/lib.sh
source "${here}/../../../../hack/lib.sh"
dir="${TMPDIR:-/tmp}/cozyplane-check-install-${NAMESPACE:?chainsaw sets NAMESPACE}"
export PORT_BASE=${CHECK_INSTALL_PORT_BASE:-$(( ${PORT_BASE:-21000} + 300 ))}
export KUBECONFIG="${dir}/kubeconfig"
version=0.0.0-check
out="${dir}/out"
mkdir -p "${out}"

fail() { echo "FAIL: $*"; exit 1; }
eq() { [[ "$1" == "$2" ]] || fail "$3: got '$1', want '$2'"; echo "ok: $3"; }

# check [ARGS...]: cozyplane check -o json ARGS into $out/check.json; exit status in $rc.
check() { rc=0; cozyplane check -o json "$@" >"${out}/check.json" 2>"${out}/check.err" || rc=$?; }
# verdict NAME: the verdict of check NAME in the last report.
verdict() { jq -r --arg n "$1" '.checks[] | select(.name == $n) | .verdict' "${out}/check.json"; }
detail() { jq -r --arg n "$1" '.checks[] | select(.name == $n) | .detail' "${out}/check.json"; }
# findings: the checks of the last report that did not pass, sorted, comma-separated.
findings() { jq -r '[.checks[] | select(.verdict != "pass") | .name] | sort | join(",")' "${out}/check.json"; }
# expect_only WHAT STATUS CHECKS TEXT: the last report's exit status is STATUS,
# the checks not passing are exactly CHECKS (comma-separated, sorted), each
# with a fix, and the detail of the first holds TEXT.
expect_only() {
  local what=$1 status=$2 checks=$3 text=$4
  eq "${rc}" "${status}" "${what}: exit status"
  eq "$(findings)" "${checks}" "${what}: the findings"
  eq "$(jq -r '[.checks[] | select(.verdict != "pass" and (.fix // "") == "")] | length' "${out}/check.json")" 0 "${what}: every finding says what to do"
  if [[ -n "${text}" ]]; then
    local d; d=$(detail "${checks%%,*}")
    [[ "${d}" == *"${text}"* ]] || fail "${what}: ${checks%%,*} does not say '${text}': ${d}"
    echo "ok: ${what}: ${checks%%,*} says '${text}'"
  fi
}
expect_pass() { # expect_pass WHAT: every check passed, exit status 0
  eq "${rc}" 0 "$1: exit status"
  eq "$(jq -r .verdict "${out}/check.json")" pass "$1: the verdict"
}

# The third-party CRDs, as hack/cluster.sh installs them on the suite's
# control plane (and the same files), and HelmChart.
gateway_crds() {
  local gw f
  gw=$(moddir "sigs.k8s.io/gateway-api@${GATEWAY_API_VERSION}")
  for f in "${gw}"/config/crd/standard/*.yaml; do [[ "$(basename "${f}")" == *_vap_* ]] || echo "${f}"; done
}
cert_manager_crds() {
  local cm; cm=$(moddir "github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION}")
  echo "${cm}/deploy/crds/cert-manager.io_issuers.yaml" "${cm}/deploy/crds/cert-manager.io_clusterissuers.yaml" \
    "${cm}/deploy/crds/cert-manager.io_certificates.yaml" "${cm}/deploy/crds/cert-manager.io_certificaterequests.yaml"
}
apply_files() { # apply_files FILE...: server-side apply, then wait until Established
  local args=() f
  for f in "$@"; do args+=(-f "${f}"); done
  kubectl apply --server-side --force-conflicts "${args[@]}" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null
}
# standin PLURAL GROUP KIND VERSION...: a CRD of that name serving only these
# versions, with an open schema. HelmChart (source-controller's) has no
# generated CRD in this repository; the others stand for an unsupported
# release of a neighbour.
standin() {
  local plural=$1 group=$2 kind=$3; shift 3
  local versions="" v storage=true
  for v in "$@"; do
    versions+="
  - name: ${v}
    served: true
    storage: ${storage}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}"
    storage=false
  done
  # A group under k8s.io needs the approval annotation; "unapproved" is accepted.
  local approval=""
  [[ "${group}" != *.k8s.io ]] || approval='annotations: {api-approved.kubernetes.io: "unapproved, a stand-in of the scenario"}'
  kubectl apply -f - >/dev/null <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
  ${approval}
spec:
  group: ${group}
  names: {plural: ${plural}, kind: ${kind}, listKind: ${kind}List, singular: $(tr '[:upper:]' '[:lower:]' <<<"${kind}")}
  scope: Namespaced
  versions:${versions}
YAML
  kubectl wait --for=condition=Established --timeout=60s "crd/${plural}.${group}" >/dev/null
}
# discovered GROUP/VERSION/KIND...: wait (at most a minute each) until the
# API server's discovery, which helm's .Capabilities reads, lists each kind:
# it follows a CRD's Established condition by a moment.
discovered() {
  local gvk gv kind
  for gvk in "$@"; do
    gv=${gvk%/*} kind=${gvk##*/}
    for _ in $(seq 1 120); do
      kubectl get --raw "/apis/${gv}" 2>/dev/null | jq -e --arg k "${kind}" '.resources[] | select(.kind == $k)' >/dev/null && break
      sleep 0.5
    done
    kubectl get --raw "/apis/${gv}" 2>/dev/null | jq -e --arg k "${kind}" '.resources[] | select(.kind == $k)' >/dev/null ||
      fail "the API server does not serve ${gvk} a minute after its CRD was established"
  done
}
all_needs=(helm.toolkit.fluxcd.io/v2/HelmRelease infra.contrib.fluxcd.io/v1alpha2/Terraform gateway.networking.k8s.io/v1/Gateway
  gateway.networking.k8s.io/v1/HTTPRoute gateway.networking.k8s.io/v1/TLSRoute cert-manager.io/v1/Issuer cert-manager.io/v1/Certificate)
delete_crd() { kubectl delete crd "$1" --wait=true --timeout=60s >/dev/null; }
neighbour_crds() {
  # shellcheck disable=SC2046 # file lists
  apply_files "${CACHE}/crds/helm.toolkit.fluxcd.io_helmreleases.yaml" "${ROOT}/api/crds/infra.contrib.fluxcd.io_terraforms.yaml" \
    $(cert_manager_crds) $(gateway_crds)
  standin helmcharts source.toolkit.fluxcd.io HelmChart v1
}

# neighbour NAMESPACE NAME SERVICEACCOUNT IMAGE: a neighbour's Deployment as
# its chart names it (Flux's helm-controller, tofu-controller, cert-manager;
# the versions tests/chainsaw/_scripts/neighbours mirrors).
neighbour() {
  kubectl create namespace "$1" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl -n "$1" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $2, labels: {app.kubernetes.io/name: $2}}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: $2}}
  template:
    metadata: {labels: {app.kubernetes.io/name: $2}}
    spec:
      serviceAccountName: $3
      containers:
      - name: manager
        image: $4
        args: [--watch-all-namespaces, --log-level=info]
YAML
}
neighbours() {
  neighbour cozy-fluxcd helm-controller helm-controller ghcr.io/fluxcd/helm-controller:v1.6.3
  neighbour cozy-fluxcd tofu-controller tofu-controller ghcr.io/flux-iac/tofu-controller:v0.16.5
  neighbour cozy-cert-manager cert-manager cert-manager quay.io/jetstack/cert-manager-controller:v1.21.1
}

# play_ready DEPLOYMENT... (namespace cozy-system): write the status a
# kubelet and the deployment controller would once its pod runs.
play_ready() {
  local d
  for d in "$@"; do
    kubectl -n cozy-system patch deployment "${d}" --subresource=status --type=merge -p '{"status": {
      "observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1, "unavailableReplicas": 0,
      "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
        "lastUpdateTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' >/dev/null
  done
}
ours() { kubectl -n cozy-system get deployments -l app.kubernetes.io/part-of=cozyplane -o jsonpath='{.items[*].metadata.name}'; }

# The release's charts, packaged by the release tool's code with made-up
# digests (sha256 of the controller's name): nothing pulls them here.
package() {
  [[ -f "${dir}/release/${version}/charts/cozyplane-${version}.tgz" ]] && return 0
  local c repo
  : >"${dir}/images.txt"
  for c in $("${ROOT}/hack/controllers.sh" list); do
    [[ -f "${ROOT}/charts/${c}/values.yaml" ]] || continue
    repo=$(sed -n 's/^ *repository: *//p' "${ROOT}/charts/${c}/values.yaml" | head -1)
    echo "${repo}:${version}@sha256:$(printf %s "${c}" | sha256sum | cut -c1-64)" >>"${dir}/images.txt"
  done
  (cd "${ROOT}/hack/tools/release" && GOWORK=off go run . -root "${ROOT}" -out "${dir}/release" -version "${version}" \
    -charts-only -images "${dir}/images.txt") >"${out}/release.log" 2>&1 || { cat "${out}/release.log"; fail "packaging the charts"; }
}
umbrella() { echo "${dir}/release/${version}/charts/cozyplane-${version}.tgz"; }

case "$1" in
up)
  "${ROOT}/hack/tools.sh" helm >/dev/null
  CLUSTER_CRDS=none "${ROOT}/hack/cluster.sh" up "${dir}" >"${out}/up.log" 2>&1 || { tail -n 20 "${out}/up.log"; fail "the control plane did not start"; }
  eq "$(kubectl get crd -o name | wc -l)" 0 "the control plane starts with no CRD"
  ;;
down)
  "${ROOT}/hack/cluster.sh" down "${dir}" >/dev/null 2>&1 || true
  rm -rf "${dir}"
  ;;
empty)
  check --pre
  expect_only "check --pre on an empty cluster" 2 \
    crds-cert-manager,crds-flux,crds-gateway-api,crds-tofu-controller,identity-cert-manager,identity-flux-helm-controller,identity-tofu-controller \
    "issuers.cert-manager.io is not installed; certificates.cert-manager.io is not installed"
  for crd in helmreleases.helm.toolkit.fluxcd.io helmcharts.source.toolkit.fluxcd.io terraforms.infra.contrib.fluxcd.io \
    gateways.gateway.networking.k8s.io httproutes.gateway.networking.k8s.io tlsroutes.gateway.networking.k8s.io; do
    grep -q "${crd} is not installed" "${out}/check.json" || fail "check --pre does not name ${crd}"
  done
  for c in identity-flux-helm-controller identity-tofu-controller identity-cert-manager; do
    [[ "$(detail "${c}")" == "no "*" runs in the cluster"* ]] || fail "${c}: $(detail "${c}")"
  done
  echo "ok: check --pre names each missing CRD and each missing neighbour"
  eq "$(verdict cozystack-values)" pass "no namespace needs cozystack-values yet"
  # The text report: the table, each finding's fix, the verdict.
  rc=0; cozyplane check --pre >"${out}/pre.txt" || rc=$?
  eq "${rc}" 2 "check --pre (text): exit status"
  grep -q '^crds-flux  *fail' "${out}/pre.txt" && grep -q '^crds-flux (fail): install Flux' "${out}/pre.txt" && grep -q '^verdict: fail$' "${out}/pre.txt" ||
    { cat "${out}/pre.txt"; fail "the text report"; }
  # Before the install, check says the same and that no controller is there.
  check
  eq "${rc}" 2 "check on an empty cluster: exit status"
  eq "$(verdict controllers)" fail "check on an empty cluster: controllers"
  [[ "$(detail controllers)" == *"no Deployment labelled app.kubernetes.io/part-of=cozyplane"* ]] || fail "controllers: $(detail controllers)"
  eq "$(verdict crds-cozyplane)" fail "check on an empty cluster: our CRDs"
  ;;
preflight)
  package
  rc=0; helm install cozystack "$(umbrella)" --namespace cozy-system --create-namespace >"${out}/install.out" 2>&1 || rc=$?
  [[ ${rc} -ne 0 ]] || fail "helm install succeeded on an empty cluster"
  grep -q "preflight: helm needs helm.toolkit.fluxcd.io/v2/HelmRelease, which the cluster does not serve: install Flux" "${out}/install.out" &&
    grep -q "or set terraform.enabled=false" "${out}/install.out" &&
    grep -q "gateway-certs needs gateway.networking.k8s.io/v1/Gateway, gateway.networking.k8s.io/v1/HTTPRoute, gateway.networking.k8s.io/v1/TLSRoute, cert-manager.io/v1/Issuer, cert-manager.io/v1/Certificate" "${out}/install.out" ||
    { cat "${out}/install.out"; fail "the preflight's reason"; }
  echo "ok: helm install fails: $(grep -o 'preflight: helm needs[^;]*' "${out}/install.out")"
  # Every component's needs present but one's: the install names that one only.
  # shellcheck disable=SC2046
  apply_files "${CACHE}/crds/helm.toolkit.fluxcd.io_helmreleases.yaml" "${ROOT}/api/crds/infra.contrib.fluxcd.io_terraforms.yaml" $(gateway_crds)
  discovered "${all_needs[@]:0:5}"
  rc=0; helm install cozystack "$(umbrella)" --namespace cozy-system --create-namespace >"${out}/install.out" 2>&1 || rc=$?
  [[ ${rc} -ne 0 ]] || fail "helm install succeeded without cert-manager's CRDs"
  grep -q "preflight: gateway-certs needs cert-manager.io/v1/Issuer, cert-manager.io/v1/Certificate, which the cluster does not serve: install cert-manager (Issuer and Certificate cert-manager.io/v1), or set gateway-certs.enabled=false. (" "${out}/install.out" ||
    { cat "${out}/install.out"; fail "the preflight's reason without cert-manager"; }
  echo "ok: without cert-manager's CRDs: $(grep -o 'preflight: .*gateway-certs.enabled=false' "${out}/install.out")"
  eq "$(helm list --namespace cozy-system -q | wc -l)" 0 "a refused install leaves no release"
  eq "$(kubectl get deployments -A -o name | wc -l)" 0 "a refused install leaves no Deployment"
  ;;
neighbours)
  neighbour_crds
  neighbours
  check --pre
  expect_pass "check --pre with the CRDs and the neighbours in place"
  eq "$(detail identity-flux-helm-controller)" "Deployment cozy-fluxcd/helm-controller runs as system:serviceaccount:cozy-fluxcd:helm-controller" "helm-controller's identity"
  ;;
installed)
  package
  discovered "${all_needs[@]}"
  helm install cozystack "$(umbrella)" --namespace cozy-system --create-namespace >"${out}/install.out" 2>&1 ||
    { cat "${out}/install.out"; fail "helm install of the packaged charts"; }
  grep -q "^cozyplane ${version} is installed as the release cozystack in the namespace cozy-system" "${out}/install.out" &&
    grep -q "^Enabled: crds, policies, appdef, helm, terraform, gateway-listeners, gateway-certs, ns-labels, lineage, route-conflicts\.$" "${out}/install.out" &&
    grep -q "^ *cozyplane check$" "${out}/install.out" && grep -q "ApplicationDefinition" "${out}/install.out" ||
    { cat "${out}/install.out"; fail "the install's notes"; }
  echo "ok: the notes say what was installed and what to run next"
  # The Deployments name the release's images, by digest.
  kubectl -n cozy-system get deployment cozystack-helm -o jsonpath='{.spec.template.spec.containers[0].image}' | grep -q "^ghcr.io/cozyplane/helm:${version}@sha256:" ||
    fail "cozystack-helm does not run the release's image"
  # Not rolled out yet (nothing runs pods): check says so.
  check
  eq "${rc}" 2 "check before the controllers are up: exit status"
  eq "$(findings)" controllers "check before the controllers are up: the findings"
  # Play the kubelet and the deployment controller: each pod runs and is ready.
  # shellcheck disable=SC2046
  play_ready $(ours)
  eq "$(ours | wc -w)" 8 "the release's controllers"
  check
  expect_pass "check after the install"
  [[ "$(detail controllers)" == "8 Deployments ready: "* ]] || fail "controllers: $(detail controllers)"
  check --pre
  expect_pass "check --pre after the install"
  ;;
broken)
  # A CRD removed: tofu-controller's.
  delete_crd terraforms.infra.contrib.fluxcd.io
  check
  expect_only "Terraform's CRD removed: check" 2 crds-tofu-controller "terraforms.infra.contrib.fluxcd.io is not installed"
  check --pre
  expect_only "Terraform's CRD removed: check --pre" 2 crds-tofu-controller "terraforms.infra.contrib.fluxcd.io is not installed"
  apply_files "${ROOT}/api/crds/infra.contrib.fluxcd.io_terraforms.yaml"
  check; expect_pass "Terraform's CRD restored"

  # A CRD at an unsupported version only: a Flux before 2.3 (HelmRelease v2beta2).
  delete_crd helmreleases.helm.toolkit.fluxcd.io
  standin helmreleases helm.toolkit.fluxcd.io HelmRelease v2beta2
  check
  expect_only "HelmRelease v2beta2 only: check" 2 crds-flux "helmreleases.helm.toolkit.fluxcd.io serves v2beta2, not v2"
  check --pre
  expect_only "HelmRelease v2beta2 only: check --pre" 2 crds-flux "helmreleases.helm.toolkit.fluxcd.io serves v2beta2, not v2"
  delete_crd helmreleases.helm.toolkit.fluxcd.io
  apply_files "${CACHE}/crds/helm.toolkit.fluxcd.io_helmreleases.yaml"
  check; expect_pass "HelmRelease v2 restored"

  # TLSRoute v1 missing: the experimental channel's v1alpha2 only.
  delete_crd tlsroutes.gateway.networking.k8s.io
  standin tlsroutes gateway.networking.k8s.io TLSRoute v1alpha2
  check
  expect_only "TLSRoute v1alpha2 only: check" 2 crds-gateway-api "tlsroutes.gateway.networking.k8s.io serves v1alpha2, not v1"
  check --pre
  expect_only "TLSRoute v1alpha2 only: check --pre" 2 crds-gateway-api "tlsroutes.gateway.networking.k8s.io serves v1alpha2, not v1"
  delete_crd tlsroutes.gateway.networking.k8s.io
  # shellcheck disable=SC2046
  apply_files $(gateway_crds)
  check; expect_pass "TLSRoute v1 restored"

  # A neighbour's identity other than the policies': Flux in flux-system while the policies trust cozy-fluxcd.
  kubectl -n cozy-fluxcd delete deployment helm-controller >/dev/null
  neighbour flux-system helm-controller helm-controller ghcr.io/fluxcd/helm-controller:v1.6.3
  check --pre
  expect_only "Flux in flux-system: check --pre" 2 identity-flux-helm-controller \
    "Deployment flux-system/helm-controller runs as system:serviceaccount:flux-system:helm-controller, which the policies do not trust (they trust system:serviceaccount:cozy-fluxcd:helm-controller"
  jq -r '.checks[] | select(.name == "identity-flux-helm-controller") | .fix' "${out}/check.json" | grep -q "identities.flux.namespace=flux-system" ||
    fail "the fix does not name identities.flux.namespace=flux-system"
  # Told where the policies trust Flux (identities.flux.namespace=flux-system), it passes.
  check --pre --flux-namespace flux-system
  expect_pass "Flux in flux-system: check --pre --flux-namespace flux-system"
  # Gone, not terminating (kube-controller-manager's namespace controller empties it), before the next check.
  kubectl delete namespace flux-system --wait=true --timeout=90s >/dev/null
  neighbour cozy-fluxcd helm-controller helm-controller ghcr.io/fluxcd/helm-controller:v1.6.3
  check --pre; expect_pass "Flux back in cozy-fluxcd"

  # cozystack-values missing where a release needs it: a tenant namespace.
  kubectl create namespace tenant-check >/dev/null
  check --pre
  expect_only "a tenant namespace without cozystack-values: check --pre" 2 cozystack-values "no Secret cozystack-values in tenant-check"
  kubectl -n tenant-check create secret generic cozystack-values >/dev/null
  check --pre; expect_pass "cozystack-values created"
  kubectl delete namespace tenant-check --wait=true --timeout=90s >/dev/null

  # A policy binding deleted: the one of cozyplane-helm-identity-policy.
  b=$(kubectl get validatingadmissionpolicybindings -o json | jq -r '[.items[] | select(.spec.policyName == "cozyplane-helm-identity-policy") | .metadata.name][0]')
  [[ "${b}" != null ]] || fail "no binding of cozyplane-helm-identity-policy"
  kubectl get validatingadmissionpolicybinding "${b}" -o json |
    jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields)' >"${out}/binding.json"
  kubectl delete validatingadmissionpolicybinding "${b}" >/dev/null
  check
  expect_only "the binding ${b} deleted: check" 2 admission-policies "cozyplane-helm-identity-policy has no binding with validationActions [Deny]"
  kubectl create -f "${out}/binding.json" >/dev/null
  check; expect_pass "the binding ${b} restored"

  # A controller not ready: the terraform backend's pod fails its readiness probe.
  kubectl -n cozy-system patch deployment cozystack-terraform --subresource=status --type=merge -p '{"status": {"readyReplicas": 0, "availableReplicas": 0,
    "unavailableReplicas": 1, "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
    "message": "Deployment does not have minimum availability.", "lastUpdateTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' >/dev/null
  check
  expect_only "cozystack-terraform not ready: check" 2 controllers \
    "Deployment cozy-system/cozystack-terraform: not Available (MinimumReplicasUnavailable: Deployment does not have minimum availability.), 0/1 replicas ready"
  jq -r '.checks[] | select(.name == "controllers") | .fix' "${out}/check.json" | grep -q "kubectl -n cozy-system describe deployment cozystack-terraform" ||
    fail "the fix does not say how to look at cozystack-terraform"
  play_ready cozystack-terraform
  check; expect_pass "cozystack-terraform ready again"
  check --pre; expect_pass "check --pre at the end"
  ;;
*)
  fail "unknown phase $1" ;;
esac
