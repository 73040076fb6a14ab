#!/bin/sh
# kubelet.sh GATEWAY: plays the kubelet and the Deployment controller, and
# only them: the envoy Pods of Gateway GATEWAY (in $NAMESPACE) run and are
# ready. Envoy Gateway runs them as a Deployment in its own namespace
# (ENVOY_GATEWAY_NAMESPACE, default envoy-gateway-system), labelled
# gateway.envoyproxy.io/owning-gateway-{name,namespace}; no kubelet runs here,
# so this writes the status a Deployment controller would once every replica
# is available. Envoy Gateway reads status.availableReplicas and programs the
# Gateway when it is above 0 and the Gateway has an address.
set -eu
gw=$1
ns=${ENVOY_GATEWAY_NAMESPACE:-envoy-gateway-system}
. "$(dirname "$0")/owned.sh"
deploy=$(owned deployment "$gw")
gen=$(kubectl -n "$ns" get deployment "$deploy" -o jsonpath='{.metadata.generation}')
replicas=$(kubectl -n "$ns" get deployment "$deploy" -o jsonpath='{.spec.replicas}')
[ "${replicas:-0}" -gt 0 ] || { echo "Deployment $ns/$deploy asks for no replica"; exit 1; }
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl -n "$ns" patch deployment "$deploy" --subresource=status --type=merge -p "{\"status\":{
  \"observedGeneration\":$gen,\"replicas\":$replicas,\"updatedReplicas\":$replicas,\"readyReplicas\":$replicas,\"availableReplicas\":$replicas,
  \"conditions\":[{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"MinimumReplicasAvailable\",
  \"message\":\"Deployment has minimum availability.\",\"lastUpdateTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null
echo "kubelet: Deployment $ns/$deploy has $replicas of $replicas replicas available"
