#!/usr/bin/env bash
# Installs the Prometheus Operator's ServiceMonitor and PrometheusRule CRDs
# from its Go module (the YAML ships in the module zip, fetched through the
# Go module proxy like the Gateway API and cert-manager CRDs), so the API
# server validates our rendered objects against the real schemas.
#
#   prometheus-crds.sh REPO_ROOT install   prints "installed" or "present"
#   prometheus-crds.sh REPO_ROOT remove    removes them (only call it after "installed")
set -euo pipefail
source "$1/hack/lib.sh"
PROMETHEUS_OPERATOR_VERSION=v0.85.0
crds=(servicemonitors.monitoring.coreos.com prometheusrules.monitoring.coreos.com)
case "$2" in
  install)
    if kubectl get crd "${crds[@]}" >/dev/null 2>&1; then echo present; exit 0; fi
    dir=$(moddir "github.com/prometheus-operator/prometheus-operator@${PROMETHEUS_OPERATOR_VERSION}")
    [[ -d "${dir}" ]] || die "could not download the prometheus-operator module"
    kubectl apply --server-side -f "${dir}/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
      -f "${dir}/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" >/dev/null
    kubectl wait --for=condition=Established --timeout=60s crd "${crds[@]}" >/dev/null
    echo installed
    ;;
  remove) kubectl delete crd "${crds[@]}" --ignore-not-found --wait=false >/dev/null ;;
  *) die "usage: $0 REPO_ROOT install|remove" ;;
esac
