// Package v1alpha1 mirrors upstream Cozystack's WorkloadMonitor
// (cozystack.io/v1alpha1), which its cozystack-controller keeps up to date
// and its API reads into an application's WorkloadsReady condition. The
// backends read status.operational of the monitors labelled for an instance
// (pkg/instance WorkloadsReady). Upstream's Go module cannot be imported
// here, so the kind is declared again with the same JSON names, shapes and
// validation; the CRD generated from this package stands in for upstream's
// in tests and accepts the same objects.
//
// +kubebuilder:object:generate=true
// +groupName=cozystack.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion of upstream Cozystack's WorkloadMonitor.
	GroupVersion = schema.GroupVersion{Group: "cozystack.io", Version: "v1alpha1"}

	// SchemeBuilder registers the mirrored types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the mirrored types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
