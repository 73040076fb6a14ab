package ssa

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func fields(t *testing.T, s string) *metav1.FieldsV1 {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return &metav1.FieldsV1{Raw: []byte(s)}
}

func withEntries(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("helm.toolkit.fluxcd.io/v2")
	u.SetKind("HelmRelease")
	u.SetResourceVersion("7")
	for i := range entries {
		entries[i].APIVersion = "helm.toolkit.fluxcd.io/v2"
		entries[i].FieldsType = "FieldsV1"
	}
	u.SetManagedFields(entries)
	return u
}

func byManager(entries []metav1.ManagedFieldsEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		out[e.Manager+" "+string(e.Operation)] = string(e.FieldsV1.Raw)
	}
	return out
}

func TestTakeOwnFields(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{Manager: "cozystack-helm", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{"f:app":{},"f:sharding.fluxcd.io/key":{}}},"f:spec":{"f:interval":{},"f:values":{"f:size":{}}}}`)}
	upstream := metav1.ManagedFieldsEntry{Manager: "cozystack-api", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:interval":{},"f:values":{".":{},"f:_cluster":{},"f:size":{}}}}`)}
	shardOperator := metav1.ManagedFieldsEntry{Manager: "flux-shard-operator", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{"f:sharding.fluxcd.io/key":{}}}}`)}
	onlyOurs := metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:spec":{"f:interval":{}}}`)}
	status := metav1.ManagedFieldsEntry{Manager: "helm-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields(t,
		`{"f:status":{"f:conditions":{}}}`)}
	otherApplier := metav1.ManagedFieldsEntry{Manager: "flux", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(t,
		`{"f:spec":{"f:interval":{}}}`)}
	keepShard := TakeOwnFields(LabelPaths("sharding.fluxcd.io/key")...)

	got, changed, err := HandOver(withEntries(ours, upstream, shardOperator, onlyOurs, status, otherApplier), "cozystack-helm", keepShard)
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	want := map[string]string{
		// our own entry is untouched
		"cozystack-helm Apply": string(ours.FieldsV1.Raw),
		// upstream keeps the containers and the _ key we never set
		"cozystack-api Update": `{"f:metadata":{"f:labels":{}},"f:spec":{".":{},"f:values":{".":{},"f:_cluster":{}}}}`,
		// the shard key stays with the shard operator
		"flux-shard-operator Update": string(shardOperator.FieldsV1.Raw),
		// status and other appliers are not full updates of the object
		"helm-controller Update": string(status.FieldsV1.Raw),
		"flux Apply":             string(otherApplier.FieldsV1.Raw),
		// kubectl-edit owned nothing but fields we own: its entry goes
	}
	assertEntries(t, byManager(got), want)

	if _, changed, _ := HandOver(withEntries(upstream), "cozystack-helm", TakeOwnFields()); changed {
		t.Error("changed without an entry of ours")
	}
	if _, changed, _ := HandOver(withEntries(ours, shardOperator), "cozystack-helm", keepShard); changed {
		t.Error("took a kept label")
	}
	if patch, err := HandOverPatch(withEntries(ours, shardOperator), "cozystack-helm", keepShard); err != nil || patch != nil {
		t.Errorf("nothing to hand over: patch %s, err %v; want none", patch, err)
	}
}

func TestTakeManagers(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{Manager: "gateway-listeners", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(t,
		`{"f:spec":{"f:gatewayClassName":{}}}`)}
	upstream := metav1.ManagedFieldsEntry{Manager: "cozystack-controller", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{".":{},"f:cozystack.io/managed-by":{}}},"f:spec":{"f:listeners":{}}}`)}
	labeller := metav1.ManagedFieldsEntry{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{"f:team":{}}}}`)}
	status := metav1.ManagedFieldsEntry{Manager: "cozystack-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields(t,
		`{"f:status":{"f:conditions":{}}}`)}

	got, changed, err := HandOver(withEntries(ours, upstream, labeller, status), "gateway-listeners", TakeManagers("cozystack-controller"))
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	m := byManager(got)
	// every field of the named manager's full updates is ours now, and its
	// entry is gone; other managers and the status entry keep theirs
	var merged map[string]any
	if err := json.Unmarshal([]byte(m["gateway-listeners Apply"]), &merged); err != nil {
		t.Fatal(err)
	}
	spec, _ := merged["f:spec"].(map[string]any)
	if _, ok := spec["f:listeners"]; !ok {
		t.Errorf("our entry %s lacks the listeners upstream owned", m["gateway-listeners Apply"])
	}
	if _, ok := spec["f:gatewayClassName"]; !ok {
		t.Errorf("our entry %s lost a field of its own", m["gateway-listeners Apply"])
	}
	if len(m) != 3 || m["kubectl-label Update"] != string(labeller.FieldsV1.Raw) {
		t.Errorf("entries %v: want ours, the labeller's and the status entry", m)
	}
	for _, e := range got {
		if e.Manager == "cozystack-controller" && e.Subresource == "" {
			t.Errorf("the named manager's entry stays: %+v", e)
		}
	}

	patch, err := HandOverPatch(withEntries(ours, upstream), "gateway-listeners", TakeManagers("cozystack-controller"))
	if err != nil || patch == nil {
		t.Fatalf("patch %s, err %v", patch, err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0]["path"] != "/metadata/managedFields" || ops[1]["path"] != "/metadata/resourceVersion" || ops[1]["value"] != "7" {
		t.Errorf("patch %s: want the managed fields replaced at version 7", patch)
	}
	if _, changed, _ := HandOver(withEntries(ours, labeller), "gateway-listeners", TakeManagers("cozystack-controller")); changed {
		t.Error("changed without an entry of the named manager")
	}
}

func assertEntries(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for m, w := range want {
		if got[m] != w {
			t.Errorf("%s: %s, want %s", m, got[m], w)
		}
	}
}
