package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The fake cluster: two instance kinds, a HelmRelease.
var (
	postgresGVR = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "postgreses"}
	redisGVR    = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "redises"}
	hrGVR       = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
	eventsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "events"}
)

const clusterYAML = `
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: orders, namespace: tenant-a, labels: {team: shop}, creationTimestamp: "2026-11-23T10:00:00Z"}
spec: {size: 1Gi}
status:
  lastHandledReconcileAt: "2026-11-23T11:00:00Z"
  backend: {type: Helm, kind: HelmRelease, apiVersion: helm.toolkit.fluxcd.io/v2, name: postgres-orders}
  conditions:
  - {type: Ready, status: "True", reason: InstallSucceeded, message: "Helm install succeeded for release tenant-a/postgres-orders.v1"}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: billing, namespace: tenant-a, labels: {team: money}, creationTimestamp: "2026-11-23T11:00:00Z"}
spec: {size: 2Gi}
status:
  backend: {type: Helm, kind: HelmRelease, apiVersion: helm.toolkit.fluxcd.io/v2, name: postgres-billing}
  conditions:
  - {type: Ready, status: "False", reason: UpgradeFailed, message: "Helm upgrade failed: timed out waiting for the condition"}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Redis
metadata: {name: cache, namespace: tenant-b, labels: {team: shop}, creationTimestamp: "2026-11-23T11:30:00Z"}
spec: {}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: postgres-orders, namespace: tenant-a}
spec: {suspend: false, chartRef: {kind: HelmChart, name: postgres, namespace: cozy-system}}
status:
  lastAttemptedRevision: 1.0.0
  conditions:
  - {type: Ready, status: "True", reason: InstallSucceeded, message: "Helm install succeeded for release tenant-a/postgres-orders.v1"}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: postgres, namespace: cozy-system}
spec: {chart: ./charts/postgres, version: "*"}
status:
  artifact: {revision: 1.0.0@sha256:abc}
  conditions:
  - {type: Ready, status: "True", reason: ChartPullSucceeded, message: "pulled 'postgres' chart with version '1.0.0'"}
---
apiVersion: v1
kind: Pod
metadata:
  name: orders-0
  namespace: tenant-a
  labels: {apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.kind: Postgres, apps.cozystack.io/application.name: orders}
status:
  phase: Running
  conditions:
  - {type: Ready, status: "True"}
  containerStatuses:
  - {name: postgres, ready: true, restartCount: 2, state: {running: {}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: billing-0
  namespace: tenant-a
  labels: {apps.cozystack.io/application.group: apps.cozystack.io, apps.cozystack.io/application.kind: Postgres, apps.cozystack.io/application.name: billing}
status: {phase: Pending}
---
apiVersion: v1
kind: Event
metadata: {name: postgres-orders.1, namespace: tenant-a}
involvedObject: {apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, name: postgres-orders, namespace: tenant-a}
type: Normal
reason: InstallSucceeded
message: "Helm install succeeded for release tenant-a/postgres-orders.v1 with chart postgres@1.0.0"
lastTimestamp: "2026-11-23T10:01:00Z"
count: 1
---
apiVersion: v1
kind: Event
metadata: {name: orders.1, namespace: tenant-a}
involvedObject: {apiVersion: apps.cozystack.io/v1alpha1, kind: Postgres, name: orders, namespace: tenant-a}
type: Warning
reason: BackendNotReady
message: "HelmRelease postgres-orders is not ready yet"
lastTimestamp: "2026-11-23T10:00:30Z"
count: 3
---
apiVersion: v1
kind: Event
metadata: {name: billing.1, namespace: tenant-a}
involvedObject: {apiVersion: apps.cozystack.io/v1alpha1, kind: Postgres, name: billing, namespace: tenant-a}
type: Warning
reason: UpgradeFailed
message: "another instance's event"
lastTimestamp: "2026-11-23T11:00:30Z"
`

// fakeRoot is a command tree over the fake cluster writing to out and errOut.
func fakeRoot(t *testing.T, out, errOut io.Writer) (*cobra.Command, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	var objs []runtime.Object
	for _, doc := range strings.Split(clusterYAML, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		postgresGVR: "PostgresList", redisGVR: "RedisList", hrGVR: "HelmReleaseList", eventsGVR: "EventList",
		{Version: "v1", Resource: "pods"}: "PodList", {Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmcharts"}: "HelmChartList",
	}, objs...)
	disc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "apps.cozystack.io/v1alpha1",
		APIResources: []metav1.APIResource{
			{Name: "postgreses", SingularName: "postgres", Namespaced: true, Kind: "Postgres", ShortNames: []string{"pg"}},
			{Name: "postgreses/status", Namespaced: true, Kind: "Postgres"},
			{Name: "redises", SingularName: "redis", Namespaced: true, Kind: "Redis"},
		},
	}}}}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "source.toolkit.fluxcd.io", Version: "v1"}})
	mapper.Add(schema.GroupVersionKind{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmChart"}, meta.RESTScopeNamespace)
	cmd, root := newRoot("cozyplane", Streams{Out: out, ErrOut: errOut})
	root.gatherer = func() (*ops.Gatherer, error) {
		return &ops.Gatherer{Client: client, Discovery: disc, Mapper: mapper}, nil
	}
	return cmd, client
}

// runFake runs the command line against the fake cluster.
func runFake(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd, _ := fakeRoot(t, &out, &errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\ngot\n%s\nwant\n%s", path, got, want)
	}
}

func TestGetGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"get-all.json", []string{"get", "-A", "-o", "json"}},
		{"get-all.yaml", []string{"get", "-A", "-o", "yaml"}},
		{"get-kind-selector.json", []string{"get", "pg", "-n", "tenant-a", "-l", "team=shop", "-o", "json"}},
		{"get-one.json", []string{"get", "postgres/billing", "-n", "tenant-a", "-o", "json"}},
		{"get-one.yaml", []string{"get", "postgres", "billing", "-n", "tenant-a", "-o", "yaml"}},
		{"get-status-not-ready.json", []string{"get", "-A", "--status", "not-ready", "-o", "json"}},
		{"get-none.json", []string{"get", "-n", "tenant-c", "-o", "json"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, err := runFake(t, tc.args...)
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			golden(t, tc.golden, out)
			if strings.HasSuffix(tc.golden, ".json") && !json.Valid([]byte(out)) {
				t.Errorf("not JSON:\n%s", out)
			}
		})
	}
}

func TestGetTable(t *testing.T) {
	out, _, err := runFake(t, "get", "-A")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[0], "BACKING OBJECT                 MESSAGE") {
		t.Fatalf("table:\n%s", out)
	}
	for i, want := range []string{
		"tenant-a    Postgres   billing   False   UpgradeFailed      -           ",
		"tenant-a    Postgres   orders    True    InstallSucceeded   -           ",
		"tenant-b    Redis      cache     -       -                  -           ",
	} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("line %d: %q, want prefix %q", i+1, lines[i+1], want)
		}
	}
	if !strings.HasSuffix(lines[1], "HelmRelease/postgres-billing   Helm upgrade failed: timed out waiting for the condition") ||
		!strings.HasSuffix(lines[3], "-                              -") {
		t.Errorf("message column:\n%s", out)
	}
	out, errOut, err := runFake(t, "get", "-A", "--status", "suspended")
	if err != nil || out != "" || errOut != "No instances found in any namespace.\n" {
		t.Errorf("no suspended instance: %q %q %v", out, errOut, err)
	}
}

func TestTraceGolden(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		out, errOut, err := runFake(t, "trace", "postgres/orders", "-n", "tenant-a", "-o", format)
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		golden(t, "trace-helm."+format, out)
	}
	// The tree printed as text is the same tree.
	out, _, err := runFake(t, "trace", "postgres/orders", "-n", "tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	want := "Postgres tenant-a/orders  Ready=True  InstallSucceeded: Helm install succeeded for release tenant-a/postgres-orders.v1\n" +
		"│   last handled reconcile request: 2026-11-23T11:00:00Z\n" +
		"└── HelmRelease tenant-a/postgres-orders  Ready=True  InstallSucceeded: Helm install succeeded for release tenant-a/postgres-orders.v1\n" +
		"        last attempted revision: 1.0.0\n"
	if out != want {
		t.Errorf("text:\n%s", out)
	}
}

func TestGetWatch(t *testing.T) {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	cmd, client := fakeRoot(t, out, errOut)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		cmd.SetArgs([]string{"get", "postgres", "-n", "tenant-a", "--watch", "-o", "json", "--status", "not-ready"})
		err = cmd.ExecuteContext(ctx)
	}()
	// The fake watch starts after the list; retry the change until it is seen.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		u, gerr := client.Resource(postgresGVR).Namespace("tenant-a").Get(ctx, "orders", metav1.GetOptions{})
		if gerr != nil {
			t.Fatal(gerr)
		}
		conds := []any{map[string]any{"type": "Ready", "status": "False", "reason": "UpgradeFailed", "message": "try " + string(rune('a'+i%26))}}
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
		// The fake keeps no resourceVersion in objects; the API server's always have one.
		u.SetResourceVersion(strconv.Itoa(100 + i))
		if _, uerr := client.Resource(postgresGVR).Namespace("tenant-a").Update(ctx, u, metav1.UpdateOptions{}); uerr != nil {
			t.Fatal(uerr)
		}
		if strings.Contains(out.String(), `"type":"MODIFIED"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("events:\n%s", out)
	}
	type event struct {
		Type   string
		Object unstructured.Unstructured
	}
	var first event
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Type != "ADDED" || first.Object.GetName() != "billing" {
		t.Errorf("first event %s (%v)", lines[0], err)
	}
	modified := false
	for _, l := range lines[1:] {
		var ev event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if c, _ := ops.FindCondition(&ev.Object, "Ready"); c.Status != "False" {
			t.Errorf("--status not-ready printed %s", l)
		}
		modified = modified || (ev.Type == "MODIFIED" && ev.Object.GetName() == "orders")
	}
	if !modified {
		t.Errorf("no MODIFIED event for orders:\n%s", out)
	}
}

// syncBuffer is a buffer a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestEvents(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		out, errOut, err := runFake(t, "events", "postgres/orders", "-n", "tenant-a", "-o", format)
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		golden(t, "events."+format, out)
	}
	out, _, err := runFake(t, "events", "postgres/orders", "-n", "tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "LAST SEEN") ||
		!strings.Contains(lines[1], "Warning   BackendNotReady    Postgres/orders               HelmRelease postgres-orders is not ready yet (x3)") ||
		!strings.Contains(lines[2], "Normal    InstallSucceeded   HelmRelease/postgres-orders   Helm install succeeded") {
		t.Errorf("table:\n%s", out)
	}
	out, errOut, err := runFake(t, "events", "redis/cache", "-n", "tenant-b")
	if err != nil || out != "" || errOut != "No events found for Redis tenant-b/cache.\n" {
		t.Errorf("no events: %q %q %v", out, errOut, err)
	}
}

func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "trace", ""}, "postgres/\nredis/\n:6\n"},
		{[]string{"__complete", "reconcile", "-n", "tenant-a", "postgres/o"}, "postgres/orders\n:4\n"},
		{[]string{"__complete", "events", "-n", "tenant-a", "pg/"}, "pg/billing\npg/orders\n:4\n"},
		{[]string{"__complete", "get", ""}, "postgres\nredis\n:4\n"},
		{[]string{"__complete", "get", "-n", "tenant-a", "postgres", ""}, "billing\norders\n:4\n"},
		{[]string{"__complete", "get", "--status", ""}, "ready\nnot-ready\nunknown\nsuspended\n:4\n"},
		{[]string{"__complete", "trace", "-o", ""}, "text\nwide\njson\nyaml\n:4\n"},
		{[]string{"__complete", "get", "-o", ""}, "text\njson\nyaml\n:4\n"},
	} {
		out, _, err := runFake(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		// cobra appends a line for the directive on stderr; only stdout here.
		if out != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, out, tc.want)
		}
	}
}

func TestTraceWide(t *testing.T) {
	out, errOut, err := runFake(t, "trace", "postgres/orders", "-n", "tenant-a", "-o", "wide")
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	ago := regexp.MustCompile(`event [0-9a-z]+ ago`)
	got := ago.ReplaceAllString(out, "event AGO")
	want := "Postgres tenant-a/orders  Ready=True  InstallSucceeded: Helm install succeeded for release tenant-a/postgres-orders.v1\n" +
		"│   last handled reconcile request: 2026-11-23T11:00:00Z\n" +
		"│   event AGO: Warning BackendNotReady: HelmRelease postgres-orders is not ready yet (x3)\n" +
		"├── HelmRelease tenant-a/postgres-orders  Ready=True  InstallSucceeded: Helm install succeeded for release tenant-a/postgres-orders.v1\n" +
		"│   │   last attempted revision: 1.0.0\n" +
		"│   │   event AGO: Normal InstallSucceeded: Helm install succeeded for release tenant-a/postgres-orders.v1 with chart postgres@1.0.0\n" +
		"│   └── HelmChart cozy-system/postgres  Ready=True  ChartPullSucceeded: pulled 'postgres' chart with version '1.0.0'\n" +
		"│           chart ./charts/postgres, version *\n" +
		"│           artifact revision: 1.0.0@sha256:abc\n" +
		"└── Pod tenant-a/orders-0  Ready=True\n" +
		"        phase: Running\n" +
		"        container postgres: ready=true, restarts 2\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The source that is not there is said so; json stays the plain tree.
	out, _, err = runFake(t, "trace", "postgres/billing", "-n", "tenant-a", "-o", "wide")
	if err != nil || !strings.Contains(out, "HelmRelease tenant-a/postgres-billing  Ready=-  NotFound: does not exist") ||
		!strings.Contains(out, "Pod tenant-a/billing-0  Ready=-\n        phase: Pending") {
		t.Errorf("billing (%v):\n%s", err, out)
	}
}
