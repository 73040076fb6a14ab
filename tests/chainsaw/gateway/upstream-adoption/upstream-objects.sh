#!/usr/bin/env bash
# Plays upstream Cozystack's TenantGateway controller: writes, with full
# updates under its field manager, the objects it would have created for the
# TenantGateway cozystack of NAMESPACE: its labels, a controller owner
# reference to the TenantGateway, and the shape of an older state (a
# listener and a per-listener Certificate for a hostname no route claims any
# more, the wildcard Certificate of a former DNS-01 phase, its redirect route
# without hostnames). Placeholders without an owner hold the derived names
# while the TenantGateway is created, so that our controllers refuse them
# until they become upstream's.
#
#   upstream-objects.sh placeholders NAMESPACE
#   upstream-objects.sh own NAMESPACE
set -euo pipefail
step=$1 ns=$2
fm=cozystack-controller
labels='{"cozystack.io/managed-by":"cozystack-controller"}'
case "${step}" in
placeholders)
  kubectl -n "${ns}" create --field-manager="${fm}" -f - <<YAML >/dev/null
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: cozystack
spec:
  gatewayClassName: cilium
  listeners:
  - name: http
    port: 80
    protocol: HTTP
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: cozystack-http-redirect
spec:
  parentRefs:
  - name: cozystack
    sectionName: http
  rules:
  - filters:
    - type: RequestRedirect
      requestRedirect: {scheme: https, statusCode: 301}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: cozystack-gateway
spec:
  acme:
    server: https://acme-v02.api.letsencrypt.org/directory
    privateKeySecretRef: {name: cozystack-acme-account}
    solvers:
    - dns01:
        cloudflare:
          apiTokenSecretRef: {name: old-token, key: api-token}
YAML
  ;;
own)
  uid=$(kubectl -n "${ns}" get tenantgateway cozystack -o jsonpath='{.metadata.uid}')
  owner="[{\"apiVersion\":\"gateway.cozystack.io/v1alpha1\",\"kind\":\"TenantGateway\",\"name\":\"cozystack\",\"uid\":\"${uid}\",\"controller\":true,\"blockOwnerDeletion\":true}]"
  # The Gateway as upstream left it: its labels, and a listener for a
  # hostname no route claims any more.
  kubectl -n "${ns}" patch gateway cozystack --field-manager="${fm}" --type=merge -p "{
    \"metadata\":{\"ownerReferences\":${owner},\"labels\":{\"cozystack.io/gateway\":\"${ns}\",\"cozystack.io/managed-by\":\"cozystack-controller\"}},
    \"spec\":{\"listeners\":[{\"name\":\"http\",\"port\":80,\"protocol\":\"HTTP\"},
      {\"name\":\"https-gone-0a1b2c3d\",\"port\":443,\"protocol\":\"HTTPS\",\"hostname\":\"gone.example.org\",
       \"tls\":{\"mode\":\"Terminate\",\"certificateRefs\":[{\"name\":\"cozystack-gone-0a1b2c3d-tls\"}]}}]}}" >/dev/null
  kubectl -n "${ns}" patch httproute cozystack-http-redirect --field-manager="${fm}" --type=merge -p "{
    \"metadata\":{\"ownerReferences\":${owner},\"labels\":{\"cozystack.io/managed-by\":\"cozystack-controller\",\"cozystack.io/tenantgateway\":\"cozystack\"}}}" >/dev/null
  kubectl -n "${ns}" patch issuer cozystack-gateway --field-manager="${fm}" --type=merge -p "{
    \"metadata\":{\"ownerReferences\":${owner},\"labels\":${labels}}}" >/dev/null
  # Certificates of earlier states: a per-listener one, and the wildcard one.
  kubectl -n "${ns}" create --field-manager="${fm}" -f - <<YAML >/dev/null
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: cozystack-gone-0a1b2c3d-tls
  labels:
    cozystack.io/managed-by: cozystack-controller
    cozystack.io/tenantgateway: cozystack
    cozystack.io/per-listener-cert: "true"
  ownerReferences: ${owner}
spec:
  secretName: cozystack-gone-0a1b2c3d-tls
  issuerRef: {kind: Issuer, name: cozystack-gateway}
  dnsNames: [gone.example.org]
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: cozystack-gateway-tls
  labels:
    cozystack.io/managed-by: cozystack-controller
  ownerReferences: ${owner}
spec:
  secretName: cozystack-gateway-tls
  issuerRef: {kind: Issuer, name: cozystack-gateway}
  dnsNames: [example.org, "*.example.org"]
YAML
  ;;
esac
