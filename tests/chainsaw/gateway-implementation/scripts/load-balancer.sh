#!/bin/sh
# load-balancer.sh GATEWAY IP: plays the cloud load balancer, and only that.
# Envoy Gateway (provider Kubernetes) publishes Gateway GATEWAY (in
# $NAMESPACE) through a Service of type LoadBalancer it creates in its own
# namespace (ENVOY_GATEWAY_NAMESPACE, default envoy-gateway-system), labelled
# gateway.envoyproxy.io/owning-gateway-{name,namespace}. Once it exists, this
# writes IP in its status.loadBalancer.ingress, as a cloud's service
# controller would; Envoy Gateway then reads the address from there
# (UpdateGatewayStatusProgrammedCondition, internal/gatewayapi/status).
set -eu
gw=$1 ip=$2
ns=${ENVOY_GATEWAY_NAMESPACE:-envoy-gateway-system}
. "$(dirname "$0")/owned.sh"
svc=$(owned service "$gw")
type=$(kubectl -n "$ns" get service "$svc" -o jsonpath='{.spec.type}')
[ "$type" = LoadBalancer ] || { echo "Service $ns/$svc is of type $type: no load balancer serves it"; exit 1; }
kubectl -n "$ns" patch service "$svc" --subresource=status --type=merge \
  -p "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"$ip\"}]}}}" >/dev/null
echo "load balancer: Service $ns/$svc has address $ip"
