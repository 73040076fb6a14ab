#!/usr/bin/env bash
# Plays cert-manager's controller: writes what its controllers write, as its
# identity (lib.sh: CERT_MANAGER_NAMESPACE, ServiceAccount cert-manager) and
# each controller's field manager (cert-manager-<controller>).
#
#   cert-manager.sh OUTCOME NAMESPACE NAME
#
#   issued              the Certificate NAME issued: its Secret
#                       (spec.secretName) holds a key and a certificate for
#                       its commonName and dnsNames (self-signed here; an
#                       ACME issuer returns no CA, so no ca.crt) with the
#                       annotations and label cert-manager sets; then the
#                       issuing controller's status (revision, Issuing
#                       removed) and the readiness controller's (Ready,
#                       notBefore, notAfter, renewalTime)
#   issuing             the Certificate NAME's Secret does not exist: the
#                       trigger controller's Issuing=True and the readiness
#                       controller's Ready=False (DoesNotExist)
#   account-registered  the ACME Issuer NAME registered its account: its
#                       account key Secret created when missing, Ready
#                       (ACMEAccountRegistered) and status.acme
#
# Mirrors cert-manager/cert-manager v1.21.1:
#   pkg/controller/certificates/issuing/issuing_controller.go  issueCertificate
#       (revision, Issuing removed, failure fields cleared; UpdateStatus)
#   pkg/controller/certificates/issuing/internal/secret.go  the Secret: type
#       kubernetes.io/tls, tls.crt, tls.key, ca.crt when the issuer returns a
#       CA, the annotations, the label controller.cert-manager.io/fao
#   internal/controller/certificates/secrets.go  AnnotationsForCertificate
#   pkg/apis/certmanager/v1/types.go           the annotation keys
#   pkg/controller/certificates/readiness/readiness_controller.go  Ready
#       (reason Ready, "Certificate is up to date and has not expired"),
#       notBefore, notAfter, renewalTime
#   internal/controller/certificates/policies/checks.go  SecretDoesNotExist
#   pkg/controller/certificates/trigger/trigger_controller.go  Issuing=True
#   pkg/util/pki/renewaltime.go                renewal at 2/3 of the
#       duration unless spec.renewBefore says otherwise
#   pkg/issuer/acme/setup.go                   ACMEAccountRegistered and
#       status.acme (uri, lastRegisteredEmail, lastPrivateKeyHash)
#   pkg/api/util/conditions.go                 SetCertificateCondition,
#       SetIssuerCondition
#   pkg/util/useragent.go, pkg/controller/context.go  the field managers
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

outcome=${1:?usage: cert-manager.sh OUTCOME NAMESPACE NAME}
ns=${2:?namespace}
name=${3:?name}
as=$(nb_as "$NB_CERT_MANAGER_NS" cert-manager)
now=$(nb_now)

# seconds DURATION: a Go duration of hours, minutes and seconds in seconds.
seconds() {
  local d=$1 total=0 n
  while [[ -n "$d" ]]; do
    n=${d%%[hms]*}; d=${d#"$n"}
    case "${d:0:1}" in h) total=$((total + n * 3600)) ;; m) total=$((total + n * 60)) ;; s) total=$((total + n)) ;; esac
    d=${d:1}
  done
  echo "$total"
}
rfc3339() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

case "$outcome" in
issued)
  crt=$(nb_get certificate "$ns" "$name") || nb_die "Certificate $ns/$name not found"
  secret=$(jq -r .spec.secretName <<<"$crt")
  cn=$(jq -r '.spec.commonName // ""' <<<"$crt")
  mapfile -t dns < <(jq -r '.spec.dnsNames // [] | .[]' <<<"$crt")
  duration=$(seconds "$(jq -r '.spec.duration // "2160h"' <<<"$crt")")
  renew_before=$(jq -r '.spec.renewBefore // ""' <<<"$crt")
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  start=$(date -u +%s)
  san=""
  for d in "${dns[@]}"; do san+="${san:+,}DNS:$d"; done
  subj="/"; [[ -z "$cn" ]] || subj="/CN=$cn"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/tls.key" -out "$tmp/tls.crt" -subj "$subj" \
    ${san:+-addext "subjectAltName=$san"} -days "$(( (duration + 86399) / 86400 ))" 2>/dev/null
  not_before=$(date -u -d "$(openssl x509 -in "$tmp/tls.crt" -noout -startdate | cut -d= -f2)" +%s)
  not_after=$(date -u -d "$(openssl x509 -in "$tmp/tls.crt" -noout -enddate | cut -d= -f2)" +%s)
  if [[ -n "$renew_before" ]]; then
    renewal=$((not_after - $(seconds "$renew_before")))
  else
    renewal=$((not_after - (not_after - not_before) / 3))
  fi
  alt=$(IFS=,; echo "${dns[*]}")
  body=$(kubectl create secret tls "$secret" -n "$ns" --cert="$tmp/tls.crt" --key="$tmp/tls.key" --dry-run=client -o json |
    jq -c --argjson crt "$crt" --arg cn "$cn" --arg alt "$alt" '
      del(.metadata.creationTimestamp)
      | .metadata.labels = (($crt.spec.secretTemplate.labels // {}) + {"controller.cert-manager.io/fao": "true"})
      | .metadata.annotations = (($crt.spec.secretTemplate.annotations // {}) + {
          "cert-manager.io/common-name": $cn,
          "cert-manager.io/alt-names": $alt,
          "cert-manager.io/ip-sans": "",
          "cert-manager.io/uri-sans": "",
          "cert-manager.io/certificate-name": $crt.metadata.name,
          "cert-manager.io/issuer-name": $crt.spec.issuerRef.name,
          "cert-manager.io/issuer-kind": ($crt.spec.issuerRef.kind // ""),
          "cert-manager.io/issuer-group": ($crt.spec.issuerRef.group // "")})')
  # shellcheck disable=SC2086
  if existing=$(kubectl -n "$ns" get secret "$secret" -o json 2>/dev/null); then
    jq -c --argjson b "$body" '.data = $b.data | .metadata.labels = ((.metadata.labels // {}) + $b.metadata.labels)
      | .metadata.annotations = ((.metadata.annotations // {}) + $b.metadata.annotations)' <<<"$existing" |
      kubectl -n "$ns" $as replace --field-manager=cert-manager-certificates-issuing -f - >/dev/null
  else
    kubectl -n "$ns" $as create --field-manager=cert-manager-certificates-issuing -f - <<<"$body" >/dev/null
  fi
  # The issuing controller.
  # shellcheck disable=SC2016
  nb_update_status certificate "$ns" "$name" cert-manager-certificates-issuing "$as" '
    (.status // {}) | .revision = ((.revision // 0) + 1) | drop("Issuing")
    | del(.failedIssuanceAttempts, .lastFailureTime)'
  # The readiness controller.
  # shellcheck disable=SC2016
  nb_update_status certificate "$ns" "$name" cert-manager-certificates-readiness "$as" '
    .metadata.generation as $gen | (.status // {})
    | cm_set({type: "Ready", status: "True", reason: "Ready", message: "Certificate is up to date and has not expired"}; $gen; $now)
    | .notBefore = $nb | .notAfter = $na | .renewalTime = $rt' \
    --arg now "$now" --arg nb "$(rfc3339 "$not_before")" --arg na "$(rfc3339 "$not_after")" --arg rt "$(rfc3339 "$renewal")"
  ;;
issuing)
  # shellcheck disable=SC2016
  nb_update_status certificate "$ns" "$name" cert-manager-certificates-trigger "$as" '
    .metadata.generation as $gen | (.status // {})
    | cm_set({type: "Issuing", status: "True", reason: "DoesNotExist", message: "Issuing certificate as Secret does not exist"}; $gen; $now)' \
    --arg now "$now"
  # shellcheck disable=SC2016
  nb_update_status certificate "$ns" "$name" cert-manager-certificates-readiness "$as" '
    .metadata.generation as $gen | (.status // {})
    | cm_set({type: "Ready", status: "False", reason: "DoesNotExist", message: "Issuing certificate as Secret does not exist"}; $gen; $now)
    | del(.notBefore, .notAfter, .renewalTime)' \
    --arg now "$now"
  ;;
account-registered)
  # The account key: created in spec.acme.privateKeySecretRef (key tls.key
  # unless it names one) when missing (createAccountPrivateKey).
  issuer=$(nb_get issuer "$ns" "$name") || nb_die "Issuer $ns/$name not found"
  key_secret=$(jq -r '.spec.acme.privateKeySecretRef.name // ""' <<<"$issuer")
  key_key=$(jq -r '.spec.acme.privateKeySecretRef.key // "tls.key"' <<<"$issuer")
  [[ -n "$key_secret" ]] || nb_die "Issuer $ns/$name is not an ACME issuer"
  if ! kubectl -n "$ns" get secret "$key_secret" >/dev/null 2>&1; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    openssl genrsa -traditional -out "$tmp/key" 2048 2>/dev/null || openssl genrsa -out "$tmp/key" 2048 2>/dev/null
    kubectl create secret generic "$key_secret" -n "$ns" --from-file="$key_key=$tmp/key" --dry-run=client -o json |
      jq -c 'del(.metadata.creationTimestamp) | .metadata.labels = {"app.kubernetes.io/managed-by": "cert-manager"}' |
      # shellcheck disable=SC2086
      kubectl -n "$ns" $as create --field-manager=cert-manager-issuers -f - >/dev/null
  fi
  # The account URI stands in for the one an ACME server would give.
  # shellcheck disable=SC2016
  nb_update_status issuer "$ns" "$name" cert-manager-issuers "$as" '
    .metadata.generation as $gen | .spec.acme.email as $email | (.status // {})
    | .acme = ({uri: ("https://acme.invalid/acct/" + $acct[0:16]), lastRegisteredEmail: $email, lastPrivateKeyHash: $acct} | with_entries(select(.value != null)))
    | cm_set({type: "Ready", status: "True", reason: "ACMEAccountRegistered", message: "The ACME account was registered with the ACME server"}; $gen; $now)' \
    --arg now "$now" --arg acct "$(kubectl -n "$ns" get secret "$key_secret" -o json | jq -r --arg k "$key_key" '.data[$k]' | sha256sum | cut -d' ' -f1)"
  ;;
*) nb_die "cert-manager.sh: unknown outcome $outcome" ;;
esac
