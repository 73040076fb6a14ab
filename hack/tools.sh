#!/usr/bin/env bash
# Builds or installs every tool the tests and the local control plane need into
# .cache/bin (git-ignored). Each tool is rebuilt only when the module that pins
# it changes, so a second run takes seconds.
#
#   hack/tools.sh [tool...]   tools: etcd kube controller-gen crds helm chainsaw envoy-gateway
#                             (default: all of these); kro (the peer hack/bench.sh can measure)
#                             only when named
#
# Built tools are also kept in a machine-wide cache, keyed by the hash of the
# files that pin them, so that another checkout of the same commit (a fresh
# clone, a CI run) copies them instead of building them again: building
# kube-apiserver and kube-controller-manager from source takes about 15 minutes
# on two cores with empty Go caches. The cache lives in
# ${XDG_CACHE_HOME:-~/.cache}/cozyplane/tools; COZY_TOOLS_CACHE=DIR moves it and
# COZY_TOOLS_CACHE= (empty) turns it off. A cached tool is used only when its
# key matches, so a changed go.mod or go.sum always builds afresh.
source "$(dirname "$0")/lib.sh"

SHARED="${COZY_TOOLS_CACHE-${XDG_CACHE_HOME:-${HOME}/.cache}/cozyplane/tools}"

# fresh NAME FILE... : true when NAME was built from exactly these inputs, or
# could be restored from the machine-wide cache. Otherwise it records the key
# for `stamp` and returns false.
fresh() {
  local name=$1; shift
  local want; want=$(cat "$@" | sha256sum | cut -c1-16)
  if [[ -f "${CACHE}/stamps/${name}" && "$(cat "${CACHE}/stamps/${name}")" == "${want}" ]] && outputs_present "${name}"; then
    save "${name}" "${want}"
    return 0
  fi
  echo "${want}" > "${CACHE}/stamps/${name}.want"
  if restore "${name}" "${want}"; then stamp "${name}"; return 0; fi
  return 1
}

# stamp NAME records the key of the build that just finished and saves its
# outputs to the machine-wide cache.
stamp() {
  local name=$1 want; want=$(cat "${CACHE}/stamps/${name}.want")
  save "${name}" "${want}"
  mv "${CACHE}/stamps/${name}.want" "${CACHE}/stamps/${name}"
}

# outputs NAME lists the files a tool's build produces, relative to .cache.
outputs() {
  case $1 in
    kube) echo bin/kube-apiserver bin/kube-controller-manager ;;
    crds) echo crds/helm.toolkit.fluxcd.io_helmreleases.yaml ;;
    *) echo "bin/$1" ;;
  esac
}

outputs_present() {
  local f
  for f in $(outputs "$1"); do [[ -s "${CACHE}/${f}" ]] || return 1; done
}

restore() {
  local name=$1 key=$2 f
  [[ -n "${SHARED}" && -f "${SHARED}/${name}-${key}/complete" ]] || return 1
  for f in $(outputs "${name}"); do
    mkdir -p "$(dirname "${CACHE}/${f}")"
    cp -p "${SHARED}/${name}-${key}/${f}" "${CACHE}/${f}.tmp" && mv "${CACHE}/${f}.tmp" "${CACHE}/${f}" || return 1
  done
  log "${name}: reused the build cached in ${SHARED}"
}

save() {
  local name=$1 key=$2 f dir
  [[ -n "${SHARED}" ]] || return 0
  dir="${SHARED}/${name}-${key}"
  [[ -f "${dir}/complete" ]] && return 0
  mkdir -p "${dir}" 2>/dev/null || return 0
  for f in $(outputs "${name}"); do
    mkdir -p "$(dirname "${dir}/${f}")"
    cp -p "${CACHE}/${f}" "${dir}/${f}" || return 0
  done
  touch "${dir}/complete"
}
mkdir -p "${CACHE}/stamps"

tool_etcd() {
  # Built from the etcd release pinned in hack/tools/etcd, not taken from the
  # distribution: Debian's etcd-server is 3.4.23, which lacks the progress
  # notifications the API server needs to serve consistent lists and streamed
  # informer lists (WatchList) from its watch cache. Without them every
  # controller's first list is read from etcd and decoded again page by page.
  local dir="${ROOT}/hack/tools/etcd"
  if fresh etcd "${dir}/go.mod" "${dir}/go.sum" "${dir}/main.go"; then return; fi
  log "building etcd $(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" {print $3}' "${dir}/go.mod")"
  (cd "${dir}" && GOWORK=off go build -o "${BIN}/etcd.tmp" . && mv "${BIN}/etcd.tmp" "${BIN}/etcd")
  stamp etcd
}

tool_kube() {
  local dir="${ROOT}/hack/tools/kube"
  if fresh kube "${dir}/go.mod" "${dir}/go.sum"; then return; fi
  log "building kube-apiserver and kube-controller-manager ${KUBE_VERSION} (first time: ~15 min on two cores)"
  local ldflags="-X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"
  (cd "${dir}" && GOWORK=off go build -ldflags "${ldflags}" -o "${BIN}/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
  (cd "${dir}" && GOWORK=off go build -ldflags "${ldflags}" -o "${BIN}/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager)
  stamp kube
}

# gotool NAME PACKAGE: builds a tool pinned with `go get -tool` in hack/tools/NAME.
gotool() {
  local name=$1 pkg=$2 dir="${ROOT}/hack/tools/$1"
  if fresh "${name}" "${dir}/go.mod" "${dir}/go.sum"; then return; fi
  log "building ${name}"
  (cd "${dir}" && GOWORK=off GONOSUMDB=github.com/kyverno GOFLAGS=-mod=mod go build -o "${BIN}/${name}" "${pkg}")
  stamp "${name}"
}

# tool_crds generates the third-party CRDs that no module ships as YAML:
# HelmRelease, from helm-controller's API types.
tool_crds() {
  tool_controller-gen
  local out="${CACHE}/crds" f="${CACHE}/crds/helm.toolkit.fluxcd.io_helmreleases.yaml"
  if fresh crds "${ROOT}/api/go.sum" "${ROOT}/hack/tools/controller-gen/go.sum"; then return; fi
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
tool_kro() { gotool kro github.com/kubernetes-sigs/kro/cmd/controller; }
# Envoy Gateway's control plane: the Gateway API implementation the e2e suite
# runs beside the local control plane (hack/envoy-gateway.sh). First build:
# 10 to 40 minutes on two cores.
tool_envoy-gateway() { gotool envoy-gateway github.com/envoyproxy/gateway/cmd/envoy-gateway; }

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(etcd kube controller-gen crds helm chainsaw envoy-gateway)
for t in "${tools[@]}"; do "tool_${t}"; done
