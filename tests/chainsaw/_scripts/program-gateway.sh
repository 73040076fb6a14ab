#!/usr/bin/env bash
# Writes a Gateway's status as a Gateway implementation (Cilium) would: the
# Gateway Accepted, Programmed as given, every listener Accepted,
# ResolvedRefs and Programmed except those named as not ready, which report
# a missing certificate Secret. No pods run in the test environment, so the
# scenarios play the implementation's part.
#
#   program-gateway.sh NAMESPACE NAME [True|False] [NOT_READY_LISTENER...]
set -euo pipefail
ns=$1 name=$2 programmed=${3:-True}
shift $(( $# < 3 ? $# : 3 ))
gw=$(kubectl -n "${ns}" get gateway "${name}" -o json)
bad=$(printf '%s\n' "$@" | jq -R . | jq -cs 'map(select(. != ""))')
status=$(jq -c --arg now "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg prog "${programmed}" --argjson bad "${bad}" '
  .metadata.generation as $gen
  | def cond(t; s; r; m): {type: t, status: s, reason: r, message: m, observedGeneration: $gen, lastTransitionTime: $now};
  {status: {
    conditions: [
      cond("Accepted"; "True"; "Accepted"; "Gateway accepted"),
      (if $prog == "True" then cond("Programmed"; "True"; "Programmed"; "Gateway programmed")
       else cond("Programmed"; "False"; "AddressNotAssigned"; "no load-balancer address assigned") end)],
    listeners: [.spec.listeners[] | .name as $n | {
      name: $n, attachedRoutes: 0,
      supportedKinds: [(.allowedRoutes.kinds // [])[] | {group: .group, kind: .kind}],
      conditions: (if ($bad | index($n)) != null then
          [cond("Accepted"; "True"; "Accepted"; ""),
           cond("ResolvedRefs"; "False"; "InvalidCertificateRef"; "certificate Secret not found"),
           cond("Programmed"; "False"; "Invalid"; "listener is invalid")]
        else
          [cond("Accepted"; "True"; "Accepted"; ""),
           cond("ResolvedRefs"; "True"; "ResolvedRefs"; ""),
           cond("Programmed"; "True"; "Programmed"; "")]
        end)}]}}' <<<"${gw}")
kubectl -n "${ns}" patch gateway "${name}" --subresource=status --type=merge -p "${status}" >/dev/null
