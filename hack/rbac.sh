#!/usr/bin/env bash
# Gives each controller its chart's identity on a local control plane: renders
# the chart's ServiceAccount, ClusterRole(s) and leader-election Role, applies
# them, and writes DIR/<controller>.kubeconfig with a token of that
# ServiceAccount. hack/controllers.sh runs a controller with that kubeconfig
# when it exists, so the e2e suite fails if a chart's role lacks a verb.
#
#   hack/rbac.sh DIR [CONTROLLER...]   (default: every controller with a chart)
source "$(dirname "$0")/lib.sh"
DIR=$(cd "$1" && pwd); shift
NS=cozy-system
"${ROOT}/hack/tools.sh" helm >/dev/null
export KUBECONFIG="${DIR}/kubeconfig"

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for d in "${ROOT}"/controllers/*/; do
    n=$(basename "${d}")
    [[ -d "${ROOT}/charts/${n}" ]] && names+=("${n}")
  done
fi

kubectl get namespace "${NS}" >/dev/null 2>&1 || kubectl create namespace "${NS}" >/dev/null
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority}')
for n in "${names[@]}"; do
  helm template cozystack "${ROOT}/charts/${n}" --namespace "${NS}" \
    --show-only templates/serviceaccount.yaml --show-only templates/clusterrole.yaml \
    --show-only templates/leader-election.yaml | kubectl apply --server-side -f - >/dev/null
  sa="cozystack-${n}"
  token=$(kubectl -n "${NS}" create token "${sa}" --duration=24h)
  cat > "${DIR}/${n}.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "${server}", certificate-authority: "${ca}"}
users:
- name: ${sa}
  user: {token: "${token}"}
contexts:
- name: local
  context: {cluster: local, user: ${sa}}
current-context: local
KC
  chmod 600 "${DIR}/${n}.kubeconfig"
done
