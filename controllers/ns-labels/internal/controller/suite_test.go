package controller

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/testenv"
	"github.com/cozyplane/cozyplane/pkg/testenv/onereconcile"
)

// The tests of the reconciler's glue run one Reconcile at a time against a
// real API server, through the cached client of a manager built as the
// controller's own (its controller not started): the reconciler writes its
// part of the TenantGateway's status with server-side apply, merged with the
// other controllers' conditions, which the fake client does with a schema
// deduced from the objects (every list atomic) rather than the CRD's; and its
// namespace patches carry a resourceVersion precondition the API server
// decides.

// fieldManager is the controller's name, as its main package sets it.
const fieldManager = "cozystack-ns-labels"

var (
	k8s    client.Client // uncached, for the tests' own reads and writes
	cached client.Client // the reconciler's reads
	writes *testenv.WriteLog
	rec    *Reconciler
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	own, err := testenv.CRDFromFile("api/crds/gateway.cozystack.io_tenantgateways.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return onereconcile.Run(m, fieldManager, []*apiextensionsv1.CustomResourceDefinition{own},
		[]func(*runtime.Scheme) error{gatewayv1alpha1.AddToScheme},
		func(env onereconcile.Env) {
			if err := setupIndexes(context.Background(), env.Indexer); err != nil {
				panic(err)
			}
			k8s, cached = env.K8s, env.Cached
			writes = testenv.NewWriteLog(cached)
			rec = &Reconciler{Base: gatewayruntime.Base{Client: writes, APIReader: env.APIReader, Name: fieldManager, Recorder: told}}
		})
}

// caughtUp waits until the reconciler's cache shows what the test wrote.
func caughtUp(t *testing.T) {
	t.Helper()
	testenv.CacheCaughtUp(t, cached, k8s, &gatewayv1alpha1.TenantGatewayList{}, &corev1.NamespaceList{})
}

// told keeps the events the reconciler records.
var told = &eventLog{}

// eventLog is an events.EventRecorder that keeps each event as
// "<type> <reason> <regarding's name>: <note>".
type eventLog struct {
	mu   sync.Mutex
	told []string
}

func (l *eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	name := ""
	if ref, ok := regarding.(*corev1.ObjectReference); ok {
		name = ref.Name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.told = append(l.told, fmt.Sprintf("%s %s %s: %s", eventtype, reason, name, fmt.Sprintf(note, args...)))
}

// Take returns the events recorded since the last Take.
func (l *eventLog) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.told
	l.told = nil
	return out
}
