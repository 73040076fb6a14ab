package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

// Gatherer is a reader of the selected cluster with discovery.
func (k *Kube) Gatherer() (*ops.Gatherer, error) {
	cfg, err := k.RESTConfig()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	return &ops.Gatherer{Client: client, Discovery: cached, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached)}, nil
}

// namespace is -n, else the context's namespace (default "default"), as
// kubectl picks it for a command on one object.
func (k *Kube) namespace() (string, error) {
	ns, _, err := k.Namespace()
	if err != nil {
		return "", err
	}
	if ns == "" {
		ns = "default"
	}
	return ns, nil
}

// target is one instance (or TenantGateway) named KIND/NAME on the command
// line, resolved and read.
type target struct {
	g   *ops.Gatherer
	res ops.Resource
	ns  string
	obj *unstructured.Unstructured
}

// resolve parses KIND/NAME, maps the kind among kinds, and reads the object.
func resolve(ctx context.Context, root *Root, arg string, kinds func(*ops.Gatherer) ([]ops.Resource, error)) (*target, error) {
	ref, err := ops.ParseRef(arg)
	if err != nil {
		return nil, err
	}
	g, err := root.Gatherer()
	if err != nil {
		return nil, err
	}
	ns, err := root.Kube.namespace()
	if err != nil {
		return nil, err
	}
	served, err := kinds(g)
	if err != nil {
		return nil, err
	}
	res, err := ops.MatchKind(ref.Kind, served)
	if err != nil {
		return nil, err
	}
	obj, err := g.Get(ctx, res.GVR(), ns, ref.Name)
	if err != nil {
		return nil, err
	}
	return &target{g: g, res: res, ns: ns, obj: obj}, nil
}

func (t *target) reread(ctx context.Context) error {
	obj, err := t.g.Get(ctx, t.res.GVR(), t.ns, t.obj.GetName())
	if err != nil {
		return err
	}
	t.obj = obj
	return nil
}

// waitFor polls the object every interval until done says so, an error, or
// the timeout (0: do not wait).
func (t *target) waitFor(ctx context.Context, timeout time.Duration, done func(*unstructured.Unstructured) (bool, error)) (bool, error) {
	if timeout <= 0 {
		return false, nil
	}
	deadline := time.Now().Add(timeout)
	for {
		if err := t.reread(ctx); err != nil {
			return false, err
		}
		ok, err := done(t.obj)
		if ok || err != nil {
			return ok, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

const pollInterval = 500 * time.Millisecond

// useColor: colour on a terminal unless --no-color or NO_COLOR.
func useColor(w io.Writer, noColor bool) bool {
	if noColor || os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func contextOf(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

func say(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format+"\n", args...)
}
