// Package releasestorage moves the Helm release records of HelmReleases that
// keep them in the tenant's namespace to the tenant namespace's platform
// namespace, cozy-helm-<namespace>, without helm-controller uninstalling
// anything (cozyplane migrate release-storage).
//
// helm-controller keeps a release's records (Secrets
// sh.helm.release.v1.<release>.v<N>, labelled owner=helm and name=<release>)
// in the HelmRelease's spec.storageNamespace, its own namespace when unset.
// The helm controller gives every new HelmRelease the platform namespace,
// where tenants hold no role, and leaves earlier HelmReleases as they are:
// helm-controller uninstalls the release when spec.storageNamespace differs
// from status.storageNamespace (ReleaseTargetChanged, fluxcd/helm-controller
// internal/action/verify.go), unless status.storageNamespace is empty, which
// it then sets from the spec.
//
// So one HelmRelease moves in steps, each safe to stop after, each checked
// again by the next run:
//
//  1. the platform namespace is created with the helm controller's labels
//     (one of that name without them stops the move);
//  2. every record of the release is copied there (a copy that differs is
//     brought to the original's content: until the move, the tenant
//     namespace's records are the ones helm-controller uses);
//  3. status.storageNamespace is cleared, on the version just read: from now
//     on no storage change is a target change; if helm-controller reconciles
//     before step 4, it sets it back to the tenant namespace and keeps working
//     there, and the next attempt starts over at step 2;
//  4. with status.storageNamespace still empty, the HelmRelease unchanged
//     since it was read (its resourceVersion is the precondition) and every
//     record copied as it is, spec.storageNamespace is set to the platform
//     namespace. helm-controller then finds the records there and sets
//     status.storageNamespace to it: nothing is uninstalled or reinstalled.
//
// A release helm-controller is acting on (its latest record pending-install,
// pending-upgrade, pending-rollback or uninstalling) is not moved; run again
// once it is done. The records in the tenant namespace are left in place
// (helm-controller no longer reads them); the result says how to delete them.
// Plan decides as a pure function; Apply carries a plan out.
package releasestorage
