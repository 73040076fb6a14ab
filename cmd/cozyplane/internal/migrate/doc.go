// Package migrate turns the HelmReleases written by upstream Cozystack's
// aggregated API into instances of the kinds cozyplane serves as CRDs, so
// that the helm controller adopts each HelmRelease in place: same uid, same
// generation, no Helm upgrade.
//
// Gather reads the cluster (the APIService of apps.cozystack.io/v1alpha1,
// the ApplicationDefinitions, the labelled HelmReleases and the instances
// of their kinds); Compute decides, as a pure function, what each
// HelmRelease becomes and what blocks the migration; Applier creates the
// instances, each with the adoption proof (annotation apps.cozystack.io/adopt
// = the HelmRelease's uid, see api/apps/v1alpha1), and waits until the helm
// controller has made each HelmRelease a dependent of its instance.
//
// An instance is built the way upstream's API reads a HelmRelease back:
// name = HelmRelease name without the definition's prefix (it must equal the
// label apps.cozystack.io/application.name), spec = spec.values without the
// top-level keys starting with "_", labels and annotations = those of the
// HelmRelease that start with apps.cozystack.io-, with that prefix removed.
package migrate
