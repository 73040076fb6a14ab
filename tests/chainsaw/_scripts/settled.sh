#!/usr/bin/env bash
# Fails when any of the given objects changes (a write by a controller) within
# SECONDS: a settled system writes nothing.
#
#   settled.sh SECONDS KIND/NAME[@NAMESPACE]...
set -euo pipefail
secs=$1; shift
versions() {
  local o
  for o in "$@"; do
    if [[ "${o}" == *@* ]]; then kubectl -n "${o#*@}" get "${o%@*}" -o jsonpath='{.metadata.resourceVersion}'
    else kubectl get "${o}" -o jsonpath='{.metadata.resourceVersion}'; fi
    echo " ${o}"
  done
}
before=$(versions "$@")
sleep "${secs}"
after=$(versions "$@")
if [[ "${before}" != "${after}" ]]; then
  echo "objects were written while settled:"; diff <(echo "${before}") <(echo "${after}") || true
  exit 1
fi
