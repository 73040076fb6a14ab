#!/usr/bin/env bash
# The dev loop survives what users do: `hack/rbac.sh DIR` gives every
# controller its chart's identity (DIR/<controller>.kubeconfig with a token),
# `dev.sh down` stops the system and wipes the control plane's data, and the
# next `dev.sh up` must start every controller again. The tokens of the old
# control plane are refused by the new one ("the server has asked for the
# client to provide credentials"), so up must not start a controller with
# them.
#
# It runs its own system in a temporary DIR_ROOT on ports 100 above
# PORT_BASE and CONTROLLER_PORT_BASE, so a running `make dev` or e2e run is
# not touched.
#
#   dev-loop.sh REPO_ROOT
set -euo pipefail
root=$(cd "$1" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/cozyplane-dev-loop.XXXXXX")
export DEV_DIR="${dir}" DEV_BUILD=0
export PORT_BASE=$(( ${PORT_BASE:-21000} + 100 )) CONTROLLER_PORT_BASE=$(( ${CONTROLLER_PORT_BASE:-21600} + 100 ))
unset KUBECONFIG
cleanup() { "${root}/hack/dev.sh" down >/dev/null 2>&1 || true; rm -rf "${dir}"; }
trap cleanup EXIT

step() { printf 'step: %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; for f in "${dir}"/*.log; do echo "--- $(basename "${f}")"; tail -n 5 "${f}"; done; exit 1; }

controllers=$(for c in $("${root}/hack/controllers.sh" list); do [[ -d "${root}/charts/${c}" ]] && echo "${c}"; done | tr "\n" " ")
step "up on a fresh directory"
"${root}/hack/dev.sh" up >"${dir}/up1.out" 2>&1 || { cat "${dir}/up1.out"; fail "the first up failed"; }

step "run every controller as its chart's ServiceAccount (hack/rbac.sh)"
"${root}/hack/rbac.sh" "${dir}" >/dev/null
for c in ${controllers}; do
  [[ -f "${dir}/${c}.kubeconfig" ]] || fail "hack/rbac.sh wrote no ${c}.kubeconfig"
done
old_token=$(grep -o 'token: "[^"]*"' "${dir}/helm.kubeconfig")

step "down, then up again (with a leftover kubeconfig of a controller that no longer exists)"
"${root}/hack/dev.sh" down >/dev/null 2>&1
cp "${dir}/helm.kubeconfig" "${dir}/retired.kubeconfig"
"${root}/hack/dev.sh" up >"${dir}/up2.out" 2>&1 || { cat "${dir}/up2.out"; fail "up after down failed"; }

step "every controller runs as its ServiceAccount with a token the new control plane accepts"
for c in ${controllers}; do
  [[ -f "${dir}/${c}.kubeconfig" ]] || fail "${c}.kubeconfig is gone: up dropped the chart identity"
  who=$(kubectl --kubeconfig "${dir}/${c}.kubeconfig" auth whoami -o jsonpath='{.status.userInfo.username}' 2>&1) ||
    fail "${c}.kubeconfig is refused: ${who}"
  [[ "${who}" == "system:serviceaccount:cozy-system:cozystack-${c}" ]] || fail "${c} runs as ${who}"
  grep -q "provide credentials" "${dir}/${c}.log" && fail "${c} logged a refused token"
  kill -0 "$(cat "${dir}/${c}.pid")" 2>/dev/null || fail "${c} is not running"
done
[[ "$(grep -o 'token: "[^"]*"' "${dir}/helm.kubeconfig")" != "${old_token}" ]] || fail "helm.kubeconfig still holds the old token"

[[ ! -e "${dir}/retired.kubeconfig" ]] || fail "retired.kubeconfig was kept: it names no controller"
echo "dev loop: ok"
