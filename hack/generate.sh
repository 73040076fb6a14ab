#!/usr/bin/env bash
# Regenerates every generated file of the tree rooted at ROOT (default: this
# repository): deep-copy functions and CRD manifests from the API types.
# hack/verify.sh runs it on a copy of the tree and diffs the result.
source "$(dirname "$0")/lib.sh"
TREE=${1:-${ROOT}}
"${ROOT}/hack/tools.sh" controller-gen

cd "${TREE}/api"
# Deep-copy for every API package, with the project's header.
GOWORK=off controller-gen object:headerFile="${ROOT}/hack/boilerplate.go.txt" paths=./...
# CRDs we serve (cozystack.io, gateway.cozystack.io) and the Terraform mirror
# that tests install in place of tofu-controller's own CRD.
rm -rf crds && mkdir -p crds
ours=()
for p in cozystack gateway; do [[ -d "${p}" ]] && ours+=("paths=./${p}/..."); done
GOWORK=off controller-gen crd "${ours[@]}" output:crd:dir=./crds
# The mirror embeds core/v1 pod types; their descriptions would make the CRD
# larger than it needs to be for a test fixture.
GOWORK=off controller-gen crd:maxDescLen=0 paths=./tofu/... output:crd:dir=./crds
# The mirror of upstream Cozystack's WorkloadMonitor, which tests install in
# place of upstream's own CRD.
GOWORK=off controller-gen crd paths=./workloadmonitor/... output:crd:dir=./crds

# Typed Go per kind for the example definitions and the generator's test kinds.
"${ROOT}/gen/generate.sh" "${TREE}"

# The crds chart ships our CRDs as generated (not the Terraform mirror, which
# only stands in for tofu-controller's own CRD in tests).
mkdir -p "${TREE}/charts/crds/files"
cp "${TREE}/api/crds/cozystack.io_applicationdefinitions.yaml" "${TREE}/api/crds/gateway.cozystack.io_tenantgateways.yaml" "${TREE}/charts/crds/files/"
# The policies chart ships policies/ as they are.
rm -rf "${TREE}/charts/policies/files" && mkdir -p "${TREE}/charts/policies/files"
cp "${TREE}"/policies/*.yaml "${TREE}/charts/policies/files/"
# The charts (hack/tools/charts): the library chart cozyplane-lib packaged
# into each controller chart's charts/, their values.schema.json, and the
# values table of every chart's README.md.
(cd "${ROOT}/hack/tools/charts" && GOWORK=off go run . "${TREE}/charts")
