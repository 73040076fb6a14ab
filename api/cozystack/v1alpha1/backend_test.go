package v1alpha1

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
)

func TestResolvedBackend(t *testing.T) {
	chart := &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "redis", Namespace: "cozy-system"}
	release := HelmReleaseTemplate{ChartRef: chart, Prefix: "redis-", Labels: map[string]string{"cozystack.io/ui": "true"}, WaitStrategy: "poller"}
	tf := &TerraformBackend{SourceRef: TerraformSourceReference{Kind: "OCIRepository", Name: "vpc"}, Prefix: "vpc-", Labels: map[string]string{"team": "net"}}

	tests := []struct {
		name       string
		spec       ApplicationDefinitionSpec
		want       ApplicationBackend
		wantErr    string
		wantPrefix string
		wantLabels map[string]string
	}{{
		name:       "legacy release reads as a Helm backend",
		spec:       ApplicationDefinitionSpec{Release: &ApplicationDefinitionRelease{HelmReleaseTemplate: release}},
		want:       ApplicationBackend{Type: BackendHelm, Helm: &HelmBackend{HelmReleaseTemplate: release}},
		wantPrefix: "redis-",
		wantLabels: map[string]string{"cozystack.io/ui": "true"},
	}, {
		name:       "backend wins when both are set",
		spec:       ApplicationDefinitionSpec{Release: &ApplicationDefinitionRelease{HelmReleaseTemplate: release}, Backend: &ApplicationBackend{Type: BackendHelm, Helm: &HelmBackend{HelmReleaseTemplate: release, ValuesFrom: []helmv2.ValuesReference{{Kind: "Secret", Name: "x"}}}}},
		want:       ApplicationBackend{Type: BackendHelm, Helm: &HelmBackend{HelmReleaseTemplate: release, ValuesFrom: []helmv2.ValuesReference{{Kind: "Secret", Name: "x"}}}},
		wantPrefix: "redis-",
		wantLabels: map[string]string{"cozystack.io/ui": "true"},
	}, {
		name:       "terraform backend",
		spec:       ApplicationDefinitionSpec{Backend: &ApplicationBackend{Type: BackendTerraform, Terraform: tf}},
		want:       ApplicationBackend{Type: BackendTerraform, Terraform: tf},
		wantPrefix: "vpc-",
		wantLabels: map[string]string{"team": "net"},
	}, {
		name:       "the placeholder release beside a terraform backend is no release",
		spec:       ApplicationDefinitionSpec{Release: placeholder(), Backend: &ApplicationBackend{Type: BackendTerraform, Terraform: tf}},
		want:       ApplicationBackend{Type: BackendTerraform, Terraform: tf},
		wantPrefix: "vpc-",
		wantLabels: map[string]string{"team": "net"},
	}, {
		name:       "the placeholder release beside a helm backend does not disagree with it",
		spec:       ApplicationDefinitionSpec{Release: placeholder(), Backend: &ApplicationBackend{Type: BackendHelm, Helm: &HelmBackend{HelmReleaseTemplate: release}}},
		want:       ApplicationBackend{Type: BackendHelm, Helm: &HelmBackend{HelmReleaseTemplate: release}},
		wantPrefix: "redis-",
		wantLabels: map[string]string{"cozystack.io/ui": "true"},
	}, {
		name:    "the placeholder release alone is no backend",
		spec:    ApplicationDefinitionSpec{Release: placeholder()},
		wantErr: "neither spec.backend nor the legacy spec.release",
	}, {
		name:    "neither",
		spec:    ApplicationDefinitionSpec{},
		wantErr: "neither spec.backend nor the legacy spec.release",
	}, {
		name:    "type without its member",
		spec:    ApplicationDefinitionSpec{Backend: &ApplicationBackend{Type: BackendTerraform, Helm: &HelmBackend{}}},
		wantErr: "spec.backend.terraform is not set",
	}, {
		name:    "unknown type",
		spec:    ApplicationDefinitionSpec{Backend: &ApplicationBackend{Type: "Argo"}},
		wantErr: `"Argo" is not one of Helm, Terraform`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &ApplicationDefinition{Spec: tt.spec}
			before := d.DeepCopy()
			got, err := d.ResolvedBackend()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if got.Prefix() != tt.wantPrefix || !reflect.DeepEqual(got.Labels(), tt.wantLabels) {
				t.Errorf("prefix %q labels %v", got.Prefix(), got.Labels())
			}
			// The stored object is never rewritten, and the result does not
			// alias it.
			if !reflect.DeepEqual(d, before) {
				t.Errorf("definition modified")
			}
			if got.Helm != nil {
				got.Helm.Prefix = "changed-"
				got.Helm.Labels["x"] = "y"
				if !reflect.DeepEqual(d, before) {
					t.Errorf("result aliases the definition")
				}
			}
		})
	}
	if _, err := (&ApplicationDefinition{}).ResolvedBackend(); !errors.Is(err, ErrNoBackend) {
		t.Errorf("want ErrNoBackend, got %v", err)
	}
}

func TestBackendHelpersOnMismatchedUnion(t *testing.T) {
	b := ApplicationBackend{Type: BackendTerraform, Helm: &HelmBackend{HelmReleaseTemplate: HelmReleaseTemplate{Prefix: "x-"}}}
	if b.Prefix() != "" || b.Labels() != nil {
		t.Errorf("a member that does not match type must be ignored: %q %v", b.Prefix(), b.Labels())
	}
}

// placeholder is the release the CRD's default fills into a definition
// without spec.release.
func placeholder() *ApplicationDefinitionRelease {
	return &ApplicationDefinitionRelease{HelmReleaseTemplate: HelmReleaseTemplate{
		ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: PlaceholderChartName}}}
}

// TestPlaceholderIsTheCRDDefault keeps PlaceholderChartName equal to the
// default the CRD gives spec.release, and to the name its CEL rules skip.
func TestPlaceholderIsTheCRDDefault(t *testing.T) {
	b, err := os.ReadFile("../../crds/cozystack.io_applicationdefinitions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := string(b)
	for _, want := range []string{
		"default:\n                  chartRef:\n                    kind: HelmChart\n                    name: " + PlaceholderChartName + "\n                description:",
		"self.release.chartRef.name\n                != '" + PlaceholderChartName + "'",
		"self.release.chartRef.name\n                == ''" + PlaceholderChartName + "''",
	} {
		if !strings.Contains(crd, want) {
			t.Errorf("the CRD does not hold %q", want)
		}
	}
}
