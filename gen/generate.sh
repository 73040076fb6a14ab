#!/usr/bin/env bash
# Regenerates every generated file under gen/ in the tree rooted at $1
# (default: the repository holding this script). hack/generate.sh calls it,
# so `make verify` fails when a checked-in file is stale.
#
#   gen/examples/<kind>/   typed Go for every ApplicationDefinition under examples/
#                          (one per kind: the spec.backend form wins over the legacy one)
#   gen/testkinds/<kind>/  typed Go for the definitions `gen from-terraform` makes of the
#                          test modules (gen/testdata/terraform/*/definition.golden.yaml;
#                          refresh those with `go test ./cmd/gen -run Golden -update`)
#
# Packages of kinds that are gone are removed (only folders holding nothing
# but generated files); a file without the generated-code header is never
# overwritten.
set -euo pipefail
export GOTOOLCHAIN=local GOWORK=off
TREE=$(cd "${1:-$(dirname "$0")/..}" && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
cd "${TREE}/gen"
go build -o "${tmp}/gen" ./cmd/gen

cd "${TREE}"
defs=()
while IFS= read -r -d '' f; do defs+=("${TREE}/${f}"); done \
  < <(find examples -type f \( -name '*.yaml' -o -name '*.yml' \) -print0 2>/dev/null | LC_ALL=C sort -z)
cd "${TREE}/gen"
if ((${#defs[@]} > 0)); then
  "${tmp}/gen" types --quiet --registry --prune --out ./examples "${defs[@]}"
fi
"${tmp}/gen" types --quiet --registry --prune --out ./testkinds testdata/terraform/*/definition.golden.yaml
