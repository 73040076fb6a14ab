#!/usr/bin/env bash
# Flux's helm-controller applying platform charts: upstream's tenant chart
# creates, changes and deletes its modules' HelmReleases (etcd, info, ...) in
# the child tenant's namespace, cozystack-basics writes tenant-root and
# bootbox's chart bootbox. Each as helm-controller's own identity (both of
# upstream's names: flux, the all-in-one Flux and its shards, and
# helm-controller), admitted; the tenant (a ServiceAccount bound to admin in
# its namespace) doing the same is refused and told what to change instead;
# and what helm-controller is still refused: HelmReleases Helm does not
# manage, outside tenant namespaces, and the helm backend's instance-owned
# HelmReleases beyond their status and finalizers. modules.sh CASE.
cd "$(dirname "$0")"
source ../actors.sh
ns mod
rel=tenant-child
module() { fixture "$1.yaml" "$c" "$rel" "$p"; }
rendered="is rendered by the Helm release $p/$rel, which Flux applies from a platform chart, and only Flux writes it"
T="system:serviceaccount:$c:tenant-admin"

case "$1" in
setup) setup mod >/dev/null ;;
teardown) teardown mod ;;
create)
  can yes tenant create helmreleases.helm.toolkit.fluxcd.io "$c"
  module etcd | $a deny $B "HelmRelease $c/etcd (Etcd/etcd of apps.cozystack.io) $rendered: CREATE by $T is refused. Change the instance behind $p/$rel instead (a tenant module follows the fields of its Tenant)" -- \
    kubectl "${tenant[@]}" create -f -
  can yes helmctl create helmreleases.helm.toolkit.fluxcd.io "$c"
  module etcd | $a allow -- kubectl "${helmctl[@]}" create -f -
  module info | $a allow -- kubectl "${flux[@]}" create -f -
  # cozystack-basics' tenant-root and bootbox's bootbox, in the parent namespace
  fixture tenant-root.yaml "$p" "" "" | $a allow -- kubectl "${flux[@]}" create -f -
  fixture bootbox.yaml "$p" "" "" | $a allow -- kubectl "${helmctl[@]}" create -f -
  ;;
change)
  can yes tenant patch helmreleases.helm.toolkit.fluxcd.io "$c"
  can yes root patch helmreleases.helm.toolkit.fluxcd.io "$p"
  # what a Helm upgrade of the tenant chart changes: the spec, Helm's labels
  for who in tenant helmctl; do
    w="$who[@]"
    if [[ $who == tenant ]]; then
      $a deny $B "HelmRelease $c/etcd (Etcd/etcd of apps.cozystack.io) $rendered: UPDATE by $T is refused" -- \
        kubectl -n "$c" "${!w}" patch helmrelease etcd --type=merge -p '{"spec":{"timeout":"45m","dependsOn":null}}'
      $a deny $B "UPDATE by $T is refused" -- kubectl -n "$c" "${!w}" label helmrelease info helm.sh/chart=info-0.2.0
      $a deny $B "UPDATE by $T is refused" -- kubectl -n "$c" "${!w}" annotate helmrelease etcd meta.helm.sh/release-name-
      $a deny $B "HelmRelease $p/tenant-root (Tenant/tenant-root of apps.cozystack.io) is rendered by the Helm release cozy-system/cozystack-basics, which Flux applies from a platform chart, and only Flux writes it: UPDATE by system:serviceaccount:$p:tenant-admin is refused" -- \
        kubectl -n "$p" "${root[@]}" patch helmrelease tenant-root --type=merge -p '{"spec":{"suspend":true}}'
    else
      $a allow -- kubectl -n "$c" "${!w}" patch helmrelease etcd --type=merge -p '{"spec":{"timeout":"45m","dependsOn":null}}'
      $a allow -- kubectl -n "$c" "${flux[@]}" label helmrelease info helm.sh/chart=info-0.2.0
      $a allow -- kubectl -n "$p" "${!w}" patch helmrelease tenant-root --type=merge -p '{"spec":{"interval":"2m0s"}}'
    fi
  done
  [[ "$(kubectl -n "$c" get helmrelease etcd -o jsonpath='{.spec.timeout}/{.spec.dependsOn}')" == "45m/" ]]
  # reconciling them, as today: finalizers and status
  $a allow -- kubectl -n "$c" "${helmctl[@]}" patch helmrelease etcd --type=merge -p '{"metadata":{"finalizers":["finalizers.fluxcd.io"]}}'
  $a allow -- kubectl -n "$c" "${helmctl[@]}" patch helmrelease etcd --subresource=status --type=merge -p '{"status":{"lastAttemptedRevision":"0.1.0"}}'
  $a deny $B "UPDATE of status by $T is refused" -- \
    kubectl -n "$c" "${tenant[@]}" patch helmrelease etcd --subresource=status --type=merge -p '{"status":{"lastAttemptedRevision":"9.9.9"}}'
  ;;
delete)
  can yes tenant delete helmreleases.helm.toolkit.fluxcd.io "$c"
  $a deny $B "HelmRelease $c/info (Info/info of apps.cozystack.io) $rendered: DELETE by $T is refused" -- kubectl -n "$c" "${tenant[@]}" delete helmrelease info
  $a deny $B "DELETE by $T is refused" -- kubectl "${tenant[@]}" delete --raw "/apis/helm.toolkit.fluxcd.io/v2/namespaces/$c/helmreleases"
  kubectl -n "$c" get helmrelease info etcd >/dev/null
  # Helm uninstalling the tenant chart (or dropping a module), and the root releases
  $a allow -- kubectl -n "$c" "${flux[@]}" delete helmrelease info
  kubectl -n "$c" patch helmrelease etcd --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
  $a allow -- kubectl -n "$c" "${helmctl[@]}" delete helmrelease etcd
  $a allow -- kubectl -n "$p" "${helmctl[@]}" delete helmrelease tenant-root bootbox
  ;;
refused)
  # What helm-controller's own identity is still refused. A HelmRelease with
  # application labels that Helm does not manage (no meta.helm.sh/release-name):
  hint="(Flux writes only its status and finalizers, and, applying a platform chart, the Helm-managed HelmReleases of tenant-* namespaces that no instance owns)"
  module etcd | sed '/meta.helm.sh/d;/annotations:/d' | $a deny $B "is the backing object of the instance Etcd/etcd (apps.cozystack.io) and only its backend controller writes it: CREATE by system:serviceaccount:$FLUX_NS:helm-controller is refused $hint" -- \
    kubectl "${helmctl[@]}" create --dry-run=server -f -
  # outside tenant namespaces (upstream writes application HelmReleases only there)
  can yes helmctl create helmreleases.helm.toolkit.fluxcd.io "$NAMESPACE"
  fixture etcd.yaml "$NAMESPACE" "$rel" "$p" | $a deny $B "HelmRelease $NAMESPACE/etcd (Etcd/etcd of apps.cozystack.io) is rendered by the Helm release $p/$rel, which Flux applies from a platform chart, and only Flux writes it: CREATE by system:serviceaccount:$FLUX_NS:${FLUX_ALL_IN_ONE:-flux} is refused $hint" -- \
    kubectl "${flux[@]}" create --dry-run=server -f -
  # the helm backend's HelmRelease of an instance: not through a chart, not even with Helm's marks
  uid=$(kubectl -n "$c" get e2eactapp web -o jsonpath='{.metadata.uid}')
  module etcd | sed "s|^  annotations:|  ownerReferences: [{apiVersion: apps.cozystack.io/v1alpha1, kind: E2eActApp, name: web, uid: $uid}]\n  annotations:|" \
    | $a deny $B "only its backend controller writes it: CREATE by system:serviceaccount:$FLUX_NS:helm-controller is refused $hint" -- \
    kubectl "${helmctl[@]}" create --dry-run=server -f -
  for who in flux helmctl; do
    w="$who[@]"
    $a deny $B "HelmRelease $c/act-web is the backing object of the instance E2eActApp/web (apps.cozystack.io) and only its backend controller writes it: UPDATE by" -- \
      kubectl -n "$c" "${!w}" patch helmrelease act-web --type=merge -p '{"spec":{"targetNamespace":"kube-system"}}' --dry-run=server
    # Helm's marks do not make it a chart's (annotations alone Flux may keep writing, as before)
    $a deny $B "UPDATE by" -- kubectl -n "$c" "${!w}" patch helmrelease act-web --type=merge --dry-run=server \
      -p "{\"metadata\":{\"annotations\":{\"meta.helm.sh/release-name\":\"$rel\",\"meta.helm.sh/release-namespace\":\"$p\"}},\"spec\":{\"interval\":\"1m\"}}"
    $a deny $B "DELETE by" -- kubectl -n "$c" "${!w}" delete helmrelease act-web --dry-run=server
    $a allow -- kubectl -n "$c" "${!w}" patch helmrelease act-web --type=merge -p '{"metadata":{"finalizers":["finalizers.fluxcd.io"]}}' --dry-run=server
    $a allow -- kubectl -n "$c" "${!w}" patch helmrelease act-web --subresource=status --type=merge -p '{"status":{"lastAttemptedRevision":"0.1.0"}}' --dry-run=server
  done
  ;;
esac
