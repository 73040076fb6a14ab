package examplestest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/api/kindruntime"
	"github.com/cozyplane/cozyplane/gen/examples"
	"github.com/cozyplane/cozyplane/gen/examples/postgres"
	"github.com/cozyplane/cozyplane/gen/internal/source"
	"github.com/cozyplane/cozyplane/gen/internal/typegen"
	"github.com/cozyplane/cozyplane/gen/testkinds"
	"github.com/cozyplane/cozyplane/gen/testkinds/network"
	"github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var (
	k8s client.Client
	// definitions serves every kind the tests create, by kind.
	definitions = map[string]*source.Definition{}
)

// definitionFiles are the example definitions and the definitions
// `gen from-terraform` makes of the test modules.
func definitionFiles() ([]string, error) {
	var files []string
	err := filepath.WalkDir(filepath.Join(repoRoot(), "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	golden, err := filepath.Glob(filepath.Join(repoRoot(), "gen", "testdata", "terraform", "*", "definition.golden.yaml"))
	return append(files, golden...), err
}

// TestMain starts one API server for the package, serving the CRD
// pkg/schema builds from every definition (as the appdef controller does).
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	files, err := definitionFiles()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defs, err := typegen.Select(files, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	var extra []client.Object
	for _, d := range defs {
		objs, err := schema.Build(d.Def)
		if err != nil {
			fmt.Fprintln(os.Stderr, d.Wrap(err))
			return 1
		}
		crds = append(crds, objs.CRD)
		if objs.Policy != nil {
			extra = append(extra, objs.Policy, objs.Binding)
		}
		definitions[d.Def.Spec.Application.Kind] = d
	}
	env, err := testenv.Start(crds...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	for _, k := range examples.Kinds {
		_ = k.AddToScheme(scheme)
	}
	for _, k := range testkinds.Kinds {
		_ = k.AddToScheme(scheme)
	}
	k8s, err = client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, o := range extra {
		if err := k8s.Create(context.Background(), o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// namespace creates a namespace of the test's own.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// create writes an instance into ns and returns it as the API server
// stores it (defaults applied, unknown fields pruned).
func create(t *testing.T, ns string, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u = u.DeepCopy()
	u.SetNamespace(ns)
	if err := k8s.Create(context.Background(), u); err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestExampleInstancesThroughTheAPIServer: every example instance is
// accepted by the CRD built from its definition; what the API server stores
// decodes into the generated type and encodes back unchanged, and the
// generated backend encoding matches the controllers'.
func TestExampleInstancesThroughTheAPIServer(t *testing.T) {
	ns := namespace(t)
	for _, in := range exampleInstances(t) {
		in := in
		t.Run(in.obj.GetKind()+"/"+in.obj.GetName(), func(t *testing.T) {
			stored := create(t, ns, in.obj)
			k := kindOf(t, stored.GetKind())
			typed, err := k.FromUnstructured(stored)
			if err != nil {
				t.Fatalf("the stored object does not decode into the generated type: %v\n%s", err, toJSON(t, stored.Object))
			}
			back, err := typed.ToUnstructured()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(stored.Object, back.Object) {
				t.Fatalf("the round trip changed the stored object\n--- stored\n%s\n--- out\n%s", toJSON(t, stored.Object), toJSON(t, back.Object))
			}
			checkEncoding(t, typed, stored)
		})
	}
}

// TestTypedClient uses a generated type with controller-runtime's typed
// client: what a Go program writes is validated and defaulted by the API
// server and reads back into the same type.
func TestTypedClient(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	p := &postgres.Postgres{
		ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: ns},
		Spec: postgres.PostgresSpec{
			Version:  postgres.VersionV16,
			Replicas: ptr.To[int64](3),
			Users:    map[string]postgres.UsersValue{"app": {}},
			Databases: map[string]postgres.DatabasesValue{
				"orders": {Extensions: []string{}},
			},
		},
	}
	sent := p.DeepCopy()
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	got := &postgres.Postgres{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.ResourcesPreset == nil || *got.Spec.ResourcesPreset != postgres.ResourcesPresetSmall {
		t.Errorf("the API server's default for resourcesPreset is missing: %+v", got.Spec.ResourcesPreset)
	}
	if got.Spec.Users["app"].Replication == nil || *got.Spec.Users["app"].Replication {
		t.Errorf("users[app].replication should default to false: %+v", got.Spec.Users["app"])
	}
	if e := got.Spec.Databases["orders"].Extensions; e == nil || len(e) != 0 {
		t.Errorf("an empty list must survive (omitzero): %#v", e)
	}
	diff := kindruntime.Diff(&sent.Spec, &got.Spec)
	sort.Strings(diff)
	want := []string{"replicas", "resourcesPreset", "size", "storageClass", "users[app].replication"}
	// Server-side defaults are what differ between what was sent and what
	// is stored.
	for _, w := range want {
		found := false
		for _, d := range diff {
			if d == w {
				found = true
			}
		}
		if w != "replicas" && !found {
			t.Errorf("Diff = %v, want it to name %s", diff, w)
		}
		if w == "replicas" && found {
			t.Errorf("Diff = %v names replicas, which did not change", diff)
		}
	}
	if !kindruntime.Equal(&got.Spec, &got.DeepCopy().Spec) {
		t.Error("a deep copy is not Equal")
	}

	// The API server refuses what the schema forbids.
	bad := p.DeepCopy()
	bad.Name = "bad"
	bad.ResourceVersion = ""
	bad.Spec.Replicas = ptr.To[int64](10)
	bad.Spec.Version = "v9"
	err := k8s.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "spec.replicas") || !strings.Contains(err.Error(), "spec.version") {
		t.Errorf("want a rejection naming spec.replicas and spec.version, got %v", err)
	}
}

// TestTerraformModulesEndToEnd: the definitions gen from-terraform made of
// the test modules build CRDs that install (TestMain), accept an instance,
// apply the module's defaults, and the instance encodes to the expected
// Terraform variables.
func TestTerraformModulesEndToEnd(t *testing.T) {
	ns := namespace(t)
	for _, m := range []string{"vpc", "dnszone", "database"} {
		m := m
		t.Run(m, func(t *testing.T) {
			dir := filepath.Join(repoRoot(), "gen", "testdata", "terraform", m)
			objs := readObjects(t, filepath.Join(dir, "instance.yaml"))
			stored := create(t, ns, objs[0])
			k, ok := testkinds.Kinds[stored.GetKind()]
			if !ok {
				t.Fatalf("no generated package for %s: run gen/generate.sh", stored.GetKind())
			}
			typed, err := k.FromUnstructured(stored)
			if err != nil {
				t.Fatal(err)
			}
			vars, err := typed.(interface {
				Vars() ([]tfVariable, error)
			}).Vars()
			if err != nil {
				t.Fatal(err)
			}
			spec, _, _ := unstructured.NestedMap(stored.Object, "spec")
			if want := referenceVars(t, spec); !reflect.DeepEqual(vars, want) {
				t.Errorf("Vars() differ from the controller's encoding\n--- got\n%s\n--- want\n%s", toJSON(t, vars), toJSON(t, want))
			}
			var b bytes.Buffer
			for _, v := range vars {
				fmt.Fprintf(&b, "%s = %s\n", v.Name, v.Value.Raw)
			}
			goldenFile := filepath.Join(dir, "vars.golden")
			if *update {
				if err := os.WriteFile(goldenFile, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(goldenFile)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("vars differ from %s:\n%s", goldenFile, b.String())
			}
		})
	}
}

// TestTerraformValidationsAreEnforced: the validation blocks that
// translated are enforced by the API server.
func TestTerraformValidationsAreEnforced(t *testing.T) {
	ns := namespace(t)
	base := readObjects(t, filepath.Join(repoRoot(), "gen", "testdata", "terraform", "vpc", "instance.yaml"))[0]
	cases := []struct {
		name  string
		patch func(s *network.NetworkSpec)
		want  string
	}{
		{"pattern", func(s *network.NetworkSpec) { s.Name = "Prod_Net" }, "spec.name"},
		{"enum", func(s *network.NetworkSpec) { s.Region = "mars-1" }, "spec.region"},
		{"format cidr", func(s *network.NetworkSpec) { s.CIDRBlock = ptr.To("10.0.0.0/33") }, "spec.cidr_block"},
		{"maxItems", func(s *network.NetworkSpec) { s.AvailabilityZones = []string{"a", "b", "c", "d", "e", "f", "g"} }, "spec.availability_zones"},
		{"items pattern", func(s *network.NetworkSpec) { s.Subnets[0].Name = "Public A" }, "spec.subnets[0].name"},
		{"nested maximum", func(s *network.NetworkSpec) { s.NatGateway.Eips = ptr.To[float64](4) }, "spec.nat_gateway.eips"},
		{"exclusive minimum", func(s *network.NetworkSpec) { s.FlowLogsRetentionDays = ptr.To[float64](0) }, "spec.flow_logs_retention_days"},
		{"required", func(s *network.NetworkSpec) { s.Region = "" }, "spec.region"},
	}
	for i, c := range cases {
		typed, err := network.FromUnstructured(base)
		if err != nil {
			t.Fatal(err)
		}
		c.patch(&typed.Spec)
		typed.Name = fmt.Sprintf("bad-%d", i)
		typed.Namespace = ns
		err = k8s.Create(context.Background(), typed)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want a rejection naming %s, got %v", c.name, c.want, err)
		}
	}
	// And the valid instance passes through the typed client too.
	typed, err := network.FromUnstructured(base)
	if err != nil {
		t.Fatal(err)
	}
	typed.Namespace = ns
	if err := k8s.Create(context.Background(), typed); err != nil {
		t.Fatal(err)
	}
	got := &network.Network{}
	testenv.Eventually(t, 5*time.Second, func() (bool, string, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(typed), got)
		return err == nil, fmt.Sprintf("the instance created through the typed client cannot be read back: %v", err), nil
	})
	if got.Spec.CIDRBlock == nil || *got.Spec.CIDRBlock != "10.0.0.0/16" {
		t.Errorf("cidr_block default not applied: %v", got.Spec.CIDRBlock)
	}
	raw, _ := json.Marshal(got.Spec.Subnets[1])
	if !strings.Contains(string(raw), `"public":false`) {
		t.Errorf("optional(bool, false) default not applied to a list item: %s", raw)
	}
}
