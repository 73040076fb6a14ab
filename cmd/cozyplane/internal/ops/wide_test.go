package ops

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSourceOf(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     ObjectRef
		ok       bool
	}{
		{"HelmRelease: the HelmChart helm-controller made", `{kind: HelmRelease, metadata: {name: a, namespace: t}, spec: {chart: {spec: {chart: x}}}, status: {helmChart: flux-system/t-a}}`,
			ObjectRef{APIVersion: SourceGroup, Kind: "HelmChart", Namespace: "flux-system", Name: "t-a"}, true},
		{"HelmRelease: chartRef", `{kind: HelmRelease, metadata: {name: a, namespace: t}, spec: {chartRef: {kind: OCIRepository, name: pg, namespace: cozy-system}}}`,
			ObjectRef{APIVersion: SourceGroup, Kind: "OCIRepository", Namespace: "cozy-system", Name: "pg"}, true},
		{"HelmRelease: chartRef in its own namespace", `{kind: HelmRelease, metadata: {name: a, namespace: t}, spec: {chartRef: {kind: HelmChart, name: pg}}}`,
			ObjectRef{APIVersion: SourceGroup, Kind: "HelmChart", Namespace: "t", Name: "pg"}, true},
		{"Terraform: sourceRef", `{kind: Terraform, metadata: {name: a, namespace: cozy-tf-t}, spec: {sourceRef: {kind: GitRepository, name: modules, namespace: cozy-system}}}`,
			ObjectRef{APIVersion: SourceGroup, Kind: "GitRepository", Namespace: "cozy-system", Name: "modules"}, true},
		{"none named", `{kind: Terraform, metadata: {name: a, namespace: t}, spec: {}}`, ObjectRef{}, false},
		{"another kind", `{kind: Kustomization, metadata: {name: a, namespace: t}, spec: {sourceRef: {kind: GitRepository, name: x}}}`, ObjectRef{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SourceOf(obj(t, tc.in))
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("got %+v %t", got, ok)
			}
		})
	}
}

func TestWideInstanceTreeTerraform(t *testing.T) {
	inst := obj(t, tfInstance)
	tf := obj(t, `{kind: Terraform, metadata: {name: vpc-main, namespace: cozy-tf-t}, spec: {sourceRef: {kind: OCIRepository, name: vpc, namespace: cozy-system}}}`)
	src := obj(t, `{kind: OCIRepository, metadata: {name: vpc, namespace: cozy-system}, spec: {url: "oci://registry/modules/vpc"}, status: {artifact: {revision: "v1@sha256:1"}, conditions: [{type: Ready, status: "False", reason: OCIArtifactPullFailed, message: "unauthorized"}]}}`)
	ref, _ := BackingRef(inst)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ev := func(s string) unstructured.Unstructured { return *obj(t, s) }
	w := WideTrace{Now: now, HasSource: true, SourceRef: ObjectRef{Kind: "OCIRepository", Namespace: "cozy-system", Name: "vpc"}, Source: src,
		BackingEvents: []unstructured.Unstructured{
			ev(`{metadata: {name: e1}, type: Normal, reason: A, message: one, lastTimestamp: "2026-11-23T11:50:00Z"}`),
			ev(`{metadata: {name: e2}, type: Normal, reason: B, message: two, lastTimestamp: "2026-11-23T11:51:00Z"}`),
			ev(`{metadata: {name: e3}, type: Normal, reason: C, message: three, lastTimestamp: "2026-11-23T11:52:00Z"}`),
			ev(`{metadata: {name: e4}, type: Normal, reason: D, message: four, lastTimestamp: "2026-11-23T11:53:00Z"}`),
			ev(`{metadata: {name: e5}, type: Normal, reason: E, message: five, lastTimestamp: "2026-11-23T11:54:00Z"}`),
			ev(`{metadata: {name: e6}, type: Warning, reason: F, message: six, lastTimestamp: "2026-11-23T11:55:00Z", count: 4}`),
		}}
	got := plain(t, WideInstanceTree(InstanceTrace{Instance: inst, Ref: ref, HasRef: true, Backing: tf}, w))
	for _, want := range []string{
		"    │   event 9m ago: Normal B: two\n",
		"    │   event 5m ago: Warning F: six (x4)\n",
		"    └── OCIRepository cozy-system/vpc  Ready=False  OCIArtifactPullFailed: unauthorized\n            url: oci://registry/modules/vpc\n            artifact revision: v1@sha256:1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Normal A: one") {
		t.Errorf("more than %d events:\n%s", LastEvents, got)
	}
}
