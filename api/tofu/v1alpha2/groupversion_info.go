// Package v1alpha2 mirrors the part of tofu-controller's Terraform API
// (infra.contrib.fluxcd.io/v1alpha2) that the Terraform backend writes and
// reads. tofu-controller's Go module cannot be imported here, so the fields we
// use are declared again with the same JSON names, shapes, enums, defaults and
// required fields: an object our controller writes must be accepted by the
// real CRD that production clusters run, and the CRD generated from this
// package (installed by the tests) accepts the same objects for these fields.
//
// Fields of the real API that we neither set nor read are left out.
//
// +kubebuilder:object:generate=true
// +groupName=infra.contrib.fluxcd.io
package v1alpha2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion of tofu-controller's Terraform API.
	GroupVersion = schema.GroupVersion{Group: "infra.contrib.fluxcd.io", Version: "v1alpha2"}

	// SchemeBuilder registers the mirrored types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the mirrored types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
