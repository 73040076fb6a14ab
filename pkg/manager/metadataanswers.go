package manager

// Metadata-only answers to writes.
//
// The API server answers a create or an update with the object as stored,
// which the client decodes into the object it sent. For a custom resource
// (no protobuf) that answer is JSON: the API server encodes the whole object
// and the client parses it back into maps, although a backend controller
// reads nothing of it beyond the metadata the server assigned (the spec is
// what it sent; a new backing object has no status yet; a status write's
// answer is thrown away). On a 2-core machine whose API server shares the CPU
// with its controllers, that parsing was a tenth of the helm controller's
// CPU. The API server can answer with the object's metadata alone instead,
// in protobuf (the Accept header's as=PartialObjectMetadata, which the
// metadata informers use for lists and watches), and every server since
// Kubernetes 1.15 does so for writes too.

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// metadataAccept asks for the object's metadata alone, in protobuf where the
// server can, else in JSON.
const metadataAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// MetadataAnswers wraps c so that a create, a status update or a status
// patch of an unstructured object asks the API server to answer with the
// object's metadata alone. The object then keeps what was sent, with the
// server's uid, resourceVersion, generation and creationTimestamp; fields
// the server filled in or kept (defaults, a new object's status, the stored
// spec on a status write, managedFields) are not read back. Errors are the API
// server's, as from c. Typed objects and every other call go to c.
func MetadataAnswers(c client.Client, cfg *rest.Config, httpClient *http.Client) (client.Client, error) {
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, err
		}
	}
	mc := metadata.ConfigFor(cfg)
	mc.ContentType = runtime.ContentTypeJSON // the body sent is the unstructured object's JSON
	mc.GroupVersion = &schema.GroupVersion{}
	mc.APIPath = "/" // every request names its whole path
	rc, err := rest.RESTClientForConfigAndClient(mc, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the metadata-answers client: %w", err)
	}
	return &metadataAnswers{Client: c, rest: rc}, nil
}

type metadataAnswers struct {
	client.Client
	rest rest.Interface
}

func (c *metadataAnswers) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return c.Client.Create(ctx, obj, opts...)
	}
	path, err := c.path(u, false)
	if err != nil {
		return err
	}
	o := (&client.CreateOptions{}).ApplyOptions(opts).AsCreateOptions()
	req := c.rest.Post().AbsPath(path...).SpecificallyVersionedParams(o, metav1.ParameterCodec, metav1.SchemeGroupVersion)
	return c.send(ctx, req, u)
}

func (c *metadataAnswers) Status() client.SubResourceWriter {
	return statusAnswers{SubResourceWriter: c.Client.Status(), c: c}
}

type statusAnswers struct {
	client.SubResourceWriter
	c *metadataAnswers
}

func (w statusAnswers) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return w.SubResourceWriter.Update(ctx, obj, opts...)
	}
	path, err := w.c.path(u, true)
	if err != nil {
		return err
	}
	o := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts).AsUpdateOptions()
	req := w.c.rest.Put().AbsPath(path...).SpecificallyVersionedParams(o, metav1.ParameterCodec, metav1.SchemeGroupVersion)
	return w.c.send(ctx, req, u)
}

// Patch sends a patch of an unstructured object's status; u then carries
// the server's metadata of the object as patched, and nothing else of it.
func (w statusAnswers) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	path, err := w.c.path(u, true)
	if err != nil {
		return err
	}
	body, err := patch.Data(obj)
	if err != nil {
		return err
	}
	o := (&client.SubResourcePatchOptions{}).ApplyOptions(opts).AsPatchOptions()
	req := w.c.rest.Patch(patch.Type()).AbsPath(path...).SpecificallyVersionedParams(o, metav1.ParameterCodec, metav1.SchemeGroupVersion)
	return w.c.sendBody(ctx, req, body, u)
}

// send sends u as the request's body and copies the server-assigned
// metadata of the answer into u.
func (c *metadataAnswers) send(ctx context.Context, req *rest.Request, u *unstructured.Unstructured) error {
	body, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return c.sendBody(ctx, req, body, u)
}

// sendBody sends body and copies the server-assigned metadata of the
// answer into u.
func (c *metadataAnswers) sendBody(ctx context.Context, req *rest.Request, body []byte, u *unstructured.Unstructured) error {
	var answer metav1.PartialObjectMetadata
	if err := req.SetHeader("Accept", metadataAccept).Body(body).Do(ctx).Into(&answer); err != nil {
		return err
	}
	u.SetUID(answer.UID)
	u.SetResourceVersion(answer.ResourceVersion)
	u.SetGeneration(answer.Generation)
	u.SetCreationTimestamp(answer.CreationTimestamp)
	return nil
}

// path is the URL path of u's collection (for a create) or of u's status.
func (c *metadataAnswers) path(u *unstructured.Unstructured, status bool) ([]string, error) {
	gvk := u.GroupVersionKind()
	m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	p := []string{"apis", gvk.Group, gvk.Version}
	if gvk.Group == "" {
		p = []string{"api", gvk.Version}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			return nil, fmt.Errorf("%s %s has no namespace", gvk.Kind, u.GetName())
		}
		p = append(p, "namespaces", u.GetNamespace())
	}
	p = append(p, m.Resource.Resource)
	if status {
		if u.GetName() == "" {
			return nil, fmt.Errorf("a %s status update needs the object's name", gvk.Kind)
		}
		p = append(p, u.GetName(), "status")
	}
	return p, nil
}
