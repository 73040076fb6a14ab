#!/bin/sh
# allowed EXPECT VERB GROUP RESOURCE SUBRESOURCE NAMESPACE CONTROLLER [NAME]
# Asks the API server's authorizer (a SubjectAccessReview, so kinds that are
# not served yet can be checked too) whether the controller's ServiceAccount
# may do VERB, and fails unless the answer is EXPECT (true or false).
set -e
expect=$1 verb=$2 group=$3 resource=$4 sub=$5 ns=$6 sa=$7 name=${8:-}
got=$(kubectl create -o jsonpath='{.status.allowed}' -f - <<SAR
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: system:serviceaccount:cozy-system:${sa}
  groups: [system:serviceaccounts, "system:serviceaccounts:cozy-system", system:authenticated]
  resourceAttributes: {verb: "${verb}", group: "${group}", resource: "${resource}", subresource: "${sub}", namespace: "${ns}", name: "${name}"}
SAR
)
[ "${got:-false}" = "${expect}" ] || { echo "${sa}: ${verb} ${resource}${sub:+/$sub}.${group} ${name:+ named $name} in '${ns}': allowed=${got:-false}, want ${expect}"; exit 1; }
