package v1alpha1

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
)

func TestIsPlatformValuesName(t *testing.T) {
	for name, want := range map[string]bool{
		"cozystack-values":          true,
		"cozystack-values-postgres": true,
		"cozystack-values-x":        true,
		"platform-defaults":         false,
		"cozystack-valuesx":         false,
		"my-cozystack-values":       false,
		"":                          false,
	} {
		if got := IsPlatformValuesName(name); got != want {
			t.Errorf("IsPlatformValuesName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSourceProblems(t *testing.T) {
	chart := func(ns string) *helmv2.CrossNamespaceSourceReference {
		return &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "app", Namespace: ns}
	}
	helm := func(ns string, values ...helmv2.ValuesReference) *ApplicationBackend {
		return &ApplicationBackend{Type: BackendHelm, Helm: &HelmBackend{HelmReleaseTemplate: HelmReleaseTemplate{ChartRef: chart(ns)}, ValuesFrom: values}}
	}
	tf := func(ns string) *ApplicationBackend {
		return &ApplicationBackend{Type: BackendTerraform, Terraform: &TerraformBackend{SourceRef: TerraformSourceReference{Kind: "OCIRepository", Name: "vpc", Namespace: ns}}}
	}
	tests := []struct {
		name string
		spec ApplicationDefinitionSpec
		want []string // one substring per problem, in order
	}{{
		name: "upstream's legacy form: chart in cozy-system",
		spec: ApplicationDefinitionSpec{Release: &ApplicationDefinitionRelease{HelmReleaseTemplate: HelmReleaseTemplate{ChartRef: chart("cozy-system")}}},
	}, {
		name: "legacy form without a namespace",
		spec: ApplicationDefinitionSpec{Release: &ApplicationDefinitionRelease{HelmReleaseTemplate: HelmReleaseTemplate{ChartRef: chart("")}}},
		want: []string{"spec.release.chartRef (ExternalArtifact app) names no namespace"},
	}, {
		name: "platform values objects, Secret and ConfigMap",
		spec: ApplicationDefinitionSpec{Backend: helm("cozy-system",
			helmv2.ValuesReference{Kind: "Secret", Name: "cozystack-values"},
			helmv2.ValuesReference{Kind: "ConfigMap", Name: "cozystack-values-postgres"})},
	}, {
		name: "a ConfigMap the tenant can create",
		spec: ApplicationDefinitionSpec{Backend: helm("cozy-system",
			helmv2.ValuesReference{Kind: "Secret", Name: "cozystack-values-ok"},
			helmv2.ValuesReference{Kind: "ConfigMap", Name: "platform-defaults"})},
		want: []string{"spec.backend.helm.valuesFrom[1] (ConfigMap platform-defaults) is not a platform values object"},
	}, {
		name: "chart without a namespace and in a tenant namespace",
		spec: ApplicationDefinitionSpec{Backend: helm("tenant-root")},
		want: []string{"spec.backend.helm.chartRef (ExternalArtifact tenant-root/app) is in a tenant namespace"},
	}, {
		name: "backend and an agreeing release are one problem, not two",
		spec: ApplicationDefinitionSpec{Backend: helm(""), Release: &ApplicationDefinitionRelease{HelmReleaseTemplate: HelmReleaseTemplate{ChartRef: chart("")}}},
		want: []string{"spec.backend.helm.chartRef (ExternalArtifact app) names no namespace"},
	}, {
		name: "everything at once",
		spec: ApplicationDefinitionSpec{Backend: helm("", helmv2.ValuesReference{Kind: "Secret", Name: "overrides"})},
		want: []string{"spec.backend.helm.chartRef", "spec.backend.helm.valuesFrom[0] (Secret overrides)"},
	}, {
		name: "terraform module from the platform namespace (no namespace) or cozy-system",
		spec: ApplicationDefinitionSpec{Backend: tf("")},
	}, {
		name: "terraform module in cozy-system",
		spec: ApplicationDefinitionSpec{Backend: tf("cozy-system")},
	}, {
		name: "terraform module in a tenant namespace",
		spec: ApplicationDefinitionSpec{Backend: tf("tenant-a")},
		want: []string{"spec.backend.terraform.sourceRef (OCIRepository tenant-a/vpc) is in a tenant namespace"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &ApplicationDefinition{Spec: tc.spec}
			got := d.SourceProblems()
			if len(got) != len(tc.want) {
				t.Fatalf("SourceProblems() = %q, want %d problems like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
			err := d.CheckSources()
			if (err != nil) != (len(tc.want) > 0) {
				t.Fatalf("CheckSources() = %v, want an error: %v", err, len(tc.want) > 0)
			}
			if err != nil && !strings.Contains(err.Error(), SourceFix) {
				t.Errorf("CheckSources() = %q, want it to say what to do (%q)", err, SourceFix)
			}
		})
	}
}
