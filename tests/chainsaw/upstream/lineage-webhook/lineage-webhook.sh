#!/usr/bin/env bash
# Upstream's lineage webhook beside cozyplane's lineage controller.
#
# Upstream Cozystack's lineage-controller-webhook labels, as they are created,
# the objects a HelmRelease renders, when that release has no ownerReferences
# (cozystack/cozystack, pkg/lineage/lineage.go, WalkOwnershipGraph: an object
# with owners is followed to its owners, one without to the HelmRelease its
# helm.toolkit.fluxcd.io/name label names, and a HelmRelease with owners is
# never mapped to an application). Ours carry a controller reference to the
# instance, so the webhook writes nothing on what they render and the lineage
# controller writes the labels instead.
#
# The same objects, as helm-controller and the workload controllers write
# them, are created for two releases of the Postgres "db":
#   tenant-e2elwh-up  an upstream-style HelmRelease (no ownerReferences, the
#                     instance does not control it);
#   tenant-e2elwh     ours (a controller reference to the instance).
#
# When LINEAGE_WEBHOOK_BIN names upstream's binary (built from
# cozystack/cozystack with `go build ./cmd/lineage-controller-webhook`), it
# runs against this API server with a self-signed serving certificate (it
# reads it from $TMPDIR/k8s-webhook-server/serving-certs and listens on :9443,
# both fixed), registered as upstream's chart registers it
# (packages/system/lineage-controller-webhook, MutatingWebhookConfiguration
# "lineage": same rules, objectSelector and namespaceSelector), limited to these
# two namespaces and with failurePolicy Ignore. Then:
#   - upstream's release: each object's create response carries the labels the
#     webhook wrote, and they are the table below;
#   - ours: the webhook is called and writes nothing;
#   - ours, once the lineage controller has labelled them: each object's
#     labels are the webhook's for the same object of upstream's release.
# Without it, only the last check runs, against the table.
#
# Where the two differ (seen running upstream's webhook, not checked here): its
# walk reads helm.toolkit.fluxcd.io/name but not /namespace, and finds the
# instance by trimming the application name off the release's name, not by the
# definition's prefix. An object whose namespace label names another namespace,
# or one of a release without owners not named prefix+instance, is labelled by
# the webhook and not by the lineage controller.
set -euo pipefail
up=tenant-e2elwh-up
ours=tenant-e2elwh
work=$(mktemp -d)
pid=""
mwc=e2e-upstream-lineage
stop() {
  [[ -z "$pid" ]] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  kubectl delete mutatingwebhookconfiguration "$mwc" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop EXIT

# The five lineage labels of a labels object, or {} for none.
lineage='with_entries(select(.key | test("^(apps\\.cozystack\\.io/application\\.(group|kind|name)|internal\\.cozystack\\.io/(managed-by-cozystack|tenantresource))$")))'
# What upstream's webhook writes on each object of release postgres-db of
# Postgres db (the definition's secrets.include names postgres-db-credentials);
# Jobs are not among the kinds it labels, nor is another release's Secret.
expected() {
  case "$1" in
    job/*|secret/unrelated-config) echo '{}' ;;
    *) jq -cn --arg tr "$([[ "$1" == secret/postgres-db-credentials ]] && echo true || echo false)" '{
        "apps.cozystack.io/application.group": "apps.cozystack.io",
        "apps.cozystack.io/application.kind": "Postgres",
        "apps.cozystack.io/application.name": "db",
        "internal.cozystack.io/managed-by-cozystack": "true",
        "internal.cozystack.io/tenantresource": $tr}' ;;
  esac
}
objects=(secret/postgres-db-credentials secret/postgres-db-init-script service/postgres-db-external-write
  job/postgres-db-init-job pod/postgres-db-init-job-x1 pod/postgres-db-probe secret/unrelated-config)

# render NS: the objects of release postgres-db in NS as helm-controller writes
# them (its origin labels on each rendered object), less the Job's Pod.
render() {
  cat <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: postgres-db-credentials
  labels: {app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: postgres-db, helm.toolkit.fluxcd.io/namespace: $1}
stringData: {postgres: not-a-real-password}
---
apiVersion: v1
kind: Secret
metadata:
  name: postgres-db-init-script
  labels: {app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: postgres-db, helm.toolkit.fluxcd.io/namespace: $1}
stringData: {init.sh: "true"}
---
apiVersion: v1
kind: Service
metadata:
  name: postgres-db-external-write
  labels: {app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: postgres-db, helm.toolkit.fluxcd.io/namespace: $1}
spec:
  ports: [{name: postgres, port: 5432}]
  selector: {cnpg.io/cluster: postgres-db, role: primary}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: postgres-db-init-job
  labels: {app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: postgres-db, helm.toolkit.fluxcd.io/namespace: $1}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: postgres, image: "postgres:17"}]
---
apiVersion: v1
kind: Pod
metadata:
  name: postgres-db-probe
  labels: {app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: postgres-db, helm.toolkit.fluxcd.io/namespace: $1}
spec:
  automountServiceAccountToken: false
  containers: [{name: probe, image: "postgres:17"}]
---
apiVersion: v1
kind: Secret
metadata:
  name: unrelated-config
  labels: {helm.toolkit.fluxcd.io/name: tenant-modules, helm.toolkit.fluxcd.io/namespace: $1}
stringData: {a: b}
YAML
}

# create NS: creates the objects in NS and keeps each create response's
# labels in $work/NS/<kind>.<name>.json (what they were as created, before any
# controller wrote to them).
create() {
  local ns=$1 d="$work/$1" uid
  mkdir -p "$d"
  for _ in $(seq 1 120); do kubectl -n "$ns" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.5; done
  render "$ns" | kubectl -n "$ns" create -o json -f - |
    jq -c 'if .kind == "List" then .items[] else . end | {k: "\(.kind | ascii_downcase)/\(.metadata.name)", l: (.metadata.labels // {})}' |
    while IFS= read -r line; do jq -c .l <<<"$line" > "$d/$(jq -r '.k | sub("/"; ".")' <<<"$line").json"; done
  uid=$(kubectl -n "$ns" get job postgres-db-init-job -o jsonpath='{.metadata.uid}')
  kubectl -n "$ns" create -o json -f - <<YAML | jq -c '.metadata.labels // {}' > "$d/pod.postgres-db-init-job-x1.json"
apiVersion: v1
kind: Pod
metadata:
  name: postgres-db-init-job-x1
  labels: {job-name: postgres-db-init-job}
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: postgres-db-init-job, uid: "$uid", controller: true, blockOwnerDeletion: true}
spec:
  automountServiceAccountToken: false
  restartPolicy: OnFailure
  containers: [{name: postgres, image: "postgres:17"}]
YAML
  local o
  for o in "${objects[@]}"; do [[ -s "$d/${o/\//.}.json" ]] || { echo "no create response kept for $o in $ns"; exit 1; }; done
}

live() { kubectl -n "$1" get "$2" -o json | jq -c '.metadata.labels // {}'; }

if [[ -n "${LINEAGE_WEBHOOK_BIN:-}" ]]; then
  [[ -x "$LINEAGE_WEBHOOK_BIN" ]] || { echo "LINEAGE_WEBHOOK_BIN=$LINEAGE_WEBHOOK_BIN is not an executable"; exit 1; }
  if (exec 3<>/dev/tcp/127.0.0.1/9443) 2>/dev/null; then
    echo "port 9443 is taken: upstream's lineage webhook (listening on :9443, fixed) cannot run here"; exit 1
  fi
  certs="$work/tmp/k8s-webhook-server/serving-certs"
  mkdir -p "$certs"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=lineage-controller-webhook" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$certs/tls.key" -out "$certs/tls.crt" 2>/dev/null
  # Cluster-admin's kubeconfig, as upstream's chart binds it to read any owner;
  # no probe or metrics listener.
  TMPDIR="$work/tmp" "$LINEAGE_WEBHOOK_BIN" --kubeconfig="$KUBECONFIG" --health-probe-bind-address=0 >"$work/log" 2>&1 &
  pid=$!
  kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $mwc
webhooks:
- name: lineage.cozystack.io
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig:
    url: https://127.0.0.1:9443/mutate-lineage
    caBundle: $(base64 -w0 < "$certs/tls.crt")
  rules:
  - {operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods", "secrets", "services", "persistentvolumeclaims"]}
  - {operations: ["CREATE", "UPDATE"], apiGroups: ["networking.k8s.io"], apiVersions: ["v1"], resources: ["ingresses"]}
  - {operations: ["CREATE", "UPDATE"], apiGroups: ["cozystack.io"], apiVersions: ["v1alpha1"], resources: ["workloadmonitors"]}
  namespaceSelector:
    matchExpressions:
    - {key: cozystack.io/system, operator: NotIn, values: ["true"]}
    - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, default]}
    - {key: kubernetes.io/metadata.name, operator: In, values: [$up, $ours]}
  objectSelector:
    matchExpressions:
    - {key: internal.cozystack.io/managed-by-cozystack, operator: DoesNotExist}
YAML
  # Ready once a server-side dry run of a rendered Secret in upstream's
  # release comes back labelled: it serves, the API server calls it, and it
  # has read the definitions. Nothing is written.
  probe='{"apiVersion":"v1","kind":"Secret","metadata":{"name":"e2e-lineage-probe","labels":{"helm.toolkit.fluxcd.io/name":"postgres-db"}}}'
  ready=""
  for _ in $(seq 1 120); do
    kill -0 "$pid" 2>/dev/null || { echo "upstream's lineage webhook exited:"; tail -20 "$work/log"; exit 1; }
    got=$(kubectl -n "$up" create --dry-run=server -o json -f - <<<"$probe" 2>/dev/null | jq -r '.metadata.labels["internal.cozystack.io/managed-by-cozystack"] // ""' || true)
    [[ "$got" == true ]] && { ready=yes; break; }
    sleep 0.5
  done
  [[ -n "$ready" ]] || { echo "upstream's lineage webhook labelled nothing within 60s:"; tail -20 "$work/log"; exit 1; }
  echo "upstream's lineage webhook ($LINEAGE_WEBHOOK_BIN) serves and labels upstream's release"

  # (a) Upstream's release: the labels each object was created with are the
  # webhook's (no controller had written to it yet).
  create "$up"
  for o in "${objects[@]}"; do
    got=$(jq -c "$lineage" "$work/$up/${o/\//.}.json")
    [[ "$got" == "$(expected "$o")" ]] || { echo "upstream's webhook wrote $got on $o of $up, not $(expected "$o")"; exit 1; }
  done
  echo "upstream's release: the webhook wrote the lineage labels of the table on ${#objects[@]} objects as they were created"
fi

# (b) Ours, with the webhook running when it is given.
create "$ours"
if [[ -n "$pid" ]]; then
  for o in "${objects[@]}"; do
    got=$(jq -c "$lineage" "$work/$ours/${o/\//.}.json")
    [[ "$got" == '{}' ]] || { echo "upstream's webhook wrote $got on $o of our release, created in $ours"; exit 1; }
  done
  # It was asked about them (the namespace's Secrets, Service and Pods).
  asked=$(grep -c "\"namespace\":\"$ours\",\"name\":\"" "$work/log" || true)
  [[ "$asked" -ge 6 ]] || { echo "upstream's webhook was asked about $asked objects of $ours, expected 6 or more:"; tail -20 "$work/log"; exit 1; }
  echo "our release: the webhook walked the objects' ownership ($asked requests) and wrote nothing"
else
  echo "LINEAGE_WEBHOOK_BIN is not set: upstream's lineage webhook NOT run; only the lineage controller's labels are checked, against the table"
fi
# The lineage controller labels them.
for o in "${objects[@]}"; do
  want=$(expected "$o")
  for _ in $(seq 1 180); do
    [[ "$(live "$ours" "$o" | jq -c "$lineage")" == "$want" ]] && break
    sleep 0.5
  done
  got=$(live "$ours" "$o" | jq -c "$lineage")
  [[ "$got" == "$want" ]] || { echo "$o of $ours carries $got after 90s, not $want"; exit 1; }
done
echo "our release: the lineage controller wrote the lineage labels of the table on ${#objects[@]} objects"
if [[ -n "$pid" ]]; then
  # Object by object, the same labels the webhook gave upstream's release
  # (helm-controller's namespace label aside).
  for o in "${objects[@]}"; do
    a=$(jq -cS 'del(."helm.toolkit.fluxcd.io/namespace")' "$work/$up/${o/\//.}.json")
    b=$(live "$ours" "$o" | jq -cS 'del(."helm.toolkit.fluxcd.io/namespace")')
    [[ "$a" == "$b" ]] || { echo "$o: the webhook gave upstream's release $a, the lineage controller ours $b"; exit 1; }
  done
  echo "every object of our release carries exactly the labels the webhook gave the same object of upstream's release"
fi
