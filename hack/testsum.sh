#!/usr/bin/env bash
# Runs hack/tools/testsum (see its doc comment).
source "$(dirname "$0")/lib.sh"
args=()
for a in "$@"; do
  if [[ -e "${a}" || "${a}" == */* ]]; then args+=("$(cd "$(dirname "${a}")" 2>/dev/null && pwd)/$(basename "${a}")"); else args+=("${a}"); fi
done
cd "${ROOT}/hack/tools/testsum" && GOWORK=off go run . "${args[@]}"
