#!/usr/bin/env bash
# Measures the Helm and Terraform backends and the gateway controllers
# against the design's performance budget on a private local control plane
# (etcd on tmpfs, the admission policies installed and every controller
# running as its chart's ServiceAccount, as hack/e2e.sh does), and prints
# every figure with its target and whether it is met.
#
#   hack/bench.sh [N]     N instances (default 2000); BENCH_SIZES="2000 10000"
#                         runs several sizes; BENCH_ROUTES routes for
#                         route-conflicts (default 5000; 0 skips the gateway);
#                         BENCH_TENANT_GATEWAYS TenantGateways of 10 routes
#                         each (default 1000; 0 skips them)
#
# BENCH_SHAPES (make bench SHAPE=...) picks the shapes of work, by default
# every one built: create (the pipeline below), fanout (a definition change
# at N settled instances), delete (N instances deleted, then namespaces of
# min(N, 1000) instances), manykinds (N
# instances over BENCH_KINDS definitions, default 50), terraform (create,
# fanout and delete on the Terraform backend, its Terraform objects in the
# platform namespace cozy-tf-<namespace>; no tofu-controller runs) and
# gateways (the gateway controllers). fanout, delete, manykinds and terraform
# run at the controllers' defaults, three runs each against the same
# requests sent raw in the same run (bench/cmd/bench/shapes.go,
# manykinds.go).
# The script exits non-zero when any figure misses its goal.
# BENCH_DIR is the control plane's state directory (default .cache/bench).
#
# The create shape, for each size, on a fresh control plane with the
# controllers at their shipped defaults: the pipeline's requests sent by the
# bench alone before the helm controller starts (T_direct); in rounds taken in
# turns, the raw capacity (HelmReleases created directly by 16 unthrottled
# workers) and the pipeline (instances over one tenant namespace per hundred,
# -> HelmReleases and status), N of each in all; write efficiency 3*T_raw/T
# (the rounds' median) beside the requests' own 3*T_raw/T_direct, writes per
# instance, peak RSS, the helm controller's live heap per instance, profiles,
# then three restarts of the helm controller over the settled instances. Then two
# helm shards (--watch-label-selector) splitting N instances, and the gateway
# controllers. BENCH_SETTINGS="defaults shards gateway" picks the parts;
# "kro" (not among the defaults: it builds kro, and its two settings take
# some 25 minutes at 2,000) adds the nearest peer at the first size. The
# Terraform delete likewise sends its requests alone, on instances a
# terraform controller settled and was then stopped, before the measured one
# starts (BENCH_DIRECT=0 skips both).
source "$(dirname "$0")/lib.sh"
SIZES=${BENCH_SIZES:-${1:-2000}}
PARTS=${BENCH_SETTINGS:-defaults shards gateway}
SHAPES=${BENCH_SHAPES:-create fanout delete manykinds terraform gateways}
for s in ${SHAPES}; do
  case ${s} in
    create | fanout | delete | manykinds | terraform | terraform-create | terraform-fanout | terraform-delete | gateways) ;;
    *) die "bench: unknown shape ${s} (create fanout delete manykinds terraform gateways; terraform-create, -fanout or -delete for one part of terraform)" ;;
  esac
done
has_shape() { [[ " ${SHAPES} " == *" $1 "* ]]; }
DIR="${BENCH_DIR:-${CACHE}/bench}"
export PORT_BASE=${BENCH_PORT_BASE:-22000} CONTROLLER_PORT_BASE=${BENCH_CONTROLLER_PORT_BASE:-22600}
CPB=${CONTROLLER_PORT_BASE}
# The controllers run at the shipped defaults (pkg/manager: 2,000 requests/s,
# burst 4,000, 16 workers); BENCH_CONTROLLER_ARGS measures other flags.
ARGS=${BENCH_CONTROLLER_ARGS:-}
RESULTS="${DIR}.results.tsv"
export RESYNC_PERIOD=10h
# The API server serves /debug/pprof, so the bench can show where its time goes.
export APISERVER_PROFILING=true
# The API server's watch cache consistency check (DetectCacheInconsistency, on
# by default since Kubernetes 1.34) lists every cached kind from etcd every 5
# to 7.5 minutes and compares it with the cache: seconds of CPU at tens of
# thousands of objects, landing in whichever part of a run it falls into. It
# costs a cluster the same whoever its clients are, so both sides of every
# ratio are measured without it (docs/performance.md, "The measure without the
# API server's consistency check").
export APISERVER_FEATURE_GATES=DetectCacheInconsistency=false
# Each controller runs with the Go soft memory limit a pod with its chart's
# memory limit sets (hack/controllers.sh memory_env: the limit less 64 MiB, at
# least half of it, as pkg/manager/memlimit.go SoftMemoryLimit), and its peak
# RSS is judged against that limit. BENCH_MEMORY_LIMIT (NMi) measures another
# limit, the same for every controller.
export CONTROLLER_MEMORY=chart
[[ -z ${BENCH_MEMORY_LIMIT:-} ]] || export CONTROLLER_MEMORY_LIMIT=${BENCH_MEMORY_LIMIT}
# The controllers measured (not the CLIs controllers.sh build adds).
MEASURED=(appdef helm terraform gateway-listeners gateway-certs ns-labels route-conflicts)
memory_limits=""
for c in "${MEASURED[@]}"; do
  memory_limits+="${memory_limits:+,}${c}=$("${ROOT}/hack/controllers.sh" memory-limit "${c}")"
done

cleanup() {
  stop_kro
  "${ROOT}/hack/controllers.sh" stop "${DIR}" >/dev/null 2>&1 || true
  "${ROOT}/hack/cluster.sh" down "${DIR}" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# fresh: a new control plane with the policies and the controllers' identities.
fresh() {
  cleanup
  rm -rf "${DIR}" && mkdir -p "${DIR}"
  "${ROOT}/hack/cluster.sh" up "${DIR}" >/dev/null
  "${ROOT}/hack/policies.sh" "${DIR}" >/dev/null
  "${ROOT}/hack/rbac.sh" "${DIR}" appdef helm terraform route-conflicts gateway-listeners gateway-certs ns-labels >/dev/null
}

bench() { "${BIN}/bench" --kubeconfig "${DIR}/kubeconfig" --results "${RESULTS}" --memory-limits "${memory_limits}" "$@"; }
pid() { cat "${DIR}/$1.pid"; }
# The control plane's processes, whose CPU time the pipeline phase reports.
plane() { echo "apiserver=$(pid kube-apiserver),etcd=$(pid etcd),controller-manager=$(pid kube-controller-manager)"; }
m() { echo "http://127.0.0.1:$1/metrics"; }

# pipeline SETTING TARGET N ARGS: one size at one setting, then three restarts.
pipeline() {
  local setting=$1 target=$2 n=$3 args=$4
  log "bench: ${setting}, N=${n}, controller args: ${args:-(none: the defaults)}"
  fresh
  CONTROLLER_ARGS="${args}" "${ROOT}/hack/controllers.sh" start "${DIR}" appdef
  # The pipeline's requests alone, sent by the bench before the helm
  # controller runs: the most any controller could reach here.
  # (BENCH_DIRECT=0 skips it: at 100,000 it takes as long as the pipeline.)
  echo 0 >"${DIR}/direct.seconds"
  [[ ${BENCH_DIRECT:-1} == 0 ]] ||
    bench --phase direct --setting "${setting}" --n "${n}" --backend-kubeconfig "${DIR}/helm.kubeconfig" \
      --direct-out "${DIR}/direct.seconds" --pids "appdef=$(pid appdef)" --cpu "$(plane)" \
      --apiserver-pprof-out "${CACHE}/bench-${setting}-${n}.direct.apiserver.cpu.pprof"
  CONTROLLER_ARGS="${args}" "${ROOT}/hack/controllers.sh" start-as "${DIR}" helm helm $((CPB + 4)) \
    --pprof-bind-address "127.0.0.1:$((CPB + 10))"
  # Where the time goes: a CPU profile of the helm controller during the pipeline.
  local prof="${CACHE}/bench-${setting}-${n}.helm.cpu.pprof"
  rm -f "${prof}" "${prof%.helm.cpu.pprof}.apiserver.cpu.pprof" "${prof%.cpu.pprof}.heap.pprof"
  # controllers.sh gives the i-th named controller metrics port base+2i.
  bench --phase pipeline --setting "${setting}" --target "${target}" --n "${n}" \
    --pprof "http://127.0.0.1:$((CPB + 10))" --pprof-out "${prof}" \
    --metrics "appdef=$(m $((CPB + 2))),helm=$(m $((CPB + 4)))" --pids "appdef=$(pid appdef),helm=$(pid helm)" --cpu "$(plane)" \
    --direct "$(cat "${DIR}/direct.seconds")"
  # Restart the helm controller over the settled instances, measure.Runs
  # (3) times: the time to settle is judged on the runs' median.
  local rprof="${prof%.helm.cpu.pprof}.restart.helm.cpu.pprof"
  rm -f "${rprof}" "${rprof%.helm.cpu.pprof}.apiserver.cpu.pprof"
  local r running=helm p since starting
  for r in 1 2 3; do
    # The API server's counters before the restart, against which the first
    # restart's first lists are reported.
    bench --phase apiserver-metrics --apiserver-metrics "${DIR}/apiserver.before"
    p=$(pid "${running}")
    kill -TERM -- "-${p}" 2>/dev/null || kill -TERM "${p}"
    while kill -0 "${p}" 2>/dev/null; do sleep 0.1; done
    running="helm-restarted-${r}"
    since=$(date +%s%N)
    # The bench watches the restart from the controller's start: its
    # readiness waits for its caches, which are most of a restart.
    CONTROLLER_ARGS="${args}" "${ROOT}/hack/controllers.sh" start-as "${DIR}" "${running}" helm $((CPB + 20)) \
      --pprof-bind-address "127.0.0.1:$((CPB + 22))" &
    starting=$!
    while [[ ! -s "${DIR}/${running}.pid" ]]; do
      kill -0 "${starting}" 2>/dev/null || die "controller ${running} did not start"
      sleep 0.05
    done
    # The first restart is profiled over its first 60s.
    bench --phase restart --setting "${setting}" --n "${n}" --metrics "helm=$(m $((CPB + 20)))" \
      --pprof "http://127.0.0.1:$((CPB + 22))" --pprof-out "${rprof}" \
      --restart-run "${r}" --restarts-file "${DIR}/restarts" --apiserver-metrics "${DIR}/apiserver.before" \
      --pids "${running}=$(pid "${running}")" --since "${since}"
    wait "${starting}" || die "controller ${running} did not get ready"
  done
  if [[ -s "${prof}" ]]; then
    echo "  CPU profile of the helm controller (the pipeline's middle round): ${prof}; top functions:"
    (cd "${ROOT}/controllers/helm" && go tool pprof -top -nodecount=12 "${BIN}/controller-helm" "${prof}" 2>/dev/null | sed -n '4,18p' | sed 's/^/    /')
  fi
  local aprof="${prof%.helm.cpu.pprof}.apiserver.cpu.pprof"
  if [[ -s "${aprof}" ]]; then
    echo "  CPU profile of the API server (the same span): ${aprof}; top functions by cumulative time:"
    (cd "${ROOT}/controllers/helm" && go tool pprof -top -cum -nodecount=25 "${aprof}" 2>/dev/null | sed -n '4,31p' | sed 's/^/    /')
  fi
  if [[ -s "${rprof}" ]]; then
    echo "  CPU profiles of the restart's first 60s: ${rprof}, ${rprof%.helm.cpu.pprof}.apiserver.cpu.pprof"
  fi
}

# shards N: two helm shards, each with its own selector and lease.
shards() {
  local n=$1
  log "bench: two helm shards, N=${n}"
  fresh
  CONTROLLER_ARGS="${ARGS}" "${ROOT}/hack/controllers.sh" start "${DIR}" appdef
  local s
  for s in 0 1; do
    CONTROLLER_ARGS="${ARGS}" "${ROOT}/hack/controllers.sh" start-as "${DIR}" "helm-s${s}" helm $((CPB + 30 + 2 * s)) \
      --watch-label-selector "cozystack.io/shard=s${s}"
  done
  bench --phase pipeline --setting "2 shards" --target 0.8 --n "${n}" --shards 2 \
    --metrics "appdef=$(m $((CPB + 2))),helm-s0=$(m $((CPB + 30))),helm-s1=$(m $((CPB + 32)))" \
    --pids "appdef=$(pid appdef),helm-s0=$(pid helm-s0),helm-s1=$(pid helm-s1)" --cpu "$(plane)"
}

# shape SHAPE N [BACKEND]: one shape of work beside the create pipeline
# (bench --phase create, fanout, delete or manykinds), the appdef controller
# and the controller of BACKEND (helm or terraform, default helm) at their
# defaults.
failed=0
shape() {
  local shape=$1 n=$2 backend=${3:-helm} setting=$1
  [[ ${backend} == helm ]] || setting="${backend} ${shape}"
  log "bench: ${setting}, N=${n}, at the controllers' defaults"
  fresh
  CONTROLLER_ARGS="" "${ROOT}/hack/controllers.sh" start "${DIR}" appdef
  echo 0 >"${DIR}/direct.seconds"
  # The delete shape profiles the API server over its middle run, and over
  # 20s of the requests alone: where the server's time goes in each.
  local aprof="${CACHE}/bench-${backend}-${shape}-${n}.apiserver.cpu.pprof"
  local dprof="${CACHE}/bench-${backend}-${shape}-direct-${n}.apiserver.cpu.pprof"
  rm -f "${aprof}" "${dprof}"
  local profile=()
  [[ ${shape} != delete ]] || profile=(--apiserver-pprof-out "${aprof}")
  # A Terraform delete's requests alone (BENCH_DIRECT=0 skips it): the
  # terraform controller, run for this part alone, settles N instances, is
  # stopped, and the bench deletes them with the requests the controller
  # would send, so the objects are the pipeline's own.
  if [[ ${shape} == delete && ${backend} == terraform && ${BENCH_DIRECT:-1} != 0 ]]; then
    local direct=(--backend terraform --setting "${setting}, defaults" --n "${n}"
      --backend-kubeconfig "${DIR}/terraform.kubeconfig" --direct-out "${DIR}/direct.seconds")
    CONTROLLER_ARGS="" "${ROOT}/hack/controllers.sh" start-as "${DIR}" terraform-direct terraform $((CPB + 20))
    bench --phase direct-delete-setup "${direct[@]}" || failed=1
    local p
    p=$(pid terraform-direct)
    kill -TERM -- "-${p}" 2>/dev/null || kill -TERM "${p}"
    while kill -0 "${p}" 2>/dev/null; do sleep 0.1; done
    bench --phase direct-delete "${direct[@]}" --apiserver-pprof-out "${dprof}" \
      --pids "appdef=$(pid appdef)" --cpu "$(plane)" || failed=1
  fi
  # Its profiler gives the create shape the controller's live heap.
  CONTROLLER_ARGS="" "${ROOT}/hack/controllers.sh" start-as "${DIR}" "${backend}" "${backend}" $((CPB + 4)) \
    --pprof-bind-address "127.0.0.1:$((CPB + 10))"
  bench --phase "${shape}" --backend "${backend}" --controller "cozystack-${backend}" --setting "${setting}, defaults" \
    --n "${n}" --kinds "${BENCH_KINDS:-50}" --metrics "appdef=$(m $((CPB + 2))),${backend}=$(m $((CPB + 4)))" \
    --pprof "http://127.0.0.1:$((CPB + 10))" --heap-out "${CACHE}/bench-${backend}-${shape}-${n}.heap.pprof" \
    --pids "appdef=$(pid appdef),${backend}=$(pid "${backend}")" --cpu "$(plane)" \
    --direct "$(cat "${DIR}/direct.seconds")" "${profile[@]}" || failed=1
  local p
  for p in "${aprof}" "${dprof}"; do
    [[ -s ${p} ]] || continue
    echo "  CPU profile of the API server: ${p}; top functions by cumulative time:"
    (cd "${ROOT}/controllers/helm" && go tool pprof -top -cum -nodecount=25 "${p}" 2>/dev/null | sed -n '4,31p' | sed 's/^/    /')
  done
}

# gateway: the four gateway controllers.
# The first phase (gatewaybench --phase work) times convergence, route-conflicts
# and BENCH_TENANT_GATEWAYS TenantGateways against the same requests sent raw
# (bench/cmd/gatewaybench/tenants.go); the raw side's objects carry
# bench.cozystack.io/raw=true, which the controllers' watches leave out. Then
# the controllers restart with a resync period of GATEWAY_RESYNC over
# everything settled, and their writes over two periods are judged against 0
# (--phase idle): short, rather than a minute against a 10-hour resync.
GATEWAY_RESYNC=30s
gateway() {
  local routes=$1 gw=(gateway-listeners gateway-certs ns-labels route-conflicts) metrics=() pids=() pprofs=() i=0 c
  local args="${ARGS} --watch-label-selector bench.cozystack.io/raw!=true"
  log "bench: gateway controllers, ${routes} routes, ${BENCH_TENANT_GATEWAYS:-1000} TenantGateways"
  # Between runs the bench deletes the last run's TenantGateways and their
  # objects; the garbage collector then reads each dependent once (404), at
  # the controller manager's client rate: at its default of 20 requests/s,
  # some 12,000 reads would still trickle into the next run.
  CONTROLLER_MANAGER_QPS=500 fresh
  CONTROLLER_PPROF_BASE=$((CPB + 50)) CONTROLLER_ARGS="${args}" "${ROOT}/hack/controllers.sh" start "${DIR}" "${gw[@]}"
  for c in "${gw[@]}"; do
    i=$((i + 1))
    metrics+=("${c}=$(m $((CPB + 2 * i)))")
    pids+=("${c}=$(pid "${c}")")
    pprofs+=("${c}=http://127.0.0.1:$((CPB + 50 + i))")
    rm -f "${CACHE}/bench-gateway-${c}.cpu.pprof"
  done
  local gb=("${BIN}/gatewaybench" --kubeconfig "${DIR}/kubeconfig" --results "${RESULTS}" --metrics "$(IFS=,; echo "${metrics[*]}")" \
    --memory-limits "${memory_limits}")
  "${gb[@]}" --phase work --routes "${routes}" --tenant-gateways "${BENCH_TENANT_GATEWAYS:-1000}" \
    --pids "$(IFS=,; echo "${pids[*]}")" --cpu "$(plane)" --pprof "$(IFS=,; echo "${pprofs[*]}")" --pprof-dir "${CACHE}" || failed=1
  # Each controller's CPU over the first minute of the tenant gateways'
  # second run, and its live heap over everything the runs left: where its
  # time and its memory go.
  i=0
  for c in "${gw[@]}"; do
    i=$((i + 1))
    local cpu="${CACHE}/bench-gateway-${c}.cpu.pprof"
    if [[ -s "${cpu}" ]]; then
      echo "  ${c}: CPU, heaviest functions, cumulative (${cpu}):"
      (cd "${ROOT}/controllers/${c}" && go tool pprof -top -cum -nodecount=15 "${BIN}/controller-${c}" "${cpu}" 2>/dev/null | sed -n '4,21p' | sed 's/^/    /')
    fi
    local heap="${CACHE}/bench-gateway-${c}.heap.pprof"
    if curl -fsS -o "${heap}" "http://127.0.0.1:$((CPB + 50 + i))/debug/pprof/heap?gc=1"; then
      echo "  ${c}: live heap, heaviest allocation sites (${heap}):"
      (cd "${ROOT}/controllers/${c}" && go tool pprof -sample_index=inuse_space -top -nodecount=10 "${BIN}/controller-${c}" "${heap}" 2>/dev/null | sed -n '2,16p' | sed 's/^/    /')
    fi
  done
  "${ROOT}/hack/controllers.sh" stop "${DIR}" >/dev/null
  RESYNC_PERIOD=${GATEWAY_RESYNC} CONTROLLER_ARGS="${args}" "${ROOT}/hack/controllers.sh" start "${DIR}" "${gw[@]}"
  "${gb[@]}" --phase idle --resync "${GATEWAY_RESYNC}" || failed=1
}

# peer_kro N: the nearest peer, kro (the version hack/tools/kro pins), with
# a ResourceGraphDefinition that makes of each instance the HelmRelease the
# helm controller makes (bench --phase kro), at its chart's settings and at
# the tuned client settings with its work queue's rate limit lifted. kro runs
# as an administrator, since its chart grants it the rights to every kind.
KRO_VERSION=$(awk '$1 == "github.com/kubernetes-sigs/kro" {print $2}' "${ROOT}/hack/tools/kro/go.mod")
peer_kro() {
  local n=$1 setting crds port=$((CPB + 40))
  "${ROOT}/hack/tools.sh" kro
  crds="$(moddir "github.com/kubernetes-sigs/kro@${KRO_VERSION}")/helm/crds"
  for setting in defaults tuned; do
    log "bench: kro ${KRO_VERSION} at its ${setting}, N=${n}"
    fresh
    kubectl --kubeconfig "${DIR}/kubeconfig" apply --server-side -f "${crds}" >/dev/null
    kubectl --kubeconfig "${DIR}/kubeconfig" wait --for=condition=Established --timeout=60s crd --all >/dev/null
    # The chart's values (helm/values.yaml config): production logging,
    # 100 requests/s (burst 150), one worker, a work queue of 10 items/s
    # (burst 100); no Go memory limit, as its chart sets none.
    local args=(--zap-devel=false --zap-log-level=info --zap-encoder=console
      --metrics-bind-address "127.0.0.1:${port}" --health-probe-bind-address "127.0.0.1:$((port + 1))")
    [[ ${setting} == tuned ]] && args+=(--client-qps=2000 --client-burst=4000 --dynamic-controller-concurrent-reconciles=16
      --dynamic-controller-rate-limiter-rate-limit=100000 --dynamic-controller-rate-limiter-burst-limit=100000)
    "${BIN}/kro" --kubeconfig "${DIR}/kubeconfig" "${args[@]}" >"${DIR}/kro.log" 2>&1 &
    echo $! >"${DIR}/kro.pid"
    bench --phase kro --setting "kro ${KRO_VERSION} ${setting}" --n "${n}" --pids "kro=$(pid kro)" --cpu "$(plane)"
    stop_kro
  done
}

stop_kro() {
  [[ -f "${DIR}/kro.pid" ]] || return 0
  local p; p=$(cat "${DIR}/kro.pid")
  kill -TERM "${p}" 2>/dev/null || true
  while kill -0 "${p}" 2>/dev/null; do sleep 0.1; done
  rm -f "${DIR}/kro.pid"
}

for c in "${MEASURED[@]}"; do
  (cd "${ROOT}/controllers/${c}" && go build -o "${BIN}/controller-${c}" .)
done
(cd "${ROOT}/bench" && GOWORK=off go build -o "${BIN}/bench" ./cmd/bench && GOWORK=off go build -o "${BIN}/gatewaybench" ./cmd/gatewaybench)
rm -f "${RESULTS}"
log "controllers' memory limits (MiB): ${memory_limits}"
log "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
first=${SIZES%% *}
if has_shape create; then
  for n in ${SIZES}; do
    [[ " ${PARTS} " == *" defaults "* ]] && pipeline defaults 0.8 "${n}" "${ARGS}"
  done
  [[ " ${PARTS} " == *" shards "* ]] && shards "${first}"
  [[ " ${PARTS} " == *" kro "* ]] && peer_kro "${first}"
fi
for s in fanout delete manykinds; do
  if has_shape "${s}"; then
    for n in ${SIZES}; do shape "${s}" "${n}"; done
  fi
done
for n in ${SIZES}; do
  for s in create fanout delete; do
    if has_shape terraform || has_shape "terraform-${s}"; then shape "${s}" "${n}" terraform; fi
  done
done
ROUTES=${BENCH_ROUTES:-5000}
has_shape gateways && [[ " ${PARTS} " == *" gateway "* && ${ROUTES} -gt 0 ]] && gateway "${ROUTES}"
log "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "== every figure (setting, figure, value, target, verdict); also in ${RESULTS}"
[[ -s ${RESULTS} ]] && column -t -s $'\t' "${RESULTS}"
if [[ ${failed} -ne 0 ]] || grep -q $'\tmissed$' "${RESULTS}" 2>/dev/null; then
  log "bench: a figure missed its goal (or a shape failed)"
  exit 1
fi
