#!/usr/bin/env bash
# report.sh NAME OUTCOME [ARGS]: helm-controller reports OUTCOME on the
# HelmRelease script-NAME of $NAMESPACE (../../_scripts/neighbours/helm-controller.sh:
# install-succeeded VERSION, upgrade-failed MESSAGE VERSION, ...).
set -euo pipefail
name=$1 outcome=$2
shift 2
"$(dirname "$0")/../../_scripts/neighbours/helm-controller.sh" "$outcome" "$NAMESPACE" "script-${name}" "$@"
