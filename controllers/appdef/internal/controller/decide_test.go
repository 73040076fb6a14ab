package controller

import (
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func def(name, kind, plural, singular string, age int) cozyv1alpha1.ApplicationDefinition {
	return cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Minute))},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{Application: cozyv1alpha1.ApplicationDefinitionApplication{
			Kind: kind, Plural: plural, Singular: singular,
		}},
	}
}

func TestFindClash(t *testing.T) {
	postgres := def("postgres", "Postgres", "postgreses", "postgres", 0)
	tests := []struct {
		name     string
		def      cozyv1alpha1.ApplicationDefinition
		others   []cozyv1alpha1.ApplicationDefinition
		winner   string
		sharedIs string
	}{
		{name: "no other", def: postgres},
		{name: "same kind, younger loses", def: def("pg2", "Postgres", "pgs", "pg", 1), others: []cozyv1alpha1.ApplicationDefinition{postgres}, winner: "postgres", sharedIs: "kind Postgres"},
		{name: "same kind, older wins", def: postgres, others: []cozyv1alpha1.ApplicationDefinition{def("pg2", "Postgres", "pgs", "pg", 1)}},
		{name: "plural equals another's singular", def: def("b", "B", "postgres", "b", 1), others: []cozyv1alpha1.ApplicationDefinition{postgres}, winner: "postgres", sharedIs: "resource name postgres"},
		{name: "kind equals another's list kind", def: def("b", "PostgresList", "plists", "plist", 1), others: []cozyv1alpha1.ApplicationDefinition{postgres}, winner: "postgres", sharedIs: "kind PostgresList"},
		{name: "same age: name decides", def: def("b", "Postgres", "x", "x", 0), others: []cozyv1alpha1.ApplicationDefinition{postgres}, winner: "", sharedIs: ""},
		{name: "same age: name decides (other way)", def: def("a", "Postgres", "x", "x", 0), others: []cozyv1alpha1.ApplicationDefinition{def("0", "Postgres", "y", "y", 0)}, winner: "0", sharedIs: "kind Postgres"},
		{name: "the oldest of several is named", def: def("c", "Postgres", "postgreses", "postgres", 5), others: []cozyv1alpha1.ApplicationDefinition{def("b", "X", "postgreses", "x", 2), postgres}, winner: "postgres", sharedIs: "kind Postgres"},
		{name: "unrelated", def: def("r", "Redis", "redises", "redis", 1), others: []cozyv1alpha1.ApplicationDefinition{postgres}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := append([]cozyv1alpha1.ApplicationDefinition{tt.def}, tt.others...)
			w, shared := findClash(&tt.def, all)
			got := ""
			if w != nil {
				got = w.Name
			}
			if got != tt.winner || shared != tt.sharedIs {
				t.Errorf("winner %q (%q), want %q (%q)", got, shared, tt.winner, tt.sharedIs)
			}
		})
	}
}

func TestClashesWith(t *testing.T) {
	a := def("a", "A", "as", "a", 0)
	all := []cozyv1alpha1.ApplicationDefinition{a, def("b", "A", "bs", "b", 1), def("c", "C", "cs", "c", 2), def("d", "D", "as", "d", 3)}
	got := clashesWith(&a, all)
	if strings.Join(got, ",") != "b,d" {
		t.Errorf("got %v", got)
	}
}

func crdWith(conds ...apiextensionsv1.CustomResourceDefinitionCondition) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "xs.apps.cozystack.io"}}
	c.Status.Conditions = conds
	return c
}

func TestCRDVerdict(t *testing.T) {
	est := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}
	names := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue}
	conflict := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionFalse, Message: `"xs" is already in use`}
	installing := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Message: "the initial names have not been accepted"}
	for _, tt := range []struct {
		crd   *apiextensionsv1.CustomResourceDefinition
		state crdState
		msg   string
	}{
		{crdWith(), crdWaiting, "waiting"},
		{crdWith(names, est), crdEstablished, ""},
		{crdWith(conflict, installing), crdNamesRejected, `"xs" is already in use`},
		{crdWith(names, installing), crdWaiting, "initial names"},
	} {
		state, msg := crdVerdict(tt.crd)
		if state != tt.state || !strings.Contains(msg, tt.msg) {
			t.Errorf("%v: got %v %q", tt.crd.Status.Conditions, state, msg)
		}
	}
}

func TestRenamed(t *testing.T) {
	d := def("pg", "Postgres", "postgreses", "postgres", 0)
	crd := func(name, kind, plural string) apiextensionsv1.CustomResourceDefinition {
		c := apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
		c.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, Plural: plural}
		return c
	}
	if msg := renamed(&d, "postgreses.apps.cozystack.io", nil); msg != "" {
		t.Errorf("nothing served yet: %s", msg)
	}
	if msg := renamed(&d, "postgreses.apps.cozystack.io", []apiextensionsv1.CustomResourceDefinition{crd("postgreses.apps.cozystack.io", "Postgres", "postgreses")}); msg != "" {
		t.Errorf("same names: %s", msg)
	}
	msg := renamed(&d, "postgreses.apps.cozystack.io", []apiextensionsv1.CustomResourceDefinition{crd("pgs.apps.cozystack.io", "Postgres", "pgs")})
	if !strings.Contains(msg, "CRD pgs.apps.cozystack.io serves kind Postgres (plural pgs)") {
		t.Errorf("plural renamed: %s", msg)
	}
	msg = renamed(&d, "postgreses.apps.cozystack.io", []apiextensionsv1.CustomResourceDefinition{crd("postgreses.apps.cozystack.io", "PostgreSQL", "postgreses")})
	if !strings.Contains(msg, "now names kind Postgres") || !strings.Contains(msg, "serves kind PostgreSQL") {
		t.Errorf("kind renamed: %s", msg)
	}
}

func TestInstancesMessage(t *testing.T) {
	var sample []metav1.PartialObjectMetadata
	for _, n := range []string{"f", "e", "d", "c", "b", "a"} {
		sample = append(sample, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: n}})
	}
	got := instancesMessage("Postgres", 9, sample)
	if !strings.Contains(got, "9 instances of Postgres remain (t/a, t/b, t/c, t/d, t/e and 4 more)") {
		t.Errorf("got %s", got)
	}
	got = instancesMessage("Postgres", 1, sample[:1])
	if !strings.Contains(got, "1 instance of Postgres remains (t/f)") {
		t.Errorf("got %s", got)
	}
}

func apiService(labels map[string]string, service map[string]any) *unstructured.Unstructured {
	u := newAPIService()
	u.SetName("v1alpha1.apps.cozystack.io")
	u.SetLabels(labels)
	spec := map[string]any{"group": "apps.cozystack.io", "version": "v1alpha1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15)}
	if service != nil {
		spec["service"] = service
	}
	u.Object["spec"] = spec
	return u
}

func TestShadowMessage(t *testing.T) {
	upstream := apiService(nil, map[string]any{"namespace": "cozy-system", "name": "cozystack-api", "port": int64(443)})
	local := apiService(map[string]string{"kube-aggregator.kubernetes.io/automanaged": "true"}, nil)
	for _, tt := range []struct {
		name string
		svc  *unstructured.Unstructured
		want []string // substrings; none: not shadowed
	}{
		{name: "no APIService (kube-apiserver creates its local one soon)", svc: nil},
		{name: "the local one kube-apiserver manages", svc: local},
		{name: "a local one someone else wrote", svc: apiService(nil, nil)},
		{name: "upstream's aggregated API", svc: upstream, want: []string{
			"APIService v1alpha1.apps.cozystack.io sends every request for apps.cozystack.io/v1alpha1 to Service cozy-system/cozystack-api",
			"never reaches CRD postgreses.apps.cozystack.io",
			"kind Postgres is not served",
			"kubectl delete apiservice v1alpha1.apps.cozystack.io",
			"docs/migration.md",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := shadowMessage(routeOf(tt.svc), "Postgres", "postgreses.apps.cozystack.io")
			if len(tt.want) == 0 && got != "" {
				t.Fatalf("not shadowed, got %q", got)
			}
			if len(tt.want) > 0 && got == "" {
				t.Fatal("shadowed, got no message")
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("message %q lacks %q", got, w)
				}
			}
		})
	}
}

func TestRouteChanged(t *testing.T) {
	upstream := apiService(nil, map[string]any{"namespace": "cozy-system", "name": "cozystack-api"})
	injected := upstream.DeepCopy()
	injected.SetAnnotations(map[string]string{"cert-manager.io/inject-ca-from": "cozy-system/cozystack-api"})
	if err := unstructured.SetNestedField(injected.Object, "Y2E=", "spec", "caBundle"); err != nil {
		t.Fatal(err)
	}
	unavailable := upstream.DeepCopy()
	if err := unstructured.SetNestedSlice(unavailable.Object, []any{map[string]any{"type": "Available", "status": "False"}}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	moved := apiService(nil, map[string]any{"namespace": "cozy-system", "name": "other"})
	local := apiService(nil, nil)
	p := routeChanged()
	for _, tt := range []struct {
		name     string
		old, new *unstructured.Unstructured
		want     bool
	}{
		{"CA injected", upstream, injected, false},
		{"Service became unavailable", upstream, unavailable, false},
		{"another Service", upstream, moved, true},
		{"became local", upstream, local, true},
		{"became shadowing", local, upstream, true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: upstream}) || !p.Delete(event.DeleteEvent{Object: upstream}) {
		t.Error("creation and deletion must always enqueue")
	}
}
