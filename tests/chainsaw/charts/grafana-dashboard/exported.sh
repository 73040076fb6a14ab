#!/usr/bin/env bash
# The metrics the controllers the e2e suite runs export, on their live
# /metrics.
#
#   exported.sh wait NAME        waits (at most 3 minutes) until some
#                                controller exports a sample of NAME
#   exported.sh check DASHBOARD  checks that every metric the Grafana
#                                dashboard's PromQL reads is exported
#
# The controllers run as hack/controllers.sh starts them for hack/e2e.sh:
# every one, metrics in plain HTTP (no --metrics-secure) on 127.0.0.1 at
# CONTROLLER_PORT_BASE + 2 * its place in `hack/controllers.sh list`.
# A name counts as exported when a sample line of some controller's /metrics
# carries it (a histogram's samples are NAME_bucket, NAME_sum, NAME_count,
# which is how PromQL reads them). `up` is the one series the dashboard reads
# that no controller exports: Prometheus writes it for every target it
# scrapes. A counter has no sample until it first counts, so the names are
# polled (at most 3 minutes). check checks itself: a name no controller
# exports is reported, and the extraction finds the names of a known
# expression.
set -euo pipefail
root=../../../..
fail() { echo "FAIL: $*"; exit 1; }
[[ -n "${CONTROLLER_PORT_BASE:-}" ]] || fail "CONTROLLER_PORT_BASE is not set: run through hack/e2e.sh"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT

# scrape: the sample names of every controller's /metrics into
# ${tmp}/exported, sorted.
mapfile -t names < <("${root}/hack/controllers.sh" list)
scrape() {
  local i port
  : > "${tmp}/exported.all"
  for i in "${!names[@]}"; do
    port=$((CONTROLLER_PORT_BASE + 2 * (i + 1)))
    curl -fsS --max-time 10 "http://127.0.0.1:${port}/metrics" > "${tmp}/m" ||
      fail "controller ${names[${i}]} serves no /metrics on 127.0.0.1:${port}"
    grep -v '^#' "${tmp}/m" | sed -E 's/[{ ].*//' >> "${tmp}/exported.all"
  done
  sort -u "${tmp}/exported.all" > "${tmp}/exported"
}

# await FILE: polls until every name of FILE is exported; prints those
# that are not after 3 minutes.
await() {
  local missing=""
  for _ in $(seq 1 90); do
    scrape
    missing=$(comm -23 "$1" "${tmp}/exported")
    [[ -n "${missing}" ]] || return 0
    sleep 2
  done
  echo "${missing}"
}

case "${1:-}" in
  wait)
    echo "$2" > "${tmp}/want"
    missing=$(await "${tmp}/want")
    [[ -z "${missing}" ]] || fail "no controller exports $2 after 3 minutes"
    echo "exported: $2"
    ;;
  check)
    # The extraction finds exactly the metrics of a known expression.
    printf '%s' '{"panels":[{"targets":[{"expr":"sum by (le, job) (rate(a_seconds_bucket{x=\"y_total\"}[$__rate_interval])) / on(job) group_left(pod) b_total > 1e-9 and max without (z) (c:recorded offset 5m)"}]}],
      "templating":{"list":[{"type":"query","query":{"query":"label_values(d_info{job=~\"$job\"}, pod)"}}]}}' |
      ./metric-names.sh > "${tmp}/known"
    [[ "$(tr '\n' ' ' < "${tmp}/known")" == "a_seconds_bucket b_total c:recorded d_info " ]] ||
      fail "the extraction of a known expression gave: $(tr '\n' ' ' < "${tmp}/known")"

    ./metric-names.sh < "$2" | grep -vx up > "${tmp}/used"
    n=$(wc -l < "${tmp}/used")
    [[ ${n} -ge 20 ]] || fail "only ${n} metric names in the dashboard: $(tr '\n' ' ' < "${tmp}/used")"
    # Every metric of the project's own is on the dashboard.
    grep -rhoE --include='*.go' --exclude='*_test.go' '"cozystack_[a-z_]+"' "${root}/pkg" "${root}/controllers" | tr -d '"' | sort -u > "${tmp}/ours"
    missing_ours=$(comm -23 "${tmp}/ours" "${tmp}/used")
    [[ -z "${missing_ours}" ]] || fail "metrics the controllers define that the dashboard does not show: $(echo ${missing_ours})"

    # The check fails for a name no controller exports.
    scrape
    printf 'cozystack_no_such_metric_total\n' | comm -23 - "${tmp}/exported" | grep -qx cozystack_no_such_metric_total ||
      fail "a metric no controller exports passed the check"

    missing=$(await "${tmp}/used")
    [[ -z "${missing}" ]] || fail "the dashboard reads metrics no controller exports: $(echo ${missing})"
    echo "every metric the dashboard reads is exported: ${n} names from ${#names[@]} controllers"
    ;;
  *) fail "usage: $0 wait NAME | check DASHBOARD" ;;
esac
