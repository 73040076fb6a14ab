// Package v1alpha1 is the contract shared by every user-facing kind served in
// apps.cozystack.io/v1alpha1: the status envelope all instances carry, the
// labels on backing objects, and the condition types, reasons and annotations
// the backend controllers use.
//
// The kinds themselves are not Go types here: the appdef controller serves one
// CRD per ApplicationDefinition at runtime, and the generator (gen/) emits
// typed Go per kind from the same schema code.
//
// +kubebuilder:object:generate=true
// +groupName=apps.cozystack.io
package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupVersion of every user-facing kind.
var GroupVersion = schema.GroupVersion{Group: "apps.cozystack.io", Version: "v1alpha1"}

// Category lists every user-facing kind: `kubectl get cozystack`.
const Category = "cozystack"
