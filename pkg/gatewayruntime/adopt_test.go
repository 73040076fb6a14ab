package gatewayruntime

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUpdateManagers(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
		e := metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub}
		if fields != "" {
			e.FieldsV1 = &metav1.FieldsV1{Raw: []byte(fields)}
		}
		return e
	}
	const (
		spec   = `{"f:metadata":{"f:labels":{"f:cozystack.io/managed-by":{}}},"f:spec":{"f:listeners":{}}}`
		labels = `{"f:metadata":{"f:labels":{"f:team":{}}}}`
		status = `{"f:status":{"f:conditions":{}}}`
	)
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    []string
	}{
		{"upstream's controller wrote the spec with updates", []metav1.ManagedFieldsEntry{
			entry("cozystack-controller", metav1.ManagedFieldsOperationUpdate, "", spec)}, []string{"cozystack-controller"}},
		{"a label added with kubectl stays with its writer", []metav1.ManagedFieldsEntry{
			entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", labels)}, nil},
		{"the implementation's status is not taken", []metav1.ManagedFieldsEntry{
			entry("cilium", metav1.ManagedFieldsOperationUpdate, "status", status)}, nil},
		{"other appliers keep their fields", []metav1.ManagedFieldsEntry{
			entry("someone", metav1.ManagedFieldsOperationApply, "", spec)}, nil},
		{"our own entries are not ours to take", []metav1.ManagedFieldsEntry{
			entry("gateway-listeners", metav1.ManagedFieldsOperationUpdate, "", spec)}, nil},
		{"an entry without fields", []metav1.ManagedFieldsEntry{
			entry("empty", metav1.ManagedFieldsOperationUpdate, "", "")}, nil},
		{"several, sorted and deduplicated", []metav1.ManagedFieldsEntry{
			entry("manager", metav1.ManagedFieldsOperationUpdate, "", spec),
			entry("cozystack-controller", metav1.ManagedFieldsOperationUpdate, "", spec),
			entry("manager", metav1.ManagedFieldsOperationUpdate, "", spec)}, []string{"cozystack-controller", "manager"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UpdateManagers(tt.entries, "gateway-listeners"); !slices.Equal(got, tt.want) {
				t.Errorf("UpdateManagers() = %v, want %v", got, tt.want)
			}
		})
	}
}
