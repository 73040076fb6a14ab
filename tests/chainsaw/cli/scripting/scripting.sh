#!/usr/bin/env bash
# Scripts cozyplane the way a pipeline would: -o json through jq, a label
# selector, a status filter, the exit status of each kind of failure, and
# get --watch as a stream of JSON events.
set -euo pipefail
ns=$NAMESPACE
fail() { echo "FAIL: $*"; exit 1; }
eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; echo "ok: $3"; }

eq "$(cozyplane get e2ecliscript -n "$ns" -o json | jq -r '.kind + " " + ([.items[].metadata.name] | sort | join(","))')" \
  "List broken,ok" "get -o json is a List of the instances"
eq "$(cozyplane get -n "$ns" --status not-ready -o json | jq -r '[.items[].metadata.name] | join(",")')" \
  "broken" "--status not-ready"
eq "$(cozyplane get -n "$ns" --status ready -o json | jq -r '[.items[].metadata.name] | join(",")')" \
  "ok" "--status ready"
eq "$(cozyplane get e2ecliscripts -n "$ns" -l tier=web -o json | jq -r '[.items[].metadata.name] | join(",")')" \
  "ok" "-l tier=web"
eq "$(cozyplane get e2ecliscript/broken -n "$ns" -o json | jq -r '.status.conditions[] | select(.type == "Ready") | .reason')" \
  "UpgradeFailed" "get KIND/NAME -o json is the object"
eq "$(cozyplane get e2ecliscript broken -n "$ns" -o yaml | grep -c '^kind: E2eCliScript$')" "1" "get KIND NAME -o yaml"
eq "$(cozyplane trace e2ecliscript/broken -n "$ns" -o json | jq -r '.children[0] | .kind + " " + .name + " " + .condition + "=" + .status')" \
  "HelmRelease script-broken Ready=False" "trace -o json names the backing object and its Ready"
wide=$(cozyplane trace e2ecliscript/broken -n "$ns" -o wide)
echo "$wide"
grep -qE '└── HelmChart cozy-system/cli-script  Ready=' <<<"$wide" || fail "trace -o wide names the chart source"
grep -qE 'event [0-9a-z]+ ago: Warning UpgradeFailed: Helm upgrade failed: boom$' <<<"$wide" || fail "trace -o wide shows the backing object's events"
table=$(cozyplane get e2ecliscript -n "$ns")
echo "$table"
grep -qE "^E2eCliScript +broken +False +UpgradeFailed +.* +HelmRelease/script-broken +Helm upgrade failed for release $ns/script-broken with chart cli-script@1\.0\.1: boom\$" <<<"$table" \
  || fail "the table's MESSAGE column"

# events: what helm-controller recorded about the backing object, found from the instance.
eq "$(cozyplane events e2ecliscript/broken -n "$ns" -o json | jq -r '.kind + " " + ([.items[] | select(.involvedObject.kind == "HelmRelease") | .involvedObject.kind + "/" + .involvedObject.name + " " + .reason] | join(","))')" \
  "List HelmRelease/script-broken UpgradeFailed" "events -o json lists the backing object's events"
events=$(cozyplane events e2ecliscript/broken -n "$ns")
echo "$events"
grep -qE '^[0-9a-z]+ +Warning +UpgradeFailed +HelmRelease/script-broken +Helm upgrade failed: boom$' <<<"$events" || fail "the events table"

# Completion of kinds and names (what the shell scripts of `cozyplane completion` call).
eq "$(cozyplane __complete get e2ecliscript -n "$ns" "" 2>/dev/null | grep -v '^:' | sort | paste -sd,)" "broken,ok" "completion of names"
eq "$(cozyplane __complete trace -n "$ns" "e2ecliscript/b" 2>/dev/null | grep -v '^:' | paste -sd,)" "e2ecliscript/broken" "completion of KIND/NAME"

status_of() { local s=0; "$@" >/dev/null 2>&1 || s=$?; echo "$s"; }
eq "$(status_of cozyplane get e2ecliscript nope -n "$ns")" 4 "get of a missing instance exits 4 (not found)"
eq "$(status_of cozyplane trace e2ecliscript/nope -n "$ns")" 4 "trace of a missing instance exits 4"
eq "$(status_of cozyplane get nosuchkind -n "$ns")" 4 "a kind not served exits 4"
eq "$(status_of cozyplane get -n "$ns" -o xml)" 64 "an unknown output format exits 64 (usage)"
eq "$(status_of cozyplane trace broken -n "$ns")" 64 "a malformed KIND/NAME exits 64"
eq "$(status_of cozyplane get e2ecliscript -n "$ns" --status ready)" 0 "a listing exits 0"

# --watch: the listed instance first, then the change helm-controller reports.
tmp=$(mktemp -d)
cozyplane get e2ecliscript ok -n "$ns" --watch -o json >"$tmp/events" 2>"$tmp/err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
# (no grep -q at the end of a pipe: with pipefail, the writer it leaves behind fails the pipe)
seen() { grep -qx "$2" <<<"$(jq -r "$1" <"$tmp/events" 2>/dev/null)"; }
for _ in $(seq 1 150); do seen 'select(.type == "ADDED") | .object.metadata.name' ok && break; sleep 0.2; done
seen 'select(.type == "ADDED") | .object.metadata.name' ok || { cat "$tmp/events" "$tmp/err"; fail "watch did not list the instance"; }
"$(dirname "$0")/report.sh" ok install-failed "went away" 1.0.0
for _ in $(seq 1 300); do
  seen 'select(.type == "MODIFIED") | .object.status.conditions[]? | select(.type == "Ready") | .status + " " + .reason' "False InstallFailed" && break
  sleep 0.2
done
seen 'select(.type == "MODIFIED") | .object.status.conditions[]? | select(.type == "Ready") | .status + " " + .reason' "False InstallFailed" \
  || { cat "$tmp/events" "$tmp/err"; fail "watch did not print the change"; }
kill -0 "$pid" || fail "get --watch ended by itself"
[ "$(jq -r '.object.metadata.name' <"$tmp/events" | sort -u)" = ok ] || fail "watch of one name printed another"
echo "ok: get --watch -o json streams the change"

# reconcile --force --reset: the three requests reach the HelmRelease with one value, as
# `flux reconcile hr --force --reset` writes them.
kill "$pid" 2>/dev/null || true
cozyplane reconcile e2ecliscript/ok -n "$ns" --force --reset --timeout 0
hr() { kubectl -n "$ns" get helmrelease script-ok -o jsonpath="{.metadata.annotations.reconcile\.fluxcd\.io/$1}"; }
inst=$(kubectl -n "$ns" get e2ecliscript ok -o jsonpath='{.metadata.annotations.reconcile\.fluxcd\.io/requestedAt}')
[ -n "$inst" ] || fail "reconcile --force wrote no request on the instance"
for _ in $(seq 1 150); do [ "$(hr requestedAt)" = "$inst" ] && break; sleep 0.2; done
eq "$(hr requestedAt) $(hr forceAt) $(hr resetAt)" "$inst $inst $inst" "requestedAt, forceAt and resetAt reach the HelmRelease with one value"
eq "$(status_of cozyplane reconcile e2ecliscript/ok -n "$ns" --force --timeout 0 --frobnicate)" 64 "a wrong flag exits 64"

# Acting on several: every instance of the kind, each waiting; nobody answers, so both time out.
s=0
out=$(cozyplane reconcile e2ecliscript --all -n "$ns" --timeout 3s 2>&1) || s=$?
echo "$out"
eq "$s" 5 "reconcile --all whose requests all time out exits 5"
grep -q "2 of 2 instances failed" <<<"$out" || fail "reconcile --all names the count of failures"
for n in ok broken; do
  [ -n "$(kubectl -n "$ns" get e2ecliscript "$n" -o jsonpath='{.metadata.annotations.reconcile\.fluxcd\.io/requestedAt}')" ] \
    || fail "reconcile --all left $n unannotated"
done
eq "$(status_of cozyplane reconcile e2ecliscript -l tier=none -n "$ns")" 4 "-l matching nothing exits 4"

# check --pre reads the control plane's CRDs (the e2e suite installs Gateway API's standard
# channel, cert-manager's and the Terraform CRD) and finds this namespace's HelmReleases without
# the Secret cozystack-values: it fails (exit 2), with what to do for each finding.
s=0
cozyplane check --pre -o json >"$tmp/pre.json" || s=$?
cat "$tmp/pre.json"
eq "$s" 2 "check --pre with a finding exits 2"
eq "$(jq -r '[.checks[] | select(.name | test("^crds-(gateway-api|cert-manager|tofu-controller)$")) | .name + "=" + .verdict] | sort | join(",")' "$tmp/pre.json")" \
  "crds-cert-manager=pass,crds-gateway-api=pass,crds-tofu-controller=pass" "check --pre reads the CRDs and their versions"
named() { jq -r --arg ns "$ns" '.checks[] | select(.name == "cozystack-values") | .detail | test("[ ,]" + $ns + "[,:]") | tostring' "$1"; }
eq "$(named "$tmp/pre.json")" true "check --pre names this namespace, whose HelmReleases lack cozystack-values"
eq "$(jq -r '[.checks[] | select(.verdict != "pass" and (.fix // "") == "")] | length' "$tmp/pre.json")" 0 "every finding says what to do"

# What the finding says to do closes it: with the Secret, this namespace is no longer named.
kubectl -n "$ns" create secret generic cozystack-values >/dev/null
cozyplane check --pre -o json >"$tmp/pre2.json" || true
eq "$(named "$tmp/pre2.json")" false "after kubectl create secret generic cozystack-values, check --pre no longer names this namespace"
