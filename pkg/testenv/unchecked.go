package testenv

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StoreUnchecked creates obj as if it had been written before the CEL rules
// (x-kubernetes-validations) of its CRD existed: it takes every rule out of
// the CRD, creates obj, and puts the CRD back as it was. That is how such an
// object really comes to be stored (written, then the CRD upgraded), which no
// client can do otherwise. It returns once the rules are enforced again,
// proved by a server-side dry-run of obj under another name being refused.
// obj must break a rule; other tests of the package must not write objects
// of that CRD meanwhile.
func StoreUnchecked(ctx context.Context, c client.Client, crdName string, obj client.Object) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, types.NamespacedName{Name: crdName}, crd); err != nil {
		return err
	}
	original := crd.DeepCopy()
	for i := range crd.Spec.Versions {
		if v := crd.Spec.Versions[i].Schema; v != nil {
			dropRules(v.OpenAPIV3Schema)
		}
	}
	if err := c.Update(ctx, crd); err != nil {
		return fmt.Errorf("taking the rules out of CRD %s: %w", crdName, err)
	}
	// The API server rebuilds a CRD's handler asynchronously: retry the
	// create until the rules are gone.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = c.Create(ctx, obj.DeepCopyObject().(client.Object)); err == nil {
			break
		}
	}
	if err := restore(ctx, c, original); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("creating %s without the rules of CRD %s: %w", obj.GetName(), crdName, err)
	}
	probe := obj.DeepCopyObject().(client.Object)
	probe.SetName(obj.GetName() + "-probe")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if c.Create(ctx, probe.DeepCopyObject().(client.Object), client.DryRunAll) != nil {
			return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		}
	}
	return fmt.Errorf("the rules of CRD %s are not enforced again after 30s", crdName)
}

func restore(ctx context.Context, c client.Client, original *apiextensionsv1.CustomResourceDefinition) error {
	for range 10 {
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(original), live); err != nil {
			return err
		}
		live.Spec = original.Spec
		err := c.Update(ctx, live)
		if err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("could not put the rules of CRD %s back", original.Name)
}

func dropRules(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.XValidations = nil
	for k, p := range s.Properties {
		dropRules(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		dropRules(s.Items.Schema)
	}
	if s.AdditionalProperties != nil {
		dropRules(s.AdditionalProperties.Schema)
	}
}
