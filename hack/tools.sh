#!/usr/bin/env bash
# Builds or installs every tool the tests and the local control plane need into
# .cache/bin (git-ignored). Each tool is rebuilt only when the module that pins
# it changes, so a second run takes seconds.
#
#   hack/tools.sh [tool...]   tools: etcd kube controller-gen crds helm chainsaw (default: all)
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
  # Debian's etcd-server package; linked into .cache/bin so envtest and the
  # scripts find etcd and kube-apiserver in one folder.
  local etcd=/usr/bin/etcd
  if [[ ! -x "${etcd}" ]]; then
    log "installing etcd (Debian package etcd-server)"
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    ${sudo} apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive ${sudo} apt-get install -y -qq etcd-server >/dev/null
  fi
  [[ -x "${etcd}" ]] || die "etcd is not installed at ${etcd}"
  ln -sfn "${etcd}" "${BIN}/etcd"
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

# tool_crds generates the third-party CRDs that no module ships as YAML:
# HelmRelease, from helm-controller's API types.
tool_crds() {
  tool_controller-gen
  local out="${CACHE}/crds" f="${CACHE}/crds/helm.toolkit.fluxcd.io_helmreleases.yaml"
  if fresh crds "${ROOT}/api/go.sum" && [[ -s "${f}" ]]; then return; fi
  log "generating the HelmRelease CRD from helm-controller/api ${HELM_CONTROLLER_API_VERSION}"
  rm -rf "${out}/helm-tmp" && mkdir -p "${out}"
  (cd "${ROOT}/api" && GOWORK=off controller-gen crd paths=github.com/fluxcd/helm-controller/api/v2 \
    output:crd:dir="${out}/helm-tmp" >/dev/null)
  mv "${out}/helm-tmp/helm.toolkit.fluxcd.io_helmreleases.yaml" "${f}"
  rm -rf "${out}/helm-tmp"
  stamp crds
}

tool_controller-gen() { gotool controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen; }
tool_helm() { gotool helm helm.sh/helm/v3/cmd/helm; }
tool_chainsaw() { gotool chainsaw github.com/kyverno/chainsaw; }

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(etcd kube controller-gen crds helm chainsaw)
for t in "${tools[@]}"; do "tool_${t}"; done
