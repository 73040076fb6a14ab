#!/usr/bin/env bash
# Builds or installs every tool the tests and the local control plane need into
# .cache/bin (git-ignored). Each tool is rebuilt only when the module that pins
# it changes, so a second run takes seconds.
#
#   hack/tools.sh [tool...]   tools: etcd kube controller-gen helm chainsaw (default: all)
source "$(dirname "$0")/lib.sh"

# stamp NAME FILE... : true when NAME was built from exactly these inputs.
fresh() {
  local name=$1; shift
  local want; want=$(cat "$@" | sha256sum | cut -c1-16)
  [[ -f "${CACHE}/stamps/${name}" && "$(cat "${CACHE}/stamps/${name}")" == "${want}" ]] && return 0
  echo "${want}" > "${CACHE}/stamps/${name}.want"
  return 1
}
stamp() { mv "${CACHE}/stamps/$1.want" "${CACHE}/stamps/$1"; }
mkdir -p "${CACHE}/stamps"

tool_etcd() {
  if ! command -v etcd >/dev/null 2>&1 && [[ ! -x /usr/bin/etcd ]]; then
    log "installing etcd (Debian etcd-server)"
    if [[ $(id -u) -eq 0 ]]; then
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
    else
      sudo apt-get update -qq >/dev/null && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
    fi
  fi
  ln -sf "$(command -v etcd || echo /usr/bin/etcd)" "${BIN}/etcd"
}

tool_kube() {
  local dir="${ROOT}/hack/tools/kube"
  if fresh kube "${dir}/go.mod" "${dir}/go.sum" && [[ -x "${BIN}/kube-apiserver" && -x "${BIN}/kube-controller-manager" ]]; then return; fi
  log "building kube-apiserver and kube-controller-manager ${KUBE_VERSION} (first time: ~5 min)"
  local ldflags="-X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"
  (cd "${dir}" && GOWORK=off go build -ldflags "${ldflags}" -o "${BIN}/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
  (cd "${dir}" && GOWORK=off go build -ldflags "${ldflags}" -o "${BIN}/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager)
  stamp kube
}

# gotool NAME PACKAGE: builds a tool pinned with `go get -tool` in hack/tools/NAME.
gotool() {
  local name=$1 pkg=$2 dir="${ROOT}/hack/tools/$1"
  if fresh "${name}" "${dir}/go.mod" "${dir}/go.sum" && [[ -x "${BIN}/${name}" ]]; then return; fi
  log "building ${name}"
  (cd "${dir}" && GOWORK=off GONOSUMDB=github.com/kyverno GOFLAGS=-mod=mod go build -o "${BIN}/${name}" "${pkg}")
  stamp "${name}"
}

tool_controller-gen() { gotool controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen; }
tool_helm() { gotool helm helm.sh/helm/v3/cmd/helm; }
tool_chainsaw() { gotool chainsaw github.com/kyverno/chainsaw; }

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(etcd kube controller-gen helm chainsaw)
for t in "${tools[@]}"; do "tool_${t}"; done
