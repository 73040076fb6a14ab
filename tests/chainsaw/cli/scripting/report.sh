#!/usr/bin/env bash
# report.sh NAME STATUS REASON MESSAGE: plays helm-controller, reporting the
# HelmRelease script-NAME of $NAMESPACE handled at its current generation with
# Ready=STATUS.
set -euo pipefail
name=$1 status=$2 reason=$3 message=$4
gen=$(kubectl -n "$NAMESPACE" get helmrelease "script-${name}" -o jsonpath='{.metadata.generation}')
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl -n "$NAMESPACE" patch helmrelease "script-${name}" --subresource=status --type=merge -p "{\"status\":{\"observedGeneration\":${gen},
  \"lastAttemptedRevision\":\"1.0.0\",
  \"conditions\":[{\"type\":\"Ready\",\"status\":\"${status}\",\"reason\":\"${reason}\",\"message\":\"${message}\",\"observedGeneration\":${gen},\"lastTransitionTime\":\"${now}\"}]}}"
