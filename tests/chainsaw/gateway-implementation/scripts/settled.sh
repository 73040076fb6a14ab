#!/bin/sh
# settled.sh OBJECT...: a settled system stops writing. OBJECT is
# kind/name or namespace:kind/name (default namespace $NAMESPACE). Polls the
# objects' resourceVersions every 2 s and succeeds once none has changed for
# HOLD seconds (default 30); fails, with the number of writes seen and the
# objects' status, when they are still being written after LIMIT seconds
# (default 240): two controllers undoing each other's status never settle.
set -eu
hold=${HOLD:-30} limit=${LIMIT:-240}
versions() {
  for o in "$@"; do
    case "$o" in *:*) ns=${o%%:*} obj=${o#*:} ;; *) ns=$NAMESPACE obj=$o ;; esac
    printf '%s=%s ' "$o" "$(kubectl -n "$ns" get "$obj" -o jsonpath='{.metadata.resourceVersion}')"
  done
}
last=$(versions "$@") still=0 writes=0 waited=0
while [ "$still" -lt "$hold" ]; do
  if [ "$waited" -ge "$limit" ]; then
    echo "still written after ${limit}s: ${writes} writes seen, last $last"
    for o in "$@"; do
      case "$o" in *:*) ns=${o%%:*} obj=${o#*:} ;; *) ns=$NAMESPACE obj=$o ;; esac
      kubectl -n "$ns" get "$obj" -o jsonpath='{.metadata.name}{": "}{.status}{"\n"}'
    done
    exit 1
  fi
  sleep 2
  waited=$((waited + 2))
  now=$(versions "$@")
  if [ "$now" = "$last" ]; then still=$((still + 2)); else still=0 writes=$((writes + 1)) last=$now; fi
done
echo "no write for ${hold}s (${writes} write rounds before, ${waited}s in all): $last"
