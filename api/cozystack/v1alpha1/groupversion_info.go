// Package v1alpha1 holds the cozystack.io/v1alpha1 API: the cluster-scoped
// ApplicationDefinition, with which a platform team declares a user-facing kind
// and the backend (Helm or Terraform) that materialises its instances.
//
// The wire format is a strict superset of upstream Cozystack's
// ApplicationDefinition: a definition written for Cozystack (spec.release, no
// spec.backend, openAPISchema as a JSON string) is accepted byte for byte.
//
// +kubebuilder:object:generate=true
// +groupName=cozystack.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "cozystack.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this API with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this API to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
