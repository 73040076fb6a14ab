#!/usr/bin/env bash
# The metrics the controllers of the e2e run export on their live /metrics.
#
#   exported.sh DIR wait NAME [SECONDS]  waits (default at most 3 minutes)
#                                        until a controller exports NAME
#   exported.sh DIR check DASHBOARD      checks that every metric the Grafana
#                                        dashboard's PromQL reads is exported
#
# The controllers are those of the run's directory (COZY_LOG_DIR, as
# hack/controllers.sh starts them for hack/e2e.sh, and any a scenario
# restarted or added as a shard): every NAME.pid there whose process runs a
# controller-* binary, its metrics at the bindAddress its NAME.log says it
# serves them on (plain HTTP: the suite runs no --metrics-secure). A
# controller another scenario stops or restarts meanwhile is skipped, or
# found at its new address.
# A name counts as exported once a sample line of some controller's /metrics
# carried it (a histogram's samples are NAME_bucket, NAME_sum, NAME_count,
# which is how PromQL reads them); DIR/exported keeps every name seen by the
# scenario's calls, so a counter seen before its controller restarted counts.
# `up` is the one series the dashboard reads that no controller exports:
# Prometheus writes it for every target it scrapes. A counter has no sample
# until it first counts, so the names are polled. check checks itself: a
# name no controller exports is reported, and the extraction finds the names
# of a known expression.
set -euo pipefail
root=../../../..
fail() { echo "FAIL: $*"; exit 1; }
logs=${COZY_LOG_DIR:?the e2e run directory: run through hack/e2e.sh}
dir=$1
mkdir -p "${dir}"
touch "${dir}/exported"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT

# scrape: adds the sample names of every running controller's /metrics to
# DIR/exported; fails when no controller answers.
scrape() {
  local f alias pid exe addr answered=0
  for f in "${logs}"/*.pid; do
    [[ -e "${f}" ]] || continue
    alias=$(basename "${f}" .pid)
    pid=$(cat "${f}" 2>/dev/null) || continue
    exe=$(readlink "/proc/${pid}/exe" 2>/dev/null) || continue
    [[ "$(basename "${exe}")" == controller-* ]] || continue
    addr=$(grep -h '"msg":"Serving metrics server"' "${logs}/${alias}.log" 2>/dev/null | tail -n1 |
      sed -nE 's/.*"bindAddress":"([^"]+)".*/\1/p')
    [[ -n "${addr}" ]] || continue
    curl -fsS --max-time 10 "http://${addr}/metrics" > "${tmp}/m" 2>/dev/null || continue
    answered=$((answered + 1))
    grep -v '^#' "${tmp}/m" | sed -E 's/[{ ].*//' >> "${dir}/exported"
  done
  [[ ${answered} -gt 0 ]] || fail "no controller of ${logs} serves /metrics"
  sort -u -o "${dir}/exported" "${dir}/exported"
  echo "${answered}" > "${tmp}/answered"
}

# await FILE SECONDS: polls until every name of FILE was exported; prints
# those that were not when the time is up.
await() {
  local missing="" deadline=$((SECONDS + $2))
  while :; do
    scrape
    missing=$(comm -23 "$1" "${dir}/exported")
    [[ -n "${missing}" && ${SECONDS} -lt ${deadline} ]] || break
    sleep 2
  done
  echo "${missing}"
}

case "${2:-}" in
  wait)
    echo "$3" > "${tmp}/want"
    missing=$(await "${tmp}/want" "${4:-180}")
    [[ -z "${missing}" ]] || fail "no controller exports $3 after ${4:-180} seconds"
    echo "exported: $3"
    ;;
  check)
    # The extraction finds exactly the metrics of a known expression.
    printf '%s' '{"panels":[{"targets":[{"expr":"sum by (le, job) (rate(a_seconds_bucket{x=\"y_total\"}[$__rate_interval])) / on(job) group_left(pod) b_total > 1e-9 and max without (z) (c:recorded offset 5m)"}]}],
      "templating":{"list":[{"type":"query","query":{"query":"label_values(d_info{job=~\"$job\"}, pod)"}}]}}' |
      ./metric-names.sh > "${tmp}/known"
    [[ "$(tr '\n' ' ' < "${tmp}/known")" == "a_seconds_bucket b_total c:recorded d_info " ]] ||
      fail "the extraction of a known expression gave: $(tr '\n' ' ' < "${tmp}/known")"

    ./metric-names.sh < "$3" | grep -vx up > "${tmp}/used"
    n=$(wc -l < "${tmp}/used")
    [[ ${n} -ge 20 ]] || fail "only ${n} metric names in the dashboard: $(tr '\n' ' ' < "${tmp}/used")"
    # Every metric of the project's own is on the dashboard.
    grep -rhoE --include='*.go' --exclude='*_test.go' '"cozystack_[a-z_]+"' "${root}/pkg" "${root}/controllers" | tr -d '"' | sort -u > "${tmp}/ours"
    missing_ours=$(comm -23 "${tmp}/ours" "${tmp}/used")
    [[ -z "${missing_ours}" ]] || fail "metrics the controllers define that the dashboard does not show: $(echo ${missing_ours})"

    # The check fails for a name no controller exports.
    scrape
    printf 'cozystack_no_such_metric_total\n' | comm -23 - "${dir}/exported" | grep -qx cozystack_no_such_metric_total ||
      fail "a metric no controller exports passed the check"

    missing=$(await "${tmp}/used" 180)
    [[ -z "${missing}" ]] || fail "the dashboard reads metrics no controller exports: $(echo ${missing})"
    echo "every metric the dashboard reads is exported: ${n} names, the last scrape from $(cat "${tmp}/answered") controllers"
    ;;
  *) fail "usage: $0 DIR wait NAME [SECONDS] | DIR check DASHBOARD" ;;
esac
