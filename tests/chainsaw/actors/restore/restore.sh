#!/usr/bin/env bash
# Upstream's backup strategy controller
# (cozy-backup-controller:backupstrategy-controller) suspends an application's
# HelmRelease for the length of a restore and resumes it afterwards: a GET,
# spec.suspend set, an UPDATE of the whole object
# (internal/backupcontroller/cnpgstrategy_controller.go,
# setCNPGRestoreHRSuspended, on the Postgres instance's HelmRelease;
# etcdstrategy_controller.go, on the tenant's etcd module). As that identity
# it is admitted; with anything else changed it is refused and told what it
# may do; the tenant suspending is refused. restore.sh CASE.
cd "$(dirname "$0")"
source ../actors.sh
ns rst
hint="(the backup strategy controller changes only spec.suspend, in tenant-* namespaces)"
R=system:serviceaccount:cozy-backup-controller:backupstrategy-controller
# suspended NAMESPACE NAME BOOL [JQ]: the HelmRelease as read, spec.suspend set (and JQ applied)
suspended() { kubectl -n "$1" get helmrelease "$2" -o json | jq ".spec.suspend = $3 | ${4:-.}"; }

case "$1" in
setup)
  setup rst >/dev/null
  fixture ../modules/etcd.yaml "$c" tenant-child "$p" | kubectl "${flux[@]}" create -f - >/dev/null
  ;;
teardown) teardown rst ;;
suspend)
  can yes backup update helmreleases.helm.toolkit.fluxcd.io "$c"
  # the etcd module: suspended, then resumed, as the etcd strategy does
  suspended "$c" etcd true | $a allow -- kubectl "${backup[@]}" replace -f -
  [[ "$(kubectl -n "$c" get helmrelease etcd -o jsonpath='{.spec.suspend}')" == true ]]
  suspended "$c" etcd false | $a allow -- kubectl "${backup[@]}" replace -f -
  [[ "$(kubectl -n "$c" get helmrelease etcd -o jsonpath='{.spec.suspend}')" == false ]]
  # the helm backend's HelmRelease of an instance (as the Postgres strategy
  # does; dry run: whether the backend keeps the suspension is its business)
  suspended "$c" act-web true | $a allow -- kubectl "${backup[@]}" replace --dry-run=server -f -
  ;;
refused)
  suspended "$c" etcd true '.spec.timeout = "1m"' | $a deny $B "HelmRelease $c/etcd (Etcd/etcd of apps.cozystack.io) is rendered by the Helm release $p/tenant-child, which Flux applies from a platform chart, and only Flux writes it: UPDATE by $R is refused $hint" -- \
    kubectl "${backup[@]}" replace -f -
  suspended "$c" act-web true '.spec.values = {"replicas": 9}' | $a deny $B "HelmRelease $c/act-web is the backing object of the instance E2eActApp/web (apps.cozystack.io) and only its backend controller writes it: UPDATE by $R is refused $hint" -- \
    kubectl "${backup[@]}" replace --dry-run=server -f -
  suspended "$c" act-web true '.metadata.labels["apps.cozystack.io/application.name"] = "other"' | $a deny $B "UPDATE by $R is refused $hint" -- kubectl "${backup[@]}" replace --dry-run=server -f -
  suspended "$c" act-web true '.metadata.ownerReferences = []' | $a deny $B "UPDATE by $R is refused $hint" -- kubectl "${backup[@]}" replace --dry-run=server -f -
  suspended "$c" etcd true '.metadata.annotations["meta.helm.sh/release-name"] = "evil"' | $a deny $B "UPDATE by $R is refused $hint" -- kubectl "${backup[@]}" replace --dry-run=server -f -
  # its role grants create and delete: admission refuses both
  can yes backup delete helmreleases.helm.toolkit.fluxcd.io "$c"
  $a deny $B "DELETE by $R is refused $hint" -- kubectl -n "$c" "${backup[@]}" delete helmrelease act-web --dry-run=server
  fixture ../modules/info.yaml "$c" tenant-child "$p" | $a deny $B "CREATE by $R is refused $hint" -- kubectl "${backup[@]}" create --dry-run=server -f -
  # outside tenant namespaces
  fixture ../modules/etcd.yaml "$NAMESPACE" tenant-child "$p" | kubectl create -f - >/dev/null
  suspended "$NAMESPACE" etcd true | $a deny $B "UPDATE by $R is refused $hint" -- kubectl "${backup[@]}" replace -f -
  ;;
tenant)
  can yes tenant update helmreleases.helm.toolkit.fluxcd.io "$c"
  suspended "$c" etcd true | $a deny $B "HelmRelease $c/etcd (Etcd/etcd of apps.cozystack.io) is rendered by the Helm release $p/tenant-child, which Flux applies from a platform chart, and only Flux writes it: UPDATE by system:serviceaccount:$c:tenant-admin is refused." -- \
    kubectl "${tenant[@]}" replace -f -
  suspended "$c" act-web true | $a deny $B "HelmRelease $c/act-web is the backing object of the instance E2eActApp/web (apps.cozystack.io) and only its backend controller writes it: UPDATE by system:serviceaccount:$c:tenant-admin is refused. Change the instance E2eActApp/web instead" -- \
    kubectl "${tenant[@]}" replace -f -
  [[ "$(kubectl -n "$c" get helmrelease etcd -o jsonpath='{.spec.suspend}')" == false ]]
  ;;
esac
