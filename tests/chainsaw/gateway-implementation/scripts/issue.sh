#!/bin/sh
# issue.sh GATEWAY: plays cert-manager's issuance, and only that: for every
# certificate Secret the HTTPS listeners of Gateway GATEWAY (in $NAMESPACE)
# reference, writes a kubernetes.io/tls Secret with a self-signed certificate
# for the hostnames of the listeners that serve it, as cert-manager's
# Certificate controller would (the Secret named by the Certificate, its
# certificate-name annotation). The Gateway implementation then judges
# whether the listeners resolve it.
set -eu
gw=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kubectl -n "$NAMESPACE" get gateway.gateway.networking.k8s.io "$gw" \
  -o jsonpath='{range .spec.listeners[?(@.protocol=="HTTPS")]}{.tls.certificateRefs[0].name}{" "}{.hostname}{"\n"}{end}' > "$tmp/refs"
[ -s "$tmp/refs" ] || { echo "Gateway $gw has no HTTPS listener"; exit 1; }
for secret in $(cut -d' ' -f1 "$tmp/refs" | sort -u); do
  sans=$(awk -v s="$secret" '$1 == s { printf "%sDNS:%s", sep, $2; sep = "," }' "$tmp/refs")
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$secret" -addext "subjectAltName=$sans" \
    -keyout "$tmp/$secret.key" -out "$tmp/$secret.crt" 2>/dev/null
  kubectl -n "$NAMESPACE" create secret tls "$secret" --cert "$tmp/$secret.crt" --key "$tmp/$secret.key" \
    --dry-run=client -o yaml |
    kubectl annotate --local -f - -o yaml cert-manager.io/certificate-name="$secret" cert-manager.io/alt-names="$(echo "$sans" | sed 's/DNS://g')" |
    kubectl apply -f - >/dev/null
  echo "issued $secret for $sans"
done
