#!/usr/bin/env bash
# cozyplane check against the cluster, one case per chainsaw step:
# check.sh CASE. Flux's helm-controller and an ingress-nginx controller are
# played by Deployments in the test namespace (nothing runs pods here: the
# check reads the objects, as it does on a real cluster).
set -euo pipefail
ns=$NAMESPACE
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# run: cozyplane check -o json into $out; its exit status in $rc.
run() { rc=0; cozyplane check -o json >"$out" || rc=$?; }
# verdict NAME: the verdict of check NAME in the last run.
verdict() { jq -r --arg n "$1" '.checks[] | select(.name == $n) | .verdict' "$out"; }
detail() { jq -r --arg n "$1" '.checks[] | select(.name == $n) | .detail + " | fix: " + (.fix // "")' "$out"; }
expect() { # expect NAME VERDICT TEXT: check NAME has VERDICT and its detail and fix contain TEXT
  local v; v=$(verdict "$1")
  [[ "$v" == "$2" ]] || { echo "check $1: verdict $v, want $2: $(detail "$1")"; exit 1; }
  [[ "$(detail "$1")" == *"$3"* ]] || { echo "check $1 does not say \"$3\": $(detail "$1")"; exit 1; }
  echo "check $1: $v ($(detail "$1" | cut -c1-200))"
}
deployment() { # deployment NAME IMAGE ARG...: a Deployment with one container
  local name=$1 image=$2; shift 2
  local args="" a
  for a in "$@"; do args+="\"$a\","; done
  cat <<YAML | kubectl -n "$ns" apply --server-side --force-conflicts -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: $name}
spec:
  selector: {matchLabels: {app: $name}}
  template:
    metadata: {labels: {app: $name}}
    spec:
      containers:
      - name: manager
        image: $image
        args: [${args%,}]
YAML
}

case "$1" in
helm-lockdown)
  # Flux's multi-tenancy lockdown refuses the platform's backing HelmReleases
  # (charts in platform namespaces, release records in cozy-helm-*).
  deployment helm-controller ghcr.io/fluxcd/helm-controller:v1.4.0 --watch-all-namespaces --no-cross-namespace-refs=true --default-service-account=flux-tenant
  run
  [[ $rc -eq 2 ]] || { echo "exit status $rc, want 2 (a check failed)"; cat "$out"; exit 1; }
  [[ "$(jq -r .verdict "$out")" == fail ]]
  expect flux-helm-controller fail "Deployment $ns/helm-controller container manager runs with --no-cross-namespace-refs=true and --default-service-account=flux-tenant"
  expect flux-helm-controller fail "run Flux's helm-controller without --no-cross-namespace-refs=true and without --default-service-account"
  # Half of it is still a failure.
  deployment helm-controller ghcr.io/fluxcd/helm-controller:v1.4.0 --watch-all-namespaces --no-cross-namespace-refs=true
  run
  expect flux-helm-controller fail "runs with --no-cross-namespace-refs=true: the platform's backing HelmReleases"
  ;;
helm-default)
  # Flux as installed by default; tenants' own HelmReleases are confined by
  # cozyplane-tenant-flux-identity-policy, which admission-policies requires.
  deployment helm-controller ghcr.io/fluxcd/helm-controller:v1.4.0 --watch-all-namespaces --log-level=info
  run
  expect flux-helm-controller pass "Deployment $ns/helm-controller container manager installs the platform's HelmReleases"
  ;;
ingress)
  deployment ingress-nginx-controller registry.k8s.io/ingress-nginx/controller:v1.12.1 /nginx-ingress-controller '--configmap=$(POD_NAMESPACE)/ingress-nginx-controller'
  kubectl -n "$ns" create configmap ingress-nginx-controller --from-literal=allow-snippet-annotations=true --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  run
  [[ $rc -eq 2 ]] || { echo "exit status $rc, want 2 (a check failed)"; cat "$out"; exit 1; }
  expect ingress-nginx-snippets fail "ConfigMap $ns/ingress-nginx-controller sets allow-snippet-annotations \"true\""
  expect ingress-nginx-snippets fail 'allow-snippet-annotations: "false"'
  kubectl -n "$ns" create configmap ingress-nginx-controller --from-literal=allow-snippet-annotations=false --from-literal=annotations-risk-level=Critical \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  run
  expect ingress-nginx-snippets fail "annotations-risk-level \"Critical\""
  kubectl -n "$ns" create configmap ingress-nginx-controller --from-literal=allow-snippet-annotations=false --from-literal=annotations-risk-level=High \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  run
  expect ingress-nginx-snippets pass "snippet annotations are off"
  kubectl -n "$ns" delete deployment ingress-nginx-controller >/dev/null
  ;;
policies)
  # hack/e2e.sh installs policies/ as the policies chart would.
  run
  expect admission-policies pass "policies installed, failing closed and bound with Deny"
  ;;
text)
  # The text report names each check and ends with the verdict; a failure's fix is printed.
  rc=0; cozyplane check >"$out" || rc=$?
  [[ $rc -eq 2 ]] || { echo "exit status $rc, want 2"; cat "$out"; exit 1; }
  grep -q '^flux-helm-controller  *fail' "$out"
  grep -q '^flux-helm-controller (fail): run Flux' "$out"
  grep -q '^verdict: fail$' "$out"
  echo "text report: $(grep -c . "$out") lines"
  ;;
*)
  echo "unknown case $1"; exit 2 ;;
esac
