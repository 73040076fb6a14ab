#!/usr/bin/env bash
# Upstream's tenant chart's pre-delete cleanup Job: it runs in cozy-system as
# the ServiceAccount <tenant namespace>-cleanup and deletes, in that tenant's
# namespace, the HelmReleases with an application kind, applications first
# (the helm backend's instance HelmReleases among them), then the tenant
# modules. Run as that identity, exactly as the Job runs it, it is admitted;
# the tenant doing the same is refused, also through a ServiceAccount of the
# same name in its own namespace (which it may create and impersonate); and
# the cleanup identity is refused in another namespace, even where RBAC
# would let it. cleanup.sh CASE.
cd "$(dirname "$0")"
source ../actors.sh
ns cln
# shellcheck disable=SC2207
cleaner=($(sa cozy-system "$c-cleanup"))
# shellcheck disable=SC2207
borrowed=($(sa "$c" "$c-cleanup"))
modules() { for m in etcd info; do fixture ../modules/$m.yaml "$c" tenant-child "$p" | kubectl "${flux[@]}" create -f - >/dev/null; done; }
# wave WHO applications|modules: sets cmd to one of the two waves of upstream's
# Job, word for word, run as WHO (an array name).
wave() {
  local -n who=$1
  local sel='apps.cozystack.io/application.kind,internal.cozystack.io/tenantmodule!=true'
  [[ $2 == modules ]] && sel='apps.cozystack.io/application.kind,internal.cozystack.io/tenantmodule=true'
  cmd=(kubectl "${who[@]}" delete helmreleases.helm.toolkit.fluxcd.io -n "$c" -l "$sel" --ignore-not-found=true --wait=true --timeout=90s)
}

case "$1" in
setup)
  setup cln >/dev/null
  modules
  fixture rbac.yaml "$c" "" "" | kubectl apply -f - >/dev/null
  ;;
teardown) teardown cln ;;
tenant)
  can yes tenant delete helmreleases.helm.toolkit.fluxcd.io "$c"
  can yes tenant list helmreleases.helm.toolkit.fluxcd.io "$c"
  wave tenant applications
  $a deny $B "HelmRelease $c/act-web is the backing object of the instance E2eActApp/web (apps.cozystack.io) and only its backend controller writes it: DELETE by system:serviceaccount:$c:tenant-admin is refused" -- "${cmd[@]}"
  wave tenant modules
  $a deny $B "HelmRelease $c/etcd (Etcd/etcd of apps.cozystack.io) is rendered by the Helm release $p/tenant-child, which Flux applies from a platform chart, and only Flux writes it: DELETE by system:serviceaccount:$c:tenant-admin is refused" -- "${cmd[@]}"
  kubectl -n "$c" get helmrelease act-web etcd info >/dev/null
  ;;
borrow)
  # The tenant may create a ServiceAccount named like the cleanup Job's, bind it
  # to admin and act as it (edit and admin impersonate the namespace's
  # ServiceAccounts); it may not act as one of cozy-system.
  can yes tenant create serviceaccounts "$c"
  can yes tenant impersonate serviceaccounts "$c"
  can no tenant impersonate serviceaccounts cozy-system
  kubectl -n "$c" "${tenant[@]}" create serviceaccount "$c-cleanup"
  kubectl -n "$c" "${tenant[@]}" create rolebinding borrowed --clusterrole=admin --serviceaccount="$c:$c-cleanup"
  can yes borrowed delete helmreleases.helm.toolkit.fluxcd.io "$c"
  wave borrowed applications
  $a deny $B "DELETE by system:serviceaccount:$c:$c-cleanup is refused" -- "${cmd[@]}"
  wave borrowed modules
  $a deny $B "DELETE by system:serviceaccount:$c:$c-cleanup is refused" -- "${cmd[@]}"
  kubectl -n "$c" get helmrelease act-web etcd info >/dev/null
  ;;
elsewhere)
  # RBAC broader than the chart's (the same Role in the parent's namespace):
  # the policy still keeps the cleanup identity to the namespace it is named after.
  fixture ../modules/tenant-root.yaml "$p" "" "" | kubectl "${flux[@]}" create -f - >/dev/null
  fixture rbac.yaml "$p" "" "" | sed "s|name: \"$p-cleanup\"$|name: \"$c-cleanup\"|" | kubectl apply -f - >/dev/null
  can yes cleaner delete helmreleases.helm.toolkit.fluxcd.io "$p"
  hint="(a tenant cleanup Job deletes only the HelmReleases with an application kind of the namespace its ServiceAccount is named after, <namespace>-cleanup)"
  $a deny $B "HelmRelease $p/tenant-root (Tenant/tenant-root of apps.cozystack.io) is rendered by the Helm release cozy-system/cozystack-basics, which Flux applies from a platform chart, and only Flux writes it: DELETE by system:serviceaccount:cozy-system:$c-cleanup is refused $hint" -- \
    kubectl -n "$p" "${cleaner[@]}" delete helmrelease tenant-root
  # it never writes them: its role grants no update (what admission would refuse too)
  can no cleaner patch helmreleases.helm.toolkit.fluxcd.io "$c"
  can no cleaner create helmreleases.helm.toolkit.fluxcd.io "$c"
  kubectl -n "$p" get helmrelease tenant-root >/dev/null
  ;;
job)
  can yes cleaner delete helmreleases.helm.toolkit.fluxcd.io "$c"
  old=$(kubectl -n "$c" get helmrelease act-web -o jsonpath='{.metadata.uid}')
  wave cleaner applications
  $a allow -- "${cmd[@]}"
  # the instance's HelmRelease went (its backend writes a new one while the instance lives)
  gone() { [[ "$(kubectl -n "$c" get helmrelease act-web -o jsonpath='{.metadata.uid}' 2>/dev/null)" != "$old" ]]; }
  wait_for "the cleanup Job's first wave deleted act-web" gone
  kubectl -n "$c" get helmrelease etcd info >/dev/null
  wave cleaner modules
  $a allow -- "${cmd[@]}"
  [[ -z "$(kubectl -n "$c" get helmreleases -l internal.cozystack.io/tenantmodule=true -o name)" ]]
  ;;
esac
