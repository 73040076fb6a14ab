package tfbackend

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/lineage"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

// The tenant's copy of a Terraform instance's outputs.
//
// tofu-controller writes a module's outputs to the Secret
// spec.writeOutputsToSecret names, in the Terraform object's namespace: the
// platform namespace cozy-tf-<namespace>, which the tenant cannot read. The
// tenant's copy is a Secret of the same name in the instance's namespace,
// holding the same data (only the outputs the definition lists, when it
// lists any), controlled by the instance (so it goes with it), carrying the
// application labels and the tenant-resource verdict upstream's lineage
// webhook would give it by the definition's spec.secrets (pkg/lineage).
//
// A Secret of that name the instance does not control (the tenant's own, or
// another instance's) is never written: OutputsWrite refuses it with a
// message naming it.

// OutputsSecretName is the name of the outputs Secret of inst, in the
// platform namespace and in the instance's namespace alike, or "" when the
// definition writes no outputs Secret. Pure.
func OutputsSecretName(def *instance.Definition, inst *unstructured.Unstructured) (string, error) {
	tb := def.Backend.Terraform
	if tb == nil || tb.WriteOutputsToSecret == nil {
		return "", nil
	}
	name, err := expand(tb.WriteOutputsToSecret.Name, inst)
	if err != nil {
		return "", fmt.Errorf("definition %s: writeOutputsToSecret.name %q: %w", def.Name(), tb.WriteOutputsToSecret.Name, err)
	}
	return name, nil
}

// TenantOutputsSecret returns the Secret to keep in the instance's namespace
// for tofu-controller's outputs Secret src, or nil when there is none to
// keep: the definition writes no outputs Secret, or tofu-controller has not
// written src yet (nil). Labels and annotations the definition gives the
// outputs Secret are kept, except that the application labels and the
// tenant-resource verdict are always the lineage ones. Pure.
func TenantOutputsSecret(def *instance.Definition, inst *unstructured.Unstructured, src *corev1.Secret) (*corev1.Secret, error) {
	name, err := OutputsSecretName(def, inst)
	if err != nil || name == "" || src == nil {
		return nil, err
	}
	w := def.Backend.Terraform.WriteOutputsToSecret
	gvk := inst.GroupVersionKind()
	lbls := map[string]string{}
	for k, v := range w.Labels {
		lbls[k] = v
	}
	verdict := lineage.Labels(&def.Object.Spec,
		lineage.Instance{Group: gvk.Group, Kind: gvk.Kind, Name: inst.GetName(), Namespace: inst.GetNamespace()},
		lineage.Object{GroupKind: schema.GroupKind{Kind: "Secret"}, Name: name, Labels: w.Labels})
	for k, v := range verdict {
		lbls[k] = v
	}
	var annotations map[string]string
	if len(w.Annotations) > 0 {
		annotations = map[string]string{}
		for k, v := range w.Annotations {
			annotations[k] = v
		}
	}
	data := map[string][]byte{}
	for k, v := range src.Data {
		if len(w.Outputs) == 0 || slices.Contains(w.Outputs, k) {
			data[k] = append([]byte(nil), v...)
		}
	}
	controller := true
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: inst.GetNamespace(), Labels: lbls, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
				Name: inst.GetName(), UID: inst.GetUID(), Controller: &controller,
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}, nil
}

// OutputsAction is what to do with the tenant's copy of the outputs.
type OutputsAction int

const (
	// OutputsKeep: nothing to write.
	OutputsKeep OutputsAction = iota
	// OutputsApply: create or update the copy.
	OutputsApply
	// OutputsDelete: the copy is ours and nothing should be there any more.
	OutputsDelete
	// OutputsRefuse: a Secret of that name is not the instance's; leave it.
	OutputsRefuse
)

// OutputsWrite decides what to do with the tenant's copy: desired is
// TenantOutputsSecret's answer, existing the Secret of that name in the
// instance's namespace (nil: none). A Secret the instance does not control
// is never touched; the message says why and what to do. Pure.
func OutputsWrite(inst *unstructured.Unstructured, desired, existing *corev1.Secret) (OutputsAction, string) {
	if existing != nil && !controlledBy(existing, inst) {
		if desired == nil {
			return OutputsKeep, "" // nothing to copy: not ours, left alone
		}
		return OutputsRefuse, fmt.Sprintf("Secret %s/%s exists and is not controlled by %s %s; its outputs are not copied there: rename or delete that Secret, or ask the platform team to change writeOutputsToSecret.name",
			existing.Namespace, existing.Name, inst.GetKind(), inst.GetName())
	}
	switch {
	case desired == nil && existing == nil:
		return OutputsKeep, ""
	case desired == nil:
		return OutputsDelete, ""
	case existing == nil || !sameOutputs(desired, existing):
		return OutputsApply, ""
	}
	return OutputsKeep, ""
}

// controlledBy reports whether s's controller reference names inst: its
// API group, kind, name and uid (ownership.Owner.Is).
func controlledBy(s *corev1.Secret, inst *unstructured.Unstructured) bool {
	return ownership.IsControlledBy(s, ownership.Owner{GVK: inst.GroupVersionKind(), Name: inst.GetName(), UID: string(inst.GetUID())})
}

// sameOutputs: the existing copy carries the desired data, type and every
// desired label and annotation.
func sameOutputs(desired, existing *corev1.Secret) bool {
	if existing.Type != desired.Type || len(existing.Data) != len(desired.Data) {
		return false
	}
	for k, v := range desired.Data {
		if ev, ok := existing.Data[k]; !ok || string(ev) != string(v) {
			return false
		}
	}
	for k, v := range desired.Labels {
		if existing.Labels[k] != v {
			return false
		}
	}
	for k, v := range desired.Annotations {
		if existing.Annotations[k] != v {
			return false
		}
	}
	return true
}
