#!/usr/bin/env bash
# Installs the admission policies on a control plane as the policies chart
# renders them (charts/policies: policies/*.yaml with the configured
# identities) and waits until they are enforced: a policy takes effect a
# moment after it is created, so each one is probed with a request it must
# deny.
#
#   hack/policies.sh DIR     (DIR/kubeconfig: an administrator's kubeconfig)
#
# POLICY_VALUES=FILE renders the chart with that values file, e.g.
# charts/policies/values-stock.yaml (Flux in flux-system, cert-manager in
# cert-manager); the rendered policies are kept in DIR/policies.yaml. The
# chart is rendered from a copy whose files/ are policies/ as they are now,
# so an edit of policies/ is tested before make generate copies it.
#
# The probes run in a temporary tenant-* namespace without the host label
# (every gateway, route and Ingress policy denies there, fail-closed), deleted
# at exit. Layer 3, the instance orphan and status policies and the appdef
# identity policy have nothing cheap to probe (no Tenant kind or instance is
# served yet, and the appdef identity is not bound here); they are applied in
# the same request as the others and the API server loads policies in the
# order it receives them, so once the last-applied one is enforced, all are.
source "$(dirname "$0")/lib.sh"
[[ $# -eq 1 ]] || die "usage: $0 DIR (DIR/kubeconfig: an administrator's kubeconfig)"
DIR=$(cd "$1" && pwd)
export KUBECONFIG="${DIR}/kubeconfig"
[[ -f "${KUBECONFIG}" ]] || die "no kubeconfig at ${KUBECONFIG}"
# Unique per run: a probe namespace of an earlier run may still be terminating.
PROBE_NS="tenant-policy-probe-$(date +%s)-$$"
PROBE_USER=cozystack:policy-probe

"${ROOT}/hack/tools.sh" helm >/dev/null
values=()
if [[ -n "${POLICY_VALUES:-}" ]]; then
  [[ -f "${POLICY_VALUES}" ]] || die "POLICY_VALUES=${POLICY_VALUES}: no such file"
  values=(-f "${POLICY_VALUES}")
fi
chart=$(mktemp -d)
cp -r "${ROOT}/charts/policies/." "${chart}/"
rm -f "${chart}"/files/*.yaml
cp "${ROOT}"/policies/*.yaml "${chart}/files/"
# MutatingAdmissionPolicy v1 is served from Kubernetes 1.36 on; the chart
# renders l5-route-port443.yaml only where it is (helm template reads no
# cluster, so it is told). The server's version decides, not discovery: a
# freshly started API server may not list the kind yet, and a policy left out
# for that reason would be a silent hole. Where the version says it is served,
# wait until it answers.
minor=$(kubectl version -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | tail -1)
[[ -n "${minor}" ]] || die "cannot read the API server's version"
if (( minor >= 36 )); then
  for i in $(seq 1 150); do
    kubectl get mutatingadmissionpolicies.v1.admissionregistration.k8s.io >/dev/null 2>&1 && break
    (( i == 150 )) && die "the API server (1.${minor}) does not serve MutatingAdmissionPolicy v1 after 30s"
    sleep 0.2
  done
  MUTATING=yes values+=(--api-versions admissionregistration.k8s.io/v1/MutatingAdmissionPolicy)
else
  MUTATING=no
  log "the API server (1.${minor}) serves no MutatingAdmissionPolicy v1: cozyplane-route-port443-policy left out"
fi
helm template cozyplane-policies "${chart}" --namespace cozy-system "${values[@]}" > "${DIR}/policies.yaml" ||
  { rm -rf "${chart}"; die "the policies chart does not render${POLICY_VALUES:+ with ${POLICY_VALUES}}"; }
rm -rf "${chart}"
log "installing admission policies${POLICY_VALUES:+ (values ${POLICY_VALUES#"${ROOT}/"})}"
kubectl apply --server-side --force-conflicts -f "${DIR}/policies.yaml" >/dev/null

# The mutating policy's probe: a cozy-* namespace that owns a Gateway.
PROBE_GW_NS="cozy-policy-probe-$(date +%s)-$$"
cleanup() {
  kubectl delete namespace "${PROBE_NS}" "${PROBE_GW_NS}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete clusterrole,clusterrolebinding "${PROBE_USER}" --ignore-not-found >/dev/null 2>&1 || true
}
trap cleanup EXIT
kubectl create namespace "${PROBE_NS}" >/dev/null
# The layer 4, values Secret and backing object probes impersonate an
# untrusted caller allowed to create namespaces, Secrets and HelmReleases.
kubectl create clusterrole "${PROBE_USER}" --verb=create --resource=namespaces,secrets,helmreleases.helm.toolkit.fluxcd.io,httproutes.gateway.networking.k8s.io --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl create clusterrolebinding "${PROBE_USER}" --clusterrole="${PROBE_USER}" --user="${PROBE_USER}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null

# probe POLICY ARGS...: `kubectl create --dry-run=server ARGS` of a manifest
# on stdin must be denied by POLICY.
probe() {
  local policy=$1 manifest out; shift
  manifest=$(cat)
  for _ in $(seq 1 150); do
    out=$(kubectl create --dry-run=server "$@" -f - <<<"${manifest}" 2>&1) || true
    [[ "${out}" == *"ValidatingAdmissionPolicy '${policy}'"* ]] && return 0
    sleep 0.2
  done
  die "admission policy ${policy} is not enforced after 30s; last answer: ${out}"
}

probe cozyplane-gateway-hostname-policy -n "${PROBE_NS}" <<'YAML'
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: probe}
spec:
  gatewayClassName: probe
  listeners: [{name: https, port: 443, protocol: HTTPS, hostname: probe.example.org}]
YAML
for kind in HTTPRoute GRPCRoute; do
  policy=cozyplane-route-hostname-policy
  [[ ${kind} == GRPCRoute ]] && policy=${policy}-grpc
  probe "${policy}" -n "${PROBE_NS}" <<YAML
apiVersion: gateway.networking.k8s.io/v1
kind: ${kind}
metadata: {name: probe}
spec: {}
YAML
done
probe cozyplane-route-hostname-policy-tls -n "${PROBE_NS}" <<'YAML'
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: probe}
spec:
  hostnames: [probe.example.org]
  rules: [{backendRefs: [{name: probe, port: 443}]}]
YAML
probe cozyplane-namespace-host-label-policy --as="${PROBE_USER}" <<'YAML'
apiVersion: v1
kind: Namespace
metadata:
  name: cozystack-policy-probe-label
  labels: {namespace.cozystack.io/host: probe.example.org}
YAML
probe cozyplane-ingress-hostname-policy -n "${PROBE_NS}" <<'YAML'
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: probe}
spec:
  rules: [{host: probe.example.org}]
YAML
probe cozyplane-values-secret-policy -n "${PROBE_NS}" --as="${PROBE_USER}" <<'YAML'
apiVersion: v1
kind: Secret
metadata: {name: cozystack-values}
YAML
probe cozyplane-backing-object-policy -n "${PROBE_NS}" --as="${PROBE_USER}" <<'YAML'
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: probe
  labels: {apps.cozystack.io/application.kind: Probe, apps.cozystack.io/application.name: probe}
spec:
  interval: 5m
  chartRef: {kind: OCIRepository, name: probe}
YAML
probe cozyplane-tenant-flux-identity-policy -n "${PROBE_NS}" --as="${PROBE_USER}" <<'YAML'
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: probe}
spec:
  interval: 5m
  chartRef: {kind: OCIRepository, name: probe}
YAML
# cozyplane-route-port443-policy (mutating): an HTTPRoute whose parentRef
# names neither a listener nor a port, in a namespace that owns its Gateway,
# is stored with port 443; until the policy is in effect the port-80 policy
# refuses it.
if [[ ${MUTATING} == yes ]]; then
  kubectl create namespace "${PROBE_GW_NS}" >/dev/null
  kubectl label namespace "${PROBE_GW_NS}" "namespace.cozystack.io/gateway=${PROBE_GW_NS}" >/dev/null
  for i in $(seq 1 150); do
    out=$(kubectl create --dry-run=server -o jsonpath='{.spec.parentRefs[0].port}' -n "${PROBE_GW_NS}" --as="${PROBE_USER}" -f - 2>&1 <<'YAML'
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: probe}
spec:
  parentRefs: [{name: probe}]
YAML
) || true
    [[ "${out}" == 443 ]] && break
    [[ ${i} -eq 150 ]] && die "admission policy cozyplane-route-port443-policy is not in effect after 30s; last answer: ${out}"
    sleep 0.2
  done
fi
# Layer 3 applies to the Tenant kind, served once its ApplicationDefinition
# exists; there is nothing to probe before that.
log "admission policies enforced"
