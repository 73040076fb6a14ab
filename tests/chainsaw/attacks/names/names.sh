#!/usr/bin/env bash
# A tenant holding the built-in edit ClusterRole in its namespace claims
# names and platform-owned settings through other kinds than Gateways and
# routes, one case per chainsaw step: names.sh CASE. Every case first checks
# that RBAC alone would let the tenant do it (kubectl auth can-i), so the
# refusal that follows is the admission policy's; then it tries the attack,
# asserts which policy refused it and that the message says what to do
# instead, and does the legitimate thing next to it.
#
#   t       the tenant namespace (tenant-nm-<test id>), apex nm.example.org
#   tenant  kubectl arguments impersonating the tenant, mallory
set -euo pipefail
cd "$(dirname "$0")"
t=tenant-nm-${NAMESPACE#chainsaw-}
tenant=(--as=mallory --as-group=system:authenticated)
a=../../_scripts/admission.sh
C=cozyplane-certificate-names-policy
R=cozyplane-certificaterequest-policy
A=cozyplane-ingress-annotations-policy
F=cozyplane-tenant-platform-fields-policy
X=cozyplane-service-externalips-policy

# can VERB RESOURCE: fails unless RBAC lets the tenant do it in $t.
can() {
  if [[ "$(kubectl auth can-i "$1" "$2" -n "$t" "${tenant[@]}" || true)" != yes ]]; then
    echo "RBAC does not let the tenant $1 $2: the attack would prove nothing"; exit 1
  fi
  echo "RBAC alone allows the tenant to $1 $2"
}
# K: kubectl as the tenant in its namespace (an array, so admission.sh can run it)
K=(kubectl -n "$t" "${tenant[@]}")
# kubectl as a platform service account in $t: cert-manager, Flux's
# helm-controller
sa() { echo "kubectl -n $t --as=system:serviceaccount:$1:$2 --as-group=system:serviceaccounts --as-group=system:serviceaccounts:$1 --as-group=system:authenticated"; }
# Their namespaces: CERT_MANAGER_NAMESPACE and FLUX_NAMESPACE (hack/e2e.sh exports them).
read -ra CM <<<"$(sa "${CERT_MANAGER_NAMESPACE:-cozy-cert-manager}" cert-manager)"
read -ra FLUX <<<"$(sa "${FLUX_NAMESPACE:-cozy-fluxcd}" helm-controller)"
admin() { kubectl -n "$t" "$@"; }

cert() { # cert NAME SPEC-LINES: a Certificate manifest
  printf 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: %s}\nspec:\n  secretName: %s-tls\n%s\n' "$1" "$1" "$2"
}
le='  issuerRef: {kind: ClusterIssuer, name: letsencrypt-prod}'
own='  issuerRef: {kind: Issuer, name: own-ca}'
ing() { # ing NAME ANNOTATIONS-JSON: an Ingress under the apex with these annotations
  printf 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  annotations: %s\nspec:\n  rules: [{host: app.nm.example.org, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]\n' "$1" "$2"
}
tnt() { # tnt NAME SPEC-JSON: a Tenant manifest
  printf 'apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: %s}\nspec: %s\n' "$1" "$2"
}
svc() { # svc NAME SPEC-LINES: a Service manifest
  printf 'apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec:\n  ports: [{port: 80}]\n%s\n' "$1" "$2"
}

case "$1" in
certificate)
  can create certificates.cert-manager.io; can update certificates.cert-manager.io
  # Through the platform's ACME ClusterIssuer: another tenant's, the platform's or anyone's name.
  cert steal "$le
  dnsNames: [app.nm.example.org, dashboard.example.org]" | $a deny $C "asks for names it may not claim: dashboard.example.org. spec.dnsNames and spec.commonName must equal nm.example.org or be under it (the namespace.cozystack.io/host label of namespace $t). Use names under the apex" -- "${K[@]}" create -f -
  cert look "$le
  dnsNames: [evil-nm.example.org, nm.example.org.evil.com, '*.org']" | $a deny $C "may not claim: evil-nm.example.org, nm.example.org.evil.com, *.org" -- "${K[@]}" create -f -
  cert cn "$le
  commonName: Dashboard.Example.Org
  dnsNames: [app.nm.example.org]" | $a deny $C "may not claim: dashboard.example.org" -- "${K[@]}" create -f -
  # Another namespace's Service names, through a CA issuer.
  cert svc "$own
  dnsNames: [postgres.tenant-victim.svc, postgres.tenant-victim.svc.cluster.local]" | $a deny $C "may not claim: postgres.tenant-victim.svc, postgres.tenant-victim.svc.cluster.local" -- "${K[@]}" create -f -
  cert ip "$own
  dnsNames: [app.nm.example.org]
  ipAddresses: [10.96.0.1, 127.0.0.1]" | $a deny $C "asks for IP addresses: 10.96.0.1. An IP address is nobody's to claim" -- "${K[@]}" create -f -
  cert mail "$own
  emailAddresses: [ops@nm.example.org, admin@example.org]" | $a deny $C "email addresses outside its apex: admin@example.org" -- "${K[@]}" create -f -
  cert uri "$own
  uris: ['spiffe://cluster.local/ns/kube-system/sa/default']" | $a deny $C "sets spec.uris, which cannot be checked against the apex" -- "${K[@]}" create -f -
  cert literal "$own
  literalSubject: 'CN=dashboard.example.org,O=platform'" | $a deny $C "sets spec.literalSubject" -- "${K[@]}" create -f -
  cert other "$own
  dnsNames: [app.nm.example.org]
  otherNames: [{oid: 1.3.6.1.4.1.311.20.2.3, utf8Value: admin@example.org}]" | $a deny $C "sets spec.otherNames" -- "${K[@]}" create -f -
  cert subca "  issuerRef: {kind: ClusterIssuer, name: platform-ca}
  isCA: true
  commonName: my-ca" | $a deny $C "asks the ClusterIssuer platform-ca for a CA certificate (spec.isCA)" -- "${K[@]}" create -f -
  # The legitimate uses: names under the apex through the ACME issuer, the
  # namespace's own cluster names and loopback through its own CA, its own CA.
  cert web "$le
  commonName: app.nm.example.org
  dnsNames: [app.nm.example.org, NM.example.org, '*.nm.example.org']" | $a allow -- "${K[@]}" create -f -
  cert internal "$own
  commonName: web
  dnsNames: [web, localhost, web.$t.svc, web.$t.svc.cluster.local, '*.web-headless.$t.svc.cozy.local']
  ipAddresses: [127.0.0.1, '::1']
  emailAddresses: [ops@nm.example.org]" | $a allow -- "${K[@]}" create -f -
  cert own-root "  issuerRef: {kind: Issuer, name: selfsigned}
  isCA: true
  commonName: My Team CA" | $a allow -- "${K[@]}" create -f -
  # An update moving a name out of the apex.
  $a deny $C "may not claim: dashboard.example.org" -- "${K[@]}" patch certificate web --type=json -p '[{"op":"add","path":"/spec/dnsNames/-","value":"dashboard.example.org"}]'
  $a allow -- "${K[@]}" label certificate web team=web
  # cert-manager's ingress-shim copies an Ingress's names and the common-name
  # annotation, which is refused outside the apex like the tenant's own.
  # (gateway-certs' Certificates, under the apex, are the gateway-certs suites'.)
  cert shim "$le
  commonName: dashboard.example.org
  dnsNames: [app.nm.example.org]" | $a deny $C "may not claim: dashboard.example.org" -- "${CM[@]}" create -f -
  cert shim "$le
  dnsNames: [app.nm.example.org]" | $a allow -- "${CM[@]}" create --dry-run=server -f -
  # The platform's charts render in-cluster names the rule does not know
  # (<pod>.<service>-headless, 127.0.0.1): Flux's helm-controller is trusted.
  cert chart "$own
  dnsNames: [nats-0.nats-headless, nats.$t.svc]
  ipAddresses: [127.0.0.1]" | $a allow -- "${FLUX[@]}" create --dry-run=server -f -
  ;;
certificaterequest)
  can create certificaterequests.cert-manager.io; can update certificaterequests.cert-manager.io
  csr=$(printf 'not a real CSR: admission cannot read one anyway' | base64 -w0)
  cr() { printf 'apiVersion: cert-manager.io/v1\nkind: CertificateRequest\nmetadata: {name: %s}\nspec:\n  request: %s\n  issuerRef: {kind: ClusterIssuer, name: letsencrypt-prod}\n' "$1" "$csr"; }
  cr steal | $a deny $R "CertificateRequest $t/steal: creating it is refused for mallory. Its CSR (spec.request) is opaque to admission" -- "${K[@]}" create -f -
  cr steal | $a deny $R "Create a Certificate instead (its names are checked), and cert-manager requests and issues it." -- "${K[@]}" create -f -
  # cert-manager makes them from Certificates.
  cr web-1 | $a allow -- "${CM[@]}" create -f -
  # Its spec cannot be changed under cert-manager (cert-manager's webhook, when
  # it runs, says the same); its metadata can.
  $a deny $R "changing its spec is refused for mallory" -- "${K[@]}" patch certificaterequest web-1 --type=merge -p '{"spec":{"issuerRef":{"name":"platform-ca"}}}'
  $a allow -- "${K[@]}" label certificaterequest web-1 team=web
  ;;
ingress-annotations)
  can create ingresses.networking.k8s.io; can update ingresses.networking.k8s.io
  ing alias '{nginx.ingress.kubernetes.io/server-alias: "www.nm.example.org, dashboard.example.org"}' \
    | $a deny $A "server-alias entries must be hostnames equal to nm.example.org or under it (the namespace.cozystack.io/host label of namespace $t); refused: dashboard.example.org. Use aliases under the apex" -- "${K[@]}" create -f -
  ing look '{nginx.ingress.kubernetes.io/server-alias: "evil-nm.example.org,*.org"}' | $a deny $A "refused: evil-nm.example.org, *.org" -- "${K[@]}" create -f -
  # nginx takes a space-separated list and regular expressions in server_name.
  ing spaced '{nginx.ingress.kubernetes.io/server-alias: "a.nm.example.org dashboard.example.org"}' | $a deny $A "refused: a.nm.example.org dashboard.example.org" -- "${K[@]}" create -f -
  ing regex '{nginx.ingress.kubernetes.io/server-alias: "~^.*$"}' | $a deny $A "refused: ~^.*$" -- "${K[@]}" create -f -
  for k in nginx.ingress.kubernetes.io/configuration-snippet nginx.ingress.kubernetes.io/server-snippet nginx.ingress.kubernetes.io/auth-snippet \
           nginx.ingress.kubernetes.io/stream-snippet nginx.ingress.kubernetes.io/modsecurity-snippet nginx.org/server-snippets; do
    ing snippet "{$k: 'server_name dashboard.example.org;'}" \
      | $a deny $A "the annotations $k put raw configuration into the ingress controller, which serves every tenant" -- "${K[@]}" create -f -
  done
  # The legitimate uses: aliases under the apex, and annotations that name no server.
  ing web '{nginx.ingress.kubernetes.io/server-alias: "www.nm.example.org, *.app.nm.example.org", nginx.ingress.kubernetes.io/permanent-redirect: "https://example.com/", nginx.ingress.kubernetes.io/auth-url: "https://auth.example.com/check", nginx.ingress.kubernetes.io/rewrite-target: /}' \
    | $a allow -- "${K[@]}" create -f -
  $a deny $A "refused: dashboard.example.org" -- "${K[@]}" annotate ingress web --overwrite nginx.ingress.kubernetes.io/server-alias=dashboard.example.org
  $a deny $A "Remove them and use the controller's own annotations" -- "${K[@]}" annotate ingress web nginx.ingress.kubernetes.io/server-snippet='listen 8080;'
  # A chart's snippet (upstream's kubernetes app renders one, through Flux):
  # the tenant may keep or remove it, not change it.
  ing chart '{nginx.ingress.kubernetes.io/configuration-snippet: "set $proxy_host web;"}' | $a allow -- "${FLUX[@]}" create -f -
  $a allow -- "${K[@]}" label ingress chart team=web
  $a deny $A "the annotations nginx.ingress.kubernetes.io/configuration-snippet put raw configuration" -- \
    "${K[@]}" annotate ingress chart --overwrite nginx.ingress.kubernetes.io/configuration-snippet='server_name dashboard.example.org;'
  $a allow -- "${K[@]}" annotate ingress chart nginx.ingress.kubernetes.io/configuration-snippet-
  ;;
tenant-fields)
  can create tenants.apps.cozystack.io; can update tenants.apps.cozystack.io
  tnt rich '{resourceQuotas: {cpu: 1000}}' \
    | $a deny $F "Tenant $t/rich: spec.resourceQuotas (requested {cpu: 1000}, current {}) can only be set or changed by a cluster administrator or the platform service accounts" -- "${K[@]}" create -f -
  tnt open '{isolated: false}' | $a deny $F "spec.isolated (requested false, current true)" -- "${K[@]}" create -f -
  tnt gpu '{schedulingClass: dedicated-gpu}' | $a deny $F "spec.schedulingClass (requested \"dedicated-gpu\", current \"\")" -- "${K[@]}" create -f -
  tnt gpu '{schedulingClass: dedicated-gpu}' | $a deny $F "Create the Tenant without them, or ask a cluster administrator to set them." -- "${K[@]}" create -f -
  # The legitimate use: a child without them (the definition's defaults filled
  # in), with the services it deploys in its own namespace.
  tnt child '{monitoring: true, etcd: true}' | $a allow -- "${K[@]}" create -f -
  tnt plain '{isolated: true, resourceQuotas: {}, schedulingClass: ""}' | $a allow -- "${K[@]}" create -f -
  # An administrator sets the child's budget; the tenant keeps it.
  admin patch tenant child --type=merge -p '{"spec":{"resourceQuotas":{"cpu":"4"}}}' >/dev/null
  $a allow -- "${K[@]}" patch tenant child --type=merge -p '{"spec":{"ingress":true}}'
  $a deny $F "spec.resourceQuotas (requested {cpu: 64}, current {cpu: 4}) can only be set or changed by a cluster administrator or the platform service accounts: they hold the tenant's resource budget, node placement and network isolation. Keep their current values" -- \
    "${K[@]}" patch tenant child --type=merge -p '{"spec":{"resourceQuotas":{"cpu":"64"}}}'
  $a deny $F "spec.resourceQuotas (requested {}, current {cpu: 4})" -- "${K[@]}" patch tenant child --type=json -p '[{"op":"remove","path":"/spec/resourceQuotas"}]'
  $a deny $F "spec.isolated (requested false, current true)" -- "${K[@]}" patch tenant child --type=merge -p '{"spec":{"isolated":false}}'
  [[ "$(admin get tenant child -o jsonpath='{.spec.resourceQuotas.cpu}')" == 4 ]]
  # Flux's helm-controller (a chart applying a Tenant) is trusted, as for spec.host.
  $a allow -- "${FLUX[@]}" patch tenant child --dry-run=server --type=merge -p '{"spec":{"resourceQuotas":{"cpu":"8"}}}'
  ;;
external-ips)
  can create services; can update services
  svc mitm "  externalIPs: [203.0.113.10]" | $a deny $X "Service $t/mitm: spec.externalIPs 203.0.113.10 would make every node send traffic for those addresses to this Service, whoever owns them (CVE-2020-8554)" -- "${K[@]}" create -f -
  # The legitimate use: a ClusterIP Service, and a LoadBalancer one.
  svc web "  type: ClusterIP" | $a allow -- "${K[@]}" create -f -
  svc lb "  type: LoadBalancer" | $a allow -- "${K[@]}" create -f -
  $a deny $X "Remove spec.externalIPs: use type ClusterIP inside the cluster, or type LoadBalancer" -- "${K[@]}" patch service web --type=merge -p '{"spec":{"externalIPs":["10.96.0.10"]}}'
  # An address an administrator gave a Service stays; the tenant adds none.
  svc published "  externalIPs: [198.51.100.7]" | admin create -f - >/dev/null
  $a allow -- "${K[@]}" label service published team=web
  $a deny $X "spec.externalIPs 203.0.113.10 would make" -- "${K[@]}" patch service published --type=merge -p '{"spec":{"externalIPs":["198.51.100.7","203.0.113.10"]}}'
  # Flux's helm-controller applies upstream's ingress chart with the platform's expose-external-ips.
  svc ingress "  externalIPs: [198.51.100.8]" | $a allow -- "${FLUX[@]}" create --dry-run=server -f -
  ;;
*) echo "unknown case $1"; exit 2 ;;
esac
