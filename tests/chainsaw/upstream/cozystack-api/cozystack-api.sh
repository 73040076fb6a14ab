#!/usr/bin/env bash
# Upstream's cozystack-api beside cozyplane's ApplicationDefinitions.
#
# cozystack-api lists every ApplicationDefinition when it starts and reads
# spec.release.chartRef.{kind,name,namespace} of each through a pointer it
# never checks (cozystack/cozystack, pkg/cmd/server/start.go, Complete); one
# definition without spec.release makes it panic, and it serves
# core.cozystack.io, which the namespace controller needs to finish deleting
# any namespace. Every definition the API server hands out must carry one.
#
#   cozystack-api.sh reads   the list as cozystack-api reads it: every item
#                            carries spec.release.chartRef; the new-form ones
#                            carry the placeholder, which cozyplane ignores
#   cozystack-api.sh run     starts upstream's binary, when COZYSTACK_API_BIN
#                            names one (built from cozystack/cozystack with
#                            `go build ./cmd/cozystack-api`) and
#                            COZYSTACK_SRC its source tree (for the
#                            WorkloadMonitor CRD it watches), and shows that it
#                            starts and serves with the definitions above
set -euo pipefail
placeholder=cozyplane-no-helm-release
defs=(e2e-upstr-infra e2e-upstr-app e2e-upstr-legacy)

case "$1" in
reads)
  list=$(kubectl get applicationdefinitions.v1alpha1.cozystack.io -o json)
  # The dereference cozystack-api does, on every item of the list.
  missing=$(jq -r '.items[] | select(.spec.release.chartRef == null) | .metadata.name' <<<"$list")
  [[ -z "$missing" ]] || { echo "definitions without spec.release.chartRef (cozystack-api would panic on start): $missing"; exit 1; }
  echo "every one of $(jq '.items | length' <<<"$list") definitions carries spec.release.chartRef"
  ref() { jq -r --arg n "$1" '.items[] | select(.metadata.name == $n) | .spec.release.chartRef | "\(.kind) \(.namespace // "")/\(.name)"' <<<"$list"; }
  # No namespace: upstream's cozystack-controller skips such a release and
  # leaves the kind's HelmReleases alone.
  for d in e2e-upstr-infra e2e-upstr-app; do
    [[ "$(ref "$d")" == "HelmChart /$placeholder" ]] || { echo "$d carries $(ref "$d"), not the placeholder"; exit 1; }
  done
  [[ "$(ref e2e-upstr-legacy)" == "ExternalArtifact cozy-system/upstr-legacy-chart" ]] || { echo "the legacy definition's release changed: $(ref e2e-upstr-legacy)"; exit 1; }
  echo "the new-form definitions carry the placeholder HelmChart $placeholder (no namespace); the legacy one its own chart"
  # cozyplane reads the placeholder as no release: the backends are unchanged.
  backend() { kubectl get applicationdefinition "$1" -o jsonpath='{.status.backend}'; }
  [[ "$(backend e2e-upstr-infra)/$(backend e2e-upstr-app)/$(backend e2e-upstr-legacy)" == Terraform/Helm/Helm ]] ||
    { echo "backends: $(backend e2e-upstr-infra)/$(backend e2e-upstr-app)/$(backend e2e-upstr-legacy)"; exit 1; }
  echo "cozyplane resolves them as Terraform, Helm and Helm"
  # Without a backend, the placeholder does not stand in for one.
  out=$(kubectl create --dry-run=server -f - 2>&1 <<'YAML' || true
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: e2e-upstr-none}
spec:
  application: {kind: E2eUpstrNone, plural: e2eupstrnones, singular: e2eupstrnone, openAPISchema: '{"type":"object"}'}
YAML
)
  [[ "$out" == *"set spec.backend (type Helm or Terraform), or the legacy spec.release for a Helm backend"* ]] ||
    { echo "a definition with neither backend nor release was not refused: $out"; exit 1; }
  echo "a definition with neither backend nor release is still refused"
  # Nor does the placeholder serve as a Helm backend's chart.
  out=$(kubectl create --dry-run=server -f - 2>&1 <<YAML || true
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: e2e-upstr-none}
spec:
  application: {kind: E2eUpstrNone, plural: e2eupstrnones, singular: e2eupstrnone, openAPISchema: '{"type":"object"}'}
  backend: {type: Helm, helm: {chartRef: {kind: HelmChart, name: $placeholder}}}
YAML
)
  [[ "$out" == *"spec.backend.helm.chartRef names $placeholder, the placeholder release that stands for no release"* ]] ||
    { echo "a Helm backend naming the placeholder chart was not refused: $out"; exit 1; }
  echo "a Helm backend naming the placeholder chart is refused"
  ;;
run)
  if [[ -z "${COZYSTACK_API_BIN:-}" || -z "${COZYSTACK_SRC:-}" ]]; then
    echo "COZYSTACK_API_BIN and COZYSTACK_SRC are not set: upstream's cozystack-api not run (the step reads covers what it reads)"
    exit 0
  fi
  crd="${COZYSTACK_SRC}/packages/system/cozystack-controller/definitions/cozystack.io_workloadmonitors.yaml"
  # Its fixed metrics address is :8080; another process there makes it exit.
  if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
    echo "port 8080 is taken: upstream's cozystack-api (metrics on :8080, fixed) cannot run here"; exit 1
  fi
  kubectl apply -f "$crd" >/dev/null
  kubectl wait --for=condition=Established crd/workloadmonitors.cozystack.io --timeout=30s >/dev/null
  work=$(mktemp -d)
  port=$(( ${CONTROLLER_PORT_BASE:-21600} + 90 ))
  # The admin's client certificate, to call it directly (no APIService).
  kc=$(kubectl config view --raw --minify --flatten -o json)
  jq -r '.users[0].user["client-certificate-data"]' <<<"$kc" | base64 -d > "$work/admin.crt"
  jq -r '.users[0].user["client-key-data"]' <<<"$kc" | base64 -d > "$work/admin.key"
  [[ -s "$work/admin.crt" && -s "$work/admin.key" ]] || { echo "the kubeconfig has no client certificate to call cozystack-api with"; exit 1; }
  "$COZYSTACK_API_BIN" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
    --bind-address=127.0.0.1 --secure-port="$port" --cert-dir="$work/certs" >"$work/log" 2>&1 &
  pid=$!
  stop() {
    kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"
    kubectl delete -f "$crd" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  }
  trap stop EXIT
  get() { curl -sfk --cert "$work/admin.crt" --key "$work/admin.key" "https://127.0.0.1:$port$1"; }
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { echo "cozystack-api exited:"; grep -m5 -A3 'panic\|Error' "$work/log" || tail -20 "$work/log"; exit 1; }
    [[ "$(get /readyz 2>/dev/null || true)" == ok ]] && break
    sleep 0.5
  done
  [[ "$(get /readyz || true)" == ok ]] || { echo "cozystack-api not ready after 30s"; tail -20 "$work/log"; exit 1; }
  echo "upstream's cozystack-api started with $(kubectl get applicationdefinitions -o name | wc -l) definitions and is ready"
  core=$(get /apis/core.cozystack.io/v1alpha1 | jq -c '[.resources[].name]')
  [[ "$core" == *'"tenantnamespaces"'* ]] || { echo "core.cozystack.io serves $core"; exit 1; }
  get /apis/core.cozystack.io/v1alpha1/tenantnamespaces | jq -e '.kind == "TenantNamespaceList"' >/dev/null
  echo "it serves core.cozystack.io: $core"
  apps=$(get /apis/apps.cozystack.io/v1alpha1 | jq -c '[.resources[].name]')
  for p in e2eupstrinfras e2eupstrapps e2eupstrlegacies; do
    [[ "$apps" == *"\"$p\""* ]] || { echo "it read no definition for $p: $apps"; exit 1; }
  done
  echo "it read every definition, the Terraform one included (its own apps.cozystack.io, reached by no APIService here)"
  ;;
*) echo "unknown case $1"; exit 1 ;;
esac
