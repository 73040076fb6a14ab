package migrate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// These tests drive Gather, Compute and Applier against a fake dynamic
// client; a goroutine plays the helm controller. The scenario in
// tests/chainsaw/migrate runs the same against a real API server.

var postgresGVR = InstanceResource("postgreses")

func fakeCluster(t *testing.T, objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	t.Helper()
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		APIServiceResource:  "APIServiceList",
		DefinitionResource:  "ApplicationDefinitionList",
		HelmReleaseResource: "HelmReleaseList",
		postgresGVR:         "PostgresList",
	}, objs...)
	// The API server gives every new object a uid; the fake does not.
	c.PrependReactor("create", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if u, ok := a.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured); ok && u.GetUID() == "" {
			u.SetUID(types.UID("uid-" + u.GetNamespace() + "-" + u.GetName()))
		}
		return false, nil, nil
	})
	return c
}

func definitionObject(t *testing.T, d cozyv1alpha1.ApplicationDefinition) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&d)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("cozystack.io/v1alpha1")
	u.SetKind("ApplicationDefinition")
	return u
}

func helmReleaseObject(r Release) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"values": runtime.DeepCopyJSONValue(r.Values)}}}
	u.SetAPIVersion("helm.toolkit.fluxcd.io/v2")
	u.SetKind("HelmRelease")
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	u.SetUID(r.UID)
	u.SetGeneration(r.Generation)
	u.SetLabels(r.Labels)
	u.SetAnnotations(r.Annotations)
	return u
}

func apiServiceObject(service map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"group": "apps.cozystack.io", "version": "v1alpha1"}}}
	if service != nil {
		u.Object["spec"].(map[string]any)["service"] = service
	}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	u.SetName(InstanceAPIServiceName)
	return u
}

// helmController adopts, every few milliseconds, each HelmRelease
// postgres-<name> whose instance carries its uid as proof: the part of the
// helm controller that migrate waits for.
func helmController(ctx context.Context, t *testing.T, c *dynamicfake.FakeDynamicClient) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			list, err := c.Tracker().List(postgresGVR, schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}, "")
			if err == nil {
				for _, inst := range list.(*unstructured.UnstructuredList).Items {
					obj, err := c.Tracker().Get(HelmReleaseResource, inst.GetNamespace(), "postgres-"+inst.GetName())
					hr, _ := obj.(*unstructured.Unstructured)
					if err != nil || hr == nil || string(hr.GetUID()) != inst.GetAnnotations()["apps.cozystack.io/adopt"] || metav1.GetControllerOf(hr) != nil {
						continue
					}
					hr.SetOwnerReferences([]metav1.OwnerReference{*instanceRef("Postgres", inst.GetName(), inst.GetUID())})
					// Straight to the tracker: the fake records only
					// migrate's own requests.
					if err := c.Tracker().Update(HelmReleaseResource, hr, hr.GetNamespace()); err != nil {
						t.Errorf("adopting: %v", err)
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return &wg
}

func writes(c *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range c.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return out
}

func planOf(t *testing.T, c *dynamicfake.FakeDynamicClient, ns string) Plan {
	t.Helper()
	in, err := Gather(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	return Compute(in)
}

func TestApplyRefusesWhileBlocked(t *testing.T) {
	pg := withReady(legacyDef("postgres", "Postgres", "postgreses", "postgres-"), metav1.ConditionFalse, cozyv1alpha1.ReasonGroupShadowed, "shadowed")
	c := fakeCluster(t, definitionObject(t, pg), helmReleaseObject(upstreamRelease("t", "postgres-", "Postgres", "a")),
		apiServiceObject(map[string]any{"namespace": "cozy-system", "name": "cozystack-api"}))
	p := planOf(t, c, "")
	c.ClearActions()
	err := (&Applier{Client: c, FieldManager: "cozyplane", Timeout: time.Second}).Apply(context.Background(), &p)
	var blocked *BlockedError
	if !errors.As(err, &blocked) || !strings.Contains(err.Error(), "APIService v1alpha1.apps.cozystack.io") || !strings.Contains(err.Error(), "fix: ") {
		t.Fatalf("got %v", err)
	}
	if len(c.Actions()) != 0 {
		t.Errorf("a blocked apply touched the cluster: %v", c.Actions())
	}
}

func TestApplyCreatesWaitsAndIsIdempotent(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	a, b := upstreamRelease("t1", "postgres-", "Postgres", "a"), upstreamRelease("t2", "postgres-", "Postgres", "b")
	stray := upstreamRelease("t1", "pg-", "Postgres", "stray")
	c := fakeCluster(t, definitionObject(t, pg), helmReleaseObject(a), helmReleaseObject(b), helmReleaseObject(stray), apiServiceObject(nil))
	ctx, cancel := context.WithCancel(context.Background())
	wg := helmController(ctx, t, c)
	defer func() { cancel(); wg.Wait() }()

	apply := func() (Plan, error) {
		p := planOf(t, c, "")
		c.ClearActions()
		err := (&Applier{Client: c, FieldManager: "cozyplane", Timeout: 5 * time.Second, Interval: 10 * time.Millisecond}).Apply(context.Background(), &p)
		return p, err
	}
	p, err := apply()
	if err != nil {
		t.Fatal(err)
	}
	if got := writes(c); strings.Join(got, ",") != "create postgreses,create postgreses" {
		t.Errorf("writes %v", got)
	}
	for _, e := range p.Entries {
		want := ResultAdopted
		if e.HelmRelease.Name == "pg-stray" {
			want = ""
		}
		if e.Result != want {
			t.Errorf("%s: result %q, want %q", e.HelmRelease.Name, e.Result, want)
		}
	}
	inst, err := c.Resource(postgresGVR).Namespace("t2").Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if inst.GetAnnotations()["apps.cozystack.io/adopt"] != string(b.UID) || inst.GetLabels()["team"] != "billing" {
		t.Errorf("instance %v", inst.Object)
	}
	if _, found := inst.Object["spec"].(map[string]any)["_cluster"]; found {
		t.Errorf("platform values leaked into the spec: %v", inst.Object["spec"])
	}

	// Again: everything is adopted, nothing is written.
	p, err = apply()
	if err != nil {
		t.Fatal(err)
	}
	if got := writes(c); len(got) != 0 {
		t.Errorf("second run wrote %v", got)
	}
	if p.Count(ActionNone) != 2 || p.Count(ActionSkip) != 1 {
		t.Errorf("second plan %+v", p.Entries)
	}
}

func TestApplyFinishesAnInterruptedRun(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	a, b := upstreamRelease("t", "postgres-", "Postgres", "a"), upstreamRelease("t", "postgres-", "Postgres", "b")
	// The first run created a's instance, then was killed.
	p0 := Compute(Inputs{DefinitionsServed: true, Definitions: []cozyv1alpha1.ApplicationDefinition{pg}, Releases: []Release{a}, InstancesListed: true})
	first := InstanceObject(&p0.Entries[0])
	first.SetUID("uid-first")
	c := fakeCluster(t, definitionObject(t, pg), helmReleaseObject(a), helmReleaseObject(b), first)

	p := planOf(t, c, "t")
	if p.Entries[0].Action != ActionWait || p.Entries[1].Action != ActionCreate {
		t.Fatalf("plan %+v", p.Entries)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wg := helmController(ctx, t, c)
	defer func() { cancel(); wg.Wait() }()
	c.ClearActions()
	if err := (&Applier{Client: c, FieldManager: "cozyplane", Timeout: 5 * time.Second, Interval: 10 * time.Millisecond}).Apply(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if got := writes(c); strings.Join(got, ",") != "create postgreses" {
		t.Errorf("writes %v", got)
	}
	if p.Entries[0].Result != ResultAdopted || p.Entries[1].Result != ResultAdopted {
		t.Errorf("results %q %q", p.Entries[0].Result, p.Entries[1].Result)
	}
}

func TestApplyLeavesAForeignInstanceAlone(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	a := upstreamRelease("t", "postgres-", "Postgres", "a")
	c := fakeCluster(t, definitionObject(t, pg), helmReleaseObject(a))
	p := planOf(t, c, "")
	if p.Entries[0].Action != ActionCreate {
		t.Fatalf("plan %+v", p.Entries)
	}
	// Between the plan and the apply, a tenant creates the instance.
	tenant := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(7)}}}
	tenant.SetAPIVersion("apps.cozystack.io/v1alpha1")
	tenant.SetKind("Postgres")
	tenant.SetNamespace("t")
	tenant.SetName("a")
	if _, err := c.Resource(postgresGVR).Namespace("t").Create(context.Background(), tenant, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.ClearActions()
	if err := (&Applier{Client: c, FieldManager: "cozyplane", Timeout: time.Second}).Apply(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	e := p.Entries[0]
	if e.Action != ActionSkip || e.Reason != SkipInstanceConflict || !strings.Contains(e.Message, "without the adoption proof") {
		t.Errorf("entry %+v", e)
	}
	for _, w := range writes(c) {
		if w != "create postgreses" { // the refused create itself
			t.Errorf("wrote %s", w)
		}
	}
	got, _ := c.Resource(postgresGVR).Namespace("t").Get(context.Background(), "a", metav1.GetOptions{})
	if got.GetAnnotations() != nil || got.Object["spec"].(map[string]any)["replicas"] != int64(7) {
		t.Errorf("the tenant's instance changed: %v", got.Object)
	}
}

func TestApplyTimesOutAndSaysWhy(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	a := upstreamRelease("t", "postgres-", "Postgres", "a")
	c := fakeCluster(t, definitionObject(t, pg), helmReleaseObject(a))
	p := planOf(t, c, "")
	err := (&Applier{Client: c, FieldManager: "cozyplane", Timeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond}).Apply(context.Background(), &p)
	var inc *IncompleteError
	if !errors.As(err, &inc) || len(inc.Failed) != 1 || !inc.TimedOut {
		t.Fatalf("got %v (timed out: %t)", err, inc != nil && inc.TimedOut)
	}
	for _, s := range []string{"t/postgres-a", "not adopted within 50ms", "Postgres a has no Ready condition: is the helm controller running?"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err.Error(), s)
		}
	}
}

func TestApplyWithoutWaiting(t *testing.T) {
	pg := legacyDef("postgres", "Postgres", "postgreses", "postgres-")
	c := fakeCluster(t, definitionObject(t, pg), helmReleaseObject(upstreamRelease("t", "postgres-", "Postgres", "a")))
	p := planOf(t, c, "")
	if err := (&Applier{Client: c, FieldManager: "cozyplane"}).Apply(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	if p.Entries[0].Result != ResultNotWaited {
		t.Errorf("result %q", p.Entries[0].Result)
	}
}
