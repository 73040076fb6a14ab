package migrate

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/dynamic"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// The resources migrate reads, addressed without discovery: discovery of a
// cluster whose aggregated API is down fails for its group, and every
// resource here is known in advance (instances by their definition's
// plural).
var (
	APIServiceResource  = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	DefinitionResource  = cozyv1alpha1.GroupVersion.WithResource("applicationdefinitions")
	HelmReleaseResource = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
)

// InstanceResource addresses the instances of a kind by its plural.
func InstanceResource(plural string) schema.GroupVersionResource {
	return appsv1alpha1.GroupVersion.WithResource(plural)
}

// releaseSelector selects the HelmReleases upstream's API writes: every one
// carries the application kind label and the group label.
func releaseSelector() string {
	kind, err := labels.NewRequirement(appsv1alpha1.LabelApplicationKind, selection.Exists, nil)
	if err != nil {
		panic(err) // constant key
	}
	group, err := labels.NewRequirement(appsv1alpha1.LabelApplicationGroup, selection.Equals, []string{appsv1alpha1.GroupVersion.Group})
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*kind, *group).String()
}

// Gather reads everything Compute needs. It only reads.
func Gather(ctx context.Context, c dynamic.Interface, namespace string) (Inputs, error) {
	in := Inputs{Namespace: namespace}

	svc, err := c.Resource(APIServiceResource).Get(ctx, InstanceAPIServiceName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, fmt.Errorf("reading APIService %s: %w", InstanceAPIServiceName, err)
	default:
		in.APIService = apiServiceFrom(svc)
	}

	defs, err := listAll(ctx, c.Resource(DefinitionResource), metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, fmt.Errorf("listing ApplicationDefinitions: %w", err)
	default:
		in.DefinitionsServed = true
		for i := range defs {
			var d cozyv1alpha1.ApplicationDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(defs[i].Object, &d); err != nil {
				return in, fmt.Errorf("reading ApplicationDefinition %s: %w", defs[i].GetName(), err)
			}
			in.Definitions = append(in.Definitions, d)
		}
	}

	hrs, err := listAll(ctx, c.Resource(HelmReleaseResource).Namespace(namespace), metav1.ListOptions{LabelSelector: releaseSelector()})
	if apierrors.IsNotFound(err) {
		return in, fmt.Errorf("the API server does not serve %s: is Flux's helm-controller CRD installed?", HelmReleaseResource.GroupResource())
	}
	if err != nil {
		return in, fmt.Errorf("listing HelmReleases: %w", err)
	}
	for i := range hrs {
		in.Releases = append(in.Releases, ReleaseFrom(&hrs[i]))
	}

	// While an APIService proxies the group elsewhere, listing "instances"
	// would read upstream's API (its answers are the HelmReleases again).
	if in.APIService != nil && in.APIService.Service != "" {
		return in, nil
	}
	instances, err := GatherInstances(ctx, c, namespace, in.Definitions, in.Releases)
	if err != nil {
		return in, err
	}
	in.Instances, in.InstancesListed = instances, true
	return in, nil
}

// GatherInstances lists the instances of every kind the releases name that
// a definition serves. A kind whose CRD is not served has none.
func GatherInstances(ctx context.Context, c dynamic.Interface, namespace string, defs []cozyv1alpha1.ApplicationDefinition, releases []Release) ([]Instance, error) {
	plurals := map[string]string{} // plural -> kind
	byKind := definitionsByKind(defs)
	for i := range releases {
		if d := byKind[releases[i].Labels[appsv1alpha1.LabelApplicationKind]]; d != nil && d.Spec.Application.Plural != "" {
			plurals[d.Spec.Application.Plural] = d.Spec.Application.Kind
		}
	}
	names := make([]string, 0, len(plurals))
	for p := range plurals {
		names = append(names, p)
	}
	sort.Strings(names)
	var out []Instance
	for _, plural := range names {
		items, err := listAll(ctx, c.Resource(InstanceResource(plural)).Namespace(namespace), metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", InstanceResource(plural).GroupResource(), err)
		}
		for i := range items {
			x := InstanceFrom(&items[i])
			if x.Kind == "" {
				x.Kind = plurals[plural]
			}
			out = append(out, x)
		}
	}
	return out, nil
}

func apiServiceFrom(u *unstructured.Unstructured) *APIService {
	a := &APIService{Name: u.GetName()}
	if svc, found, _ := unstructured.NestedMap(u.Object, "spec", "service"); found && svc != nil {
		ns, _, _ := unstructured.NestedString(svc, "namespace")
		name, _, _ := unstructured.NestedString(svc, "name")
		a.Service = ns + "/" + name
	}
	return a
}

// listAll lists every page.
func listAll(ctx context.Context, r dynamic.ResourceInterface, opts metav1.ListOptions) ([]unstructured.Unstructured, error) {
	opts.Limit = 500
	var out []unstructured.Unstructured
	for {
		list, err := r.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
		if list.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = list.GetContinue()
	}
}
