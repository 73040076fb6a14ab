package examplestest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cozyplane/cozyplane/api/encoding"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/gen/examples"
	"github.com/cozyplane/cozyplane/gen/testkinds"
)

// repoRoot is the repository's root folder.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// instance is one example instance.
type instance struct {
	file string
	obj  *unstructured.Unstructured
}

// readObjects reads every document of a YAML file as an unstructured object
// (numbers as int64 or float64, as the API server serves them).
func readObjects(t testing.TB, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		j, err := utilyaml.ToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(bytes.TrimSpace(j)) == 0 || string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, u)
	}
	return out
}

// exampleInstances returns every instance of a user-facing kind under
// examples/**/instances/.
func exampleInstances(t testing.TB) []instance {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(repoRoot(), "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.Contains(filepath.ToSlash(p), "/instances/") && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []instance
	for _, f := range files {
		for _, u := range readObjects(t, f) {
			if u.GroupVersionKind().Group == "apps.cozystack.io" {
				out = append(out, instance{file: f, obj: u})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no example instances found")
	}
	return out
}

// kindOf finds the generated codec of a kind in the example or test-module
// registries.
func kindOf(t testing.TB, kind string) examples.Kind {
	t.Helper()
	if k, ok := examples.Kinds[kind]; ok {
		return k
	}
	if k, ok := testkinds.Kinds[kind]; ok {
		return examples.Kind{GroupVersionKind: k.GroupVersionKind, Definition: k.Definition, Backend: k.Backend,
			New: func() examples.Object { return k.New() },
			FromUnstructured: func(u *unstructured.Unstructured) (examples.Object, error) {
				return k.FromUnstructured(u)
			},
			AddToScheme: k.AddToScheme}
	}
	t.Fatalf("no generated package for kind %s: run gen/generate.sh", kind)
	return examples.Kind{}
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// referenceVars is the terraform controller's encoding of a spec: its
// tfbackend.Vars calls encoding.Vars on the unstructured spec, as here; the
// generated Vars encodes the typed spec, so a difference is a value the types
// do not carry through.
func referenceVars(t testing.TB, spec map[string]any) []tfv1alpha2.Variable {
	t.Helper()
	vars, err := encoding.Vars(spec)
	if err != nil {
		t.Fatal(err)
	}
	return vars
}
