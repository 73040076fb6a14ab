# Sourced by kubelet.sh and load-balancer.sh. owned KIND GATEWAY: prints the
# name of the one KIND (deployment, service) Envoy Gateway created for
# Gateway GATEWAY of $NAMESPACE in its own namespace ($ns), found by its
# gateway.envoyproxy.io/owning-gateway-{name,namespace} labels; waits up to
# 120 s for it to appear, and fails when there is none or more than one.
owned() {
  kind=$1 gw=$2
  sel="gateway.envoyproxy.io/owning-gateway-name=$gw,gateway.envoyproxy.io/owning-gateway-namespace=$NAMESPACE"
  waited=0
  while :; do
    found=$(kubectl -n "$ns" get "$kind" -l "$sel" -o jsonpath='{.items[*].metadata.name}')
    [ -z "$found" ] || break
    if [ "$waited" -ge 120 ]; then
      echo "Envoy Gateway created no $kind for Gateway $NAMESPACE/$gw in ${waited}s" >&2
      kubectl -n "$ns" get "$kind" --show-labels >&2
      return 1
    fi
    sleep 2
    waited=$((waited + 2))
  done
  case "$found" in *" "*) echo "more than one $kind for Gateway $NAMESPACE/$gw: $found" >&2; return 1 ;; esac
  echo "$found"
}
