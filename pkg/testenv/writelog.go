package testenv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// WriteLog is a client that passes every call to the client it wraps and
// logs each write as "<verb> <Kind> <name>" ("status apply TenantGateway
// cozystack" for a subresource): what one Reconcile wrote, for the tests of a
// reconciler's glue. Reads are not logged.
type WriteLog struct {
	client.Client
	mu     sync.Mutex
	writes []string
}

// NewWriteLog wraps c.
func NewWriteLog(c client.Client) *WriteLog { return &WriteLog{Client: c} }

// Take returns the writes logged since the last Take, in order.
func (w *WriteLog) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = nil
	return out
}

func (w *WriteLog) log(verb string, obj any) {
	kind, name := fmt.Sprintf("%T", obj), ""
	switch o := obj.(type) {
	case client.Object:
		name = o.GetName()
		if gvk, err := apiutil.GVKForObject(o, w.Scheme()); err == nil {
			kind = gvk.Kind
		}
	case interface{ GetName() *string }: // a typed apply configuration
		if n := o.GetName(); n != nil {
			name = *n
		}
	}
	// An apply configuration built from an unstructured object.
	if u, ok := obj.(interface {
		GetName() string
		GetKind() string
	}); ok && u.GetKind() != "" {
		kind, name = u.GetKind(), u.GetName()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, strings.Join([]string{verb, kind, name}, " "))
}

// Create implements client.Client.
func (w *WriteLog) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.log("create", obj)
	return w.Client.Create(ctx, obj, opts...)
}

// Update implements client.Client.
func (w *WriteLog) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.log("update", obj)
	return w.Client.Update(ctx, obj, opts...)
}

// Patch implements client.Client.
func (w *WriteLog) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	w.log("patch", obj)
	return w.Client.Patch(ctx, obj, patch, opts...)
}

// Apply implements client.Client.
func (w *WriteLog) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	w.log("apply", obj)
	return w.Client.Apply(ctx, obj, opts...)
}

// Delete implements client.Client.
func (w *WriteLog) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.log("delete", obj)
	return w.Client.Delete(ctx, obj, opts...)
}

// DeleteAllOf implements client.Client.
func (w *WriteLog) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	w.log("deleteallof", obj)
	return w.Client.DeleteAllOf(ctx, obj, opts...)
}

// Status implements client.Client.
func (w *WriteLog) Status() client.SubResourceWriter { return w.SubResource("status") }

// SubResource implements client.Client.
func (w *WriteLog) SubResource(sub string) client.SubResourceClient {
	return subResourceLog{SubResourceClient: w.Client.SubResource(sub), w: w, sub: sub}
}

type subResourceLog struct {
	client.SubResourceClient
	w   *WriteLog
	sub string
}

func (s subResourceLog) Create(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	s.w.log(s.sub+" create", obj)
	return s.SubResourceClient.Create(ctx, obj, subResource, opts...)
}

func (s subResourceLog) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.w.log(s.sub+" update", obj)
	return s.SubResourceClient.Update(ctx, obj, opts...)
}

func (s subResourceLog) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.w.log(s.sub+" patch", obj)
	return s.SubResourceClient.Patch(ctx, obj, patch, opts...)
}

func (s subResourceLog) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.w.log(s.sub+" apply", obj)
	return s.SubResourceClient.Apply(ctx, obj, opts...)
}

// CacheCaughtUp waits (up to a minute) until cache, a manager's cached
// client, shows every object of each list's kind at the resourceVersion api,
// a client of the API server, reads, and no other: a Reconcile run then
// decides on the state the test wrote.
func CacheCaughtUp(t testing.TB, cache, api client.Reader, lists ...client.ObjectList) {
	t.Helper()
	versions := func(r client.Reader, list client.ObjectList) (map[string]string, error) {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := r.List(context.Background(), l); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, item := range items {
			o, err := meta.Accessor(item)
			if err != nil {
				return nil, err
			}
			out[o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
		return out, nil
	}
	Eventually(t, time.Minute, func() (bool, string, error) {
		for _, list := range lists {
			want, err := versions(api, list)
			if err != nil {
				return false, "", err
			}
			have, err := versions(cache, list)
			if err != nil {
				return false, "", err
			}
			if len(have) != len(want) {
				return false, fmt.Sprintf("the cache holds %d %T items, the API server %d", len(have), list, len(want)), nil
			}
			for k, rv := range want {
				if have[k] != rv {
					return false, fmt.Sprintf("the cache holds %T item %s at version %q, the API server at %q", list, k, have[k], rv), nil
				}
			}
		}
		return true, "", nil
	})
}
