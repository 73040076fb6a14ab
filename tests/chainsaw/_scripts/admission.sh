#!/usr/bin/env bash
# Checks one admission decision: runs a kubectl command (the manifest, if
# any, on stdin) and asserts it was allowed, or denied by the named
# ValidatingAdmissionPolicy with a message containing the given text. A
# request refused for any other reason (RBAC, schema) fails the check, so a
# deny case cannot pass for the wrong reason.
#
#   admission.sh allow -- kubectl ARGS...
#   admission.sh deny POLICY TEXT -- kubectl ARGS...
set -uo pipefail
want=$1; shift
policy="" text=""
if [[ ${want} == deny ]]; then policy=$1 text=$2; shift 2; fi
[[ $1 == -- ]] && shift
out=$("$@" 2>&1); rc=$?
case ${want} in
  allow)
    if [[ ${rc} -ne 0 ]]; then echo "expected to be allowed: $*"; echo "${out}"; exit 1; fi ;;
  deny)
    if [[ ${rc} -eq 0 ]]; then echo "expected ${policy} to deny: $*"; echo "${out}"; exit 1; fi
    if [[ "${out}" != *"ValidatingAdmissionPolicy '${policy}'"*"denied request"* ]]; then
      echo "expected a denial by ${policy}, got: ${out}"; exit 1
    fi
    if [[ "${out}" != *"${text}"* ]]; then echo "denial message lacks \"${text}\": ${out}"; exit 1; fi ;;
esac
echo "${want}: $* ${policy:+(${policy})}"
