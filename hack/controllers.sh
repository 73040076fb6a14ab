#!/usr/bin/env bash
# Builds and runs the controllers against a local control plane.
#
#   hack/controllers.sh build                build every controller into .cache/bin/controller-<name>,
#                                            and the gen and cozyplane CLIs
#   hack/controllers.sh start DIR [NAME...]  start them (default: all) against DIR/kubeconfig
#   hack/controllers.sh stop  DIR            stop the controllers started in DIR
#   hack/controllers.sh start-as DIR ALIAS NAME PORT [ARG...]
#                                            start controller NAME once more as ALIAS (ALIAS.log,
#                                            ALIAS.pid; metrics on PORT, probes on PORT+1) with
#                                            extra ARGs, e.g. a shard's --watch-label-selector
#   hack/controllers.sh memory-limit NAME    the memory limit of NAME's container in MiB: its
#                                            chart's, or CONTROLLER_MEMORY_LIMIT (NMi) when set
#
# Each controller is a module under controllers/<name> with its main.go at the
# module root. Logs go to DIR/<name>.log, pids to DIR/<name>.pid.
#
# gateway-listeners gets its chart's --cert-manager-namespace, rendered with
# POLICY_VALUES when set (the values file hack/policies.sh renders the
# policies with, e.g. charts/policies/values-stock.yaml), so the controllers
# and the policies name the same cert-manager.
#
# With CONTROLLER_MEMORY=chart (the bench), each controller runs with the Go
# soft memory limit a pod with its container's memory limit sets (memory-limit
# above; the limit less 64 MiB, at least half of it: pkg/manager/memlimit.go
# SoftMemoryLimit), as in a cluster.
source "$(dirname "$0")/lib.sh"

# memory_limit NAME: the memory limit of controller NAME's container in MiB.
memory_limit() {
  local limit=${CONTROLLER_MEMORY_LIMIT:-$(awk '/^resources:/{r=1} r&&/limits:/{l=1} r&&l&&/memory:/{print $2; exit}' "${ROOT}/charts/$1/values.yaml")}
  [[ ${limit} =~ ^([0-9]+)Mi$ ]] ||
    die "memory limit ${limit:-missing} of $1 (charts/$1/values.yaml resources.limits.memory or CONTROLLER_MEMORY_LIMIT), want NMi"
  echo "${BASH_REMATCH[1]}"
}

# memory_env NAME: GOMEMLIMIT=... for controller NAME under CONTROLLER_MEMORY=chart.
memory_env() {
  [[ ${CONTROLLER_MEMORY:-} == chart ]] || return 0
  local limit soft
  limit=$(memory_limit "$1")
  soft=$((limit - 64 > limit / 2 ? limit - 64 : limit / 2))
  echo "GOMEMLIMIT=$((soft * 1048576))"
}

# chart_args NAME: the flags of controller NAME that depend on the
# identities of its chart's values (one a line; none for most controllers).
chart_args() {
  case "$1" in
    gateway-listeners)
      "${ROOT}/hack/tools.sh" helm >/dev/null
      local values=()
      [[ -n "${POLICY_VALUES:-}" ]] && values=(-f "${POLICY_VALUES}")
      helm template cozystack "${ROOT}/charts/gateway-listeners" "${values[@]}" --show-only templates/deployment.yaml |
        grep -o -- '--cert-manager-namespace=[a-z0-9-]*' || die "charts/gateway-listeners renders no --cert-manager-namespace"
      ;;
  esac
}

all_controllers() {
  local d
  for d in "${ROOT}"/controllers/*/; do
    [[ -f "${d}/go.mod" && -f "${d}/main.go" ]] && basename "${d}"
  done
  return 0
}

build() {
  local name
  for name in $(all_controllers); do
    (cd "${ROOT}/controllers/${name}" && go build -o "${BIN}/controller-${name}" .)
  done
  # The generator's CLI, for scenarios that turn a module into a definition.
  (cd "${ROOT}/gen" && go build -o "${BIN}/gen" ./cmd/gen)
  # The CLI (and its kubectl plugin name), for scenarios that call it.
  (cd "${ROOT}/cmd/cozyplane" && go build -o "${BIN}/cozyplane" .)
  ln -sf cozyplane "${BIN}/kubectl-cozyplane"
}

start() {
  local dir=$1; shift
  local names=("$@") i=0 name
  [[ ${#names[@]} -gt 0 ]] || mapfile -t names < <(all_controllers)
  local port_base=${CONTROLLER_PORT_BASE:-20600}
  for name in "${names[@]}"; do
    i=$((i + 1))
    [[ -x "${BIN}/controller-${name}" ]] || die "controller ${name} is not built"
    if [[ -f "${dir}/${name}.pid" ]] && kill -0 "$(cat "${dir}/${name}.pid")" 2>/dev/null; then continue; fi
    local kubeconfig="${dir}/kubeconfig"
    # A controller runs as its own ServiceAccount when hack/rbac.sh prepared a
    # kubeconfig for it, so the e2e suite proves its ClusterRole suffices.
    [[ -f "${dir}/${name}.kubeconfig" ]] && kubeconfig="${dir}/${name}.kubeconfig"
    local own=() own_args
    own_args=$(chart_args "${name}")
    [[ -z "${own_args}" ]] || mapfile -t own <<<"${own_args}"
    local mem
    mem=$(memory_env "${name}")
    # CONTROLLER_PPROF_BASE serves each controller's profiler on its own port:
    # base + its position among the names started.
    local pprof=()
    [[ -z "${CONTROLLER_PPROF_BASE:-}" ]] || pprof=(--pprof-bind-address "127.0.0.1:$((CONTROLLER_PPROF_BASE + i))")
    setsid env ${mem} "${BIN}/controller-${name}" --kubeconfig "${kubeconfig}" \
      --metrics-bind-address "127.0.0.1:$((port_base + 2 * i))" \
      --health-probe-bind-address "127.0.0.1:$((port_base + 2 * i + 1))" \
      --resync-period "${RESYNC_PERIOD:-10h}" "${own[@]}" "${pprof[@]}" \
      ${CONTROLLER_ARGS:-} >"${dir}/${name}.log" 2>&1 </dev/null 9>&- &
    echo $! > "${dir}/${name}.pid"
  done
  for name in "${names[@]}"; do
    local j=0 port
    for n in "${names[@]}"; do j=$((j + 1)); [[ "${n}" == "${name}" ]] && port=$((port_base + 2 * j + 1)); done
    for _ in $(seq 1 300); do
      curl -fsS "http://127.0.0.1:${port}/readyz" >/dev/null 2>&1 && break
      kill -0 "$(cat "${dir}/${name}.pid")" 2>/dev/null || { tail -n 30 "${dir}/${name}.log" >&2; die "controller ${name} exited"; }
      sleep 0.2
    done
    curl -fsS "http://127.0.0.1:${port}/readyz" >/dev/null 2>&1 || die "controller ${name} not ready; see ${dir}/${name}.log"
  done
}

start_as() {
  local dir=$1 alias=$2 name=$3 port=$4; shift 4
  [[ -x "${BIN}/controller-${name}" ]] || die "controller ${name} is not built"
  local kubeconfig="${dir}/kubeconfig"
  [[ -f "${dir}/${name}.kubeconfig" ]] && kubeconfig="${dir}/${name}.kubeconfig"
  local own=() own_args
  own_args=$(chart_args "${name}")
  [[ -z "${own_args}" ]] || mapfile -t own <<<"${own_args}"
  local mem
  mem=$(memory_env "${name}")
  setsid env ${mem} "${BIN}/controller-${name}" --kubeconfig "${kubeconfig}" \
    --metrics-bind-address "127.0.0.1:${port}" --health-probe-bind-address "127.0.0.1:$((port + 1))" \
    --resync-period "${RESYNC_PERIOD:-10h}" "${own[@]}" ${CONTROLLER_ARGS:-} "$@" >"${dir}/${alias}.log" 2>&1 </dev/null 9>&- &
  echo $! > "${dir}/${alias}.pid"
  for _ in $(seq 1 300); do
    curl -fsS "http://127.0.0.1:$((port + 1))/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$(cat "${dir}/${alias}.pid")" 2>/dev/null || { tail -n 30 "${dir}/${alias}.log" >&2; die "controller ${alias} exited"; }
    sleep 0.2
  done
  die "controller ${alias} not ready; see ${dir}/${alias}.log"
}

stop() {
  local dir=$1 f pid
  for f in "${dir}"/*.pid; do
    [[ -e "${f}" ]] || continue
    case "$(basename "${f}" .pid)" in etcd|kube-apiserver|kube-controller-manager) continue ;; esac
    pid=$(cat "${f}")
    kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-${pid}" 2>/dev/null || true
    rm -f "${f}"
  done
}

case "${1:-}" in
  build) build ;;
  start) shift; start "$@" ;;
  start-as) shift; start_as "$@" ;;
  stop) stop "$2" ;;
  list) all_controllers ;;
  memory-limit) memory_limit "$2" ;;
  *) die "usage: $0 build | start DIR [NAME...] | start-as DIR ALIAS NAME PORT [ARG...] | stop DIR | list | memory-limit NAME" ;;
esac
