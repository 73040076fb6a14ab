#!/usr/bin/env bash
# Fails when a generated file is stale: copies the tree (tracked files plus
# untracked, non-ignored ones) to a temporary folder, regenerates everything
# there and reports any file that generation changed, added or removed.
# The working tree itself is never touched.
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
cd "${ROOT}"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [[ -e "${f}" ]] || continue
  mkdir -p "${tmp}/$(dirname "${f}")"
  cp -p "${f}" "${tmp}/${f}"
done
git -C "${tmp}" init -q
git -C "${tmp}" add -A
git -C "${tmp}" -c user.name=verify -c user.email=verify@localhost commit -qm snapshot
"${ROOT}/hack/generate.sh" "${tmp}" >/dev/null
git -C "${tmp}" add -A
if ! git -C "${tmp}" diff --cached --quiet; then
  git -C "${tmp}" diff --cached --stat
  git -C "${tmp}" diff --cached | head -100
  die "generated files are stale: run 'make generate' and commit the result"
fi
log "generated files are up to date"
