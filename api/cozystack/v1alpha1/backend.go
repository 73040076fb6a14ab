package v1alpha1

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
)

// PlaceholderChartName is the chart name of the placeholder release the API
// server fills into a definition without spec.release (a default in the
// CRD: chartRef HelmChart cozyplane-no-helm-release, no namespace). It
// stands for "no release": upstream's cozystack-api dereferences
// spec.release.chartRef of every definition when it starts, so every
// definition must carry one, and it is never a chart any backend installs
// (the CRD refuses it as spec.backend.helm.chartRef). Without a namespace,
// upstream's cozystack-controller skips it and leaves the kind's HelmReleases
// alone.
const PlaceholderChartName = "cozyplane-no-helm-release"

// IsPlaceholder reports whether r is absent or the placeholder release.
func (r *ApplicationDefinitionRelease) IsPlaceholder() bool {
	return r == nil || r.ChartRef != nil && r.ChartRef.Name == PlaceholderChartName
}

// LegacyRelease returns spec.release, or nil when it is absent or the
// placeholder.
func (s ApplicationDefinitionSpec) LegacyRelease() *ApplicationDefinitionRelease {
	if s.Release.IsPlaceholder() {
		return nil
	}
	return s.Release
}

// ErrNoBackend is returned by ResolvedBackend for a definition that sets
// neither spec.backend nor the legacy spec.release. The API server refuses
// such definitions (a CEL rule on the spec); the error exists for callers
// that build definitions in memory (the generator, tests).
var ErrNoBackend = errors.New("the definition sets neither spec.backend nor the legacy spec.release")

// ResolvedBackend returns the backend the definition means: spec.backend
// when set, otherwise the legacy spec.release read as a Helm backend
// (backend {type: Helm, helm: <release>}). The stored object is never
// rewritten; this is computed in memory on every read.
//
// A backend whose type does not match its member (type Terraform without
// terraform, say) is an error too: the API server rejects it, so it can only
// come from an object built in memory.
func (d *ApplicationDefinition) ResolvedBackend() (ApplicationBackend, error) {
	if b := d.Spec.Backend; b != nil {
		if err := d.Spec.releaseDisagreement(); err != nil {
			return ApplicationBackend{}, err
		}
		switch b.Type {
		case BackendHelm:
			if b.Helm == nil {
				return ApplicationBackend{}, fmt.Errorf("spec.backend.type is %s but spec.backend.helm is not set", b.Type)
			}
		case BackendTerraform:
			if b.Terraform == nil {
				return ApplicationBackend{}, fmt.Errorf("spec.backend.type is %s but spec.backend.terraform is not set", b.Type)
			}
		default:
			return ApplicationBackend{}, fmt.Errorf("spec.backend.type %q is not one of %s, %s", b.Type, BackendHelm, BackendTerraform)
		}
		return *b.DeepCopy(), nil
	}
	if r := d.Spec.LegacyRelease(); r != nil {
		return ApplicationBackend{
			Type: BackendHelm,
			Helm: &HelmBackend{HelmReleaseTemplate: *r.HelmReleaseTemplate.DeepCopy()},
		}, nil
	}
	return ApplicationBackend{}, ErrNoBackend
}

// Prefix is prepended to an instance's name to name its backing object
// (HelmRelease or Terraform); empty when the member for Type is unset.
func (b ApplicationBackend) Prefix() string {
	switch {
	case b.Type == BackendHelm && b.Helm != nil:
		return b.Helm.Prefix
	case b.Type == BackendTerraform && b.Terraform != nil:
		return b.Terraform.Prefix
	}
	return ""
}

// Labels are the labels the backend adds to every backing object; nil when
// the member for Type is unset. The map is the backend's own: copy it before
// changing it.
func (b ApplicationBackend) Labels() map[string]string {
	switch {
	case b.Type == BackendHelm && b.Helm != nil:
		return b.Helm.Labels
	case b.Type == BackendTerraform && b.Terraform != nil:
		return b.Terraform.Labels
	}
	return nil
}

// releaseDisagreement reports a legacy spec.release that says something
// else than spec.backend, beyond what the API server's CEL rule checks.
func (s ApplicationDefinitionSpec) releaseDisagreement() error {
	if s.LegacyRelease() == nil || s.Backend == nil {
		return nil
	}
	if s.Backend.Type != BackendHelm || s.Backend.Helm == nil {
		return fmt.Errorf("spec.release is set but spec.backend.type is %s: remove spec.release", s.Backend.Type)
	}
	if !equality.Semantic.DeepEqual(s.Release.HelmReleaseTemplate, s.Backend.Helm.HelmReleaseTemplate) {
		return errors.New("spec.release and spec.backend.helm disagree (chartRef, prefix, labels, waitStrategy or healthCheckExprs): remove spec.release, it is the legacy form of backend.helm")
	}
	return nil
}
