#!/usr/bin/env bash
# Upstream's flux shard operator (cozy-fluxcd:flux-shard-operator) moves a
# tenant's HelmReleases to a helm-controller shard: it merge-patches the label
# sharding.fluxcd.io/key, already set (it lists the HelmReleases carrying it),
# to shard<i> on every HelmRelease of the tenant's namespace (tenant modules
# and instances' HelmReleases alike), and records the shard on the namespace
# (internal/fluxshardoperator/controller.go, stamp and patchLabel). As that
# identity the relabel is admitted and kept; anything else it might write to
# such a HelmRelease is refused and says what it may do; the tenant
# relabelling is refused. sharding.sh CASE.
cd "$(dirname "$0")"
source ../actors.sh
ns shd
relabel() { echo "{\"metadata\":{\"labels\":{\"sharding.fluxcd.io/key\":\"$1\"}}}"; }
hint="(the flux shard operator changes only the label sharding.fluxcd.io/key, already set, to shard<i>, in tenant-* namespaces)"
S=system:serviceaccount:$FLUX_NS:flux-shard-operator

case "$1" in
setup)
  setup shd >/dev/null
  fixture ../modules/etcd.yaml "$c" tenant-child "$p" | kubectl "${flux[@]}" create -f - >/dev/null
  ;;
teardown) teardown shd ;;
relabel)
  can yes shard patch helmreleases.helm.toolkit.fluxcd.io "$c"
  [[ "$(kubectl -n "$c" get helmrelease act-web -o jsonpath='{.metadata.labels.sharding\.fluxcd\.io/key}')" == tenants ]]
  $a allow -- kubectl -n "$c" "${shard[@]}" patch namespace "$c" --type=merge -p '{"metadata":{"labels":{"internal.cozystack.io/flux-shard":"shard1"}}}'
  $a allow -- kubectl -n "$c" "${shard[@]}" patch helmrelease etcd --type=merge -p "$(relabel shard1)"
  $a allow -- kubectl -n "$c" "${shard[@]}" patch helmrelease etcd --type=merge -p "$(relabel shard12)"
  [[ "$(kubectl -n "$c" get helmrelease etcd -o jsonpath='{.metadata.labels.sharding\.fluxcd\.io/key}')" == shard12 ]]
  # the helm backend's HelmRelease of an instance is relabelled the same way
  # (dry run: which writer keeps the label is the backend's business)
  $a allow -- kubectl -n "$c" "${shard[@]}" patch helmrelease act-web --type=merge -p "$(relabel shard12)" --dry-run=server
  ;;
refused)
  $a deny $B "HelmRelease $c/etcd (Etcd/etcd of apps.cozystack.io) is rendered by the Helm release $p/tenant-child, which Flux applies from a platform chart, and only Flux writes it: UPDATE by $S is refused $hint" -- \
    kubectl -n "$c" "${shard[@]}" patch helmrelease etcd --type=merge -p '{"spec":{"suspend":true}}'
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$c" "${shard[@]}" patch helmrelease etcd --type=merge -p "$(relabel evil)"
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$c" "${shard[@]}" patch helmrelease etcd --type=merge -p "$(relabel shard01)"
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$c" "${shard[@]}" label helmrelease etcd sharding.fluxcd.io/key-
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$c" "${shard[@]}" patch helmrelease etcd --type=merge \
    -p '{"metadata":{"labels":{"sharding.fluxcd.io/key":"shard2","apps.cozystack.io/application.name":"other"}}}'
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$c" "${shard[@]}" annotate helmrelease etcd meta.helm.sh/release-name=evil --overwrite
  # a HelmRelease without the key is not one it moves (it lists those carrying it)
  fixture ../modules/info.yaml "$c" tenant-child "$p" | sed '/sharding.fluxcd.io/d' | kubectl "${flux[@]}" create -f - >/dev/null
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$c" "${shard[@]}" patch helmrelease info --type=merge -p "$(relabel shard1)"
  # an instance's HelmRelease: the label only, as for the modules
  $a deny $B "HelmRelease $c/act-web is the backing object of the instance E2eActApp/web (apps.cozystack.io) and only its backend controller writes it: UPDATE by $S is refused $hint" -- \
    kubectl -n "$c" "${shard[@]}" patch helmrelease act-web --type=merge -p '{"spec":{"targetNamespace":"kube-system"}}' --dry-run=server
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$c" "${shard[@]}" patch helmrelease act-web --type=merge \
    -p '{"metadata":{"labels":{"sharding.fluxcd.io/key":"shard1"},"ownerReferences":null}}' --dry-run=server
  # outside tenant namespaces
  fixture ../modules/etcd.yaml "$NAMESPACE" tenant-child "$p" | kubectl create -f - >/dev/null
  $a deny $B "UPDATE by $S is refused $hint" -- kubectl -n "$NAMESPACE" "${shard[@]}" patch helmrelease etcd --type=merge -p "$(relabel shard1)"
  # its role grants no delete nor status
  can no shard delete helmreleases.helm.toolkit.fluxcd.io "$c"
  can no shard patch helmreleases.helm.toolkit.fluxcd.io "$c" status
  ;;
tenant)
  can yes tenant patch helmreleases.helm.toolkit.fluxcd.io "$c"
  $a deny $B "HelmRelease $c/etcd (Etcd/etcd of apps.cozystack.io) is rendered by the Helm release $p/tenant-child, which Flux applies from a platform chart, and only Flux writes it: UPDATE by system:serviceaccount:$c:tenant-admin is refused." -- \
    kubectl -n "$c" "${tenant[@]}" patch helmrelease etcd --type=merge -p "$(relabel shard0)"
  $a deny $B "HelmRelease $c/act-web is the backing object of the instance E2eActApp/web (apps.cozystack.io) and only its backend controller writes it: UPDATE by system:serviceaccount:$c:tenant-admin is refused. Change the instance E2eActApp/web instead" -- \
    kubectl -n "$c" "${tenant[@]}" patch helmrelease act-web --type=merge -p "$(relabel shard0)"
  [[ "$(kubectl -n "$c" get helmrelease etcd -o jsonpath='{.metadata.labels.sharding\.fluxcd\.io/key}')" == shard12 ]]
  ;;
esac
