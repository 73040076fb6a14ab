package typegen

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cozyplane/cozyplane/gen/internal/source"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// inputs are the definitions the golden and build tests generate.
func inputs(t testing.TB) []string {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test definitions: %v", err)
	}
	sort.Strings(files)
	return files
}

func models(t testing.TB, files []string) []*Model {
	t.Helper()
	defs, err := Select(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Model
	for _, d := range defs {
		m, err := ModelOf(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestGolden compares every emitted file with testdata/golden/<package>/<file>.golden.
func TestGolden(t *testing.T) {
	for _, m := range models(t, inputs(t)) {
		files, err := Generate(m, "example.com/generated/"+m.Package)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join("testdata", "golden", m.Package)
		if *update {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		for _, f := range files {
			names = append(names, f.Name+".golden")
			p := filepath.Join(dir, f.Name+".golden")
			if *update {
				if err := os.WriteFile(p, f.Content, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("%v (run with -update)", err)
				continue
			}
			if !bytes.Equal(want, f.Content) {
				t.Errorf("%s: the output differs from the golden file (run with -update to accept):\n%s", p, f.Content)
			}
		}
		// No golden file is left over from a file no longer generated.
		entries, _ := os.ReadDir(dir)
		var have []string
		for _, e := range entries {
			have = append(have, e.Name())
		}
		sort.Strings(names)
		if strings.Join(have, ",") != strings.Join(names, ",") {
			t.Errorf("%s holds %v, the generator writes %v", dir, have, names)
		}
	}
}

// TestFilesAreWellFormed checks the rules every generated file follows.
func TestFilesAreWellFormed(t *testing.T) {
	for _, m := range models(t, inputs(t)) {
		files, err := Generate(m, "example.com/generated/"+m.Package)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Generate(m, "example.com/generated/"+m.Package)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range files {
			if !strings.HasPrefix(f.Name, "zz_generated.") || !strings.HasSuffix(f.Name, ".go") {
				t.Errorf("%s: not a zz_generated.*.go name", f.Name)
			}
			if !bytes.HasPrefix(f.Content, []byte("// "+Header+"\n")) {
				t.Errorf("%s/%s does not start with the header", m.Package, f.Name)
			}
			if !bytes.Equal(f.Content, again[i].Content) {
				t.Errorf("%s/%s: two runs differ", m.Package, f.Name)
			}
			fs := token.NewFileSet()
			af, err := parser.ParseFile(fs, f.Name, f.Content, parser.ParseComments)
			if err != nil {
				t.Errorf("%s/%s: %v", m.Package, f.Name, err)
				continue
			}
			if len(af.Decls) == 0 {
				t.Errorf("%s/%s declares nothing", m.Package, f.Name)
			}
		}
	}
}

// TestBuild compiles and vets what the generator writes for the examples
// and the test definitions, inside this module.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	examples, _ := filepath.Glob("../../../examples/*/*.yaml")
	more, _ := filepath.Glob("../../../examples/*/*/*.yaml")
	files := append(append(inputs(t), examples...), more...)
	dir, err := os.MkdirTemp("testdata", "build")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := Run(files, Options{Out: dir, Registry: true}); err != nil {
		t.Fatal(err)
	}
	pkgs := []string{"./" + filepath.ToSlash(dir)}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Join(dir, e.Name())))
		}
	}
	for _, args := range [][]string{{"build"}, {"vet"}} {
		cmd := exec.Command("go", append(args, pkgs...)...)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s %v: %v\n%s", args[0], pkgs, err, out)
		}
	}
}

func TestSelectPrefersBackendForm(t *testing.T) {
	files := []string{"../../../examples/helm/legacy-form/postgres.yaml", "../../../examples/helm/backend-form/postgres.yaml"}
	var log bytes.Buffer
	defs, err := Select(files, &log)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs[0].Def.Spec.Backend == nil {
		t.Fatalf("want the backend form only, got %d definitions", len(defs))
	}
	if !strings.Contains(log.String(), "rather than the legacy one") {
		t.Errorf("log: %s", log.String())
	}
}

func TestSelectRefusesConflictingKinds(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	b := filepath.Join(dir, "b.yaml")
	write(t, a, defYAML("Thing", `{"type": "object", "properties": {"a": {"type": "string"}}}`))
	write(t, b, defYAML("Thing", `{"type": "object", "properties": {"b": {"type": "string"}}}`))
	_, err := Select([]string{a, b}, nil)
	if err == nil || !strings.Contains(err.Error(), "kind Thing is also defined, differently, in "+a) {
		t.Fatalf("got %v", err)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func defYAML(kind, schema string) string {
	lower := strings.ToLower(kind)
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata:\n  name: %s\nspec:\n  application:\n    kind: %s\n    plural: %ss\n    singular: %s\n    openAPISchema: |\n", lower, kind, lower, lower)
	for _, l := range strings.Split(schema, "\n") {
		b.WriteString("      " + l + "\n")
	}
	b.WriteString("  backend:\n    type: Helm\n    helm:\n      chartRef:\n        kind: OCIRepository\n        name: x\n")
	return b.String()
}

// TestErrorsNameFileLineAndField: constructs that cannot be expressed are
// errors pointing into the definition file.
func TestErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, schema, want string
	}{
		{"oneOf of objects", "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"store\": {\n      \"oneOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}}, {\"type\": \"object\", \"properties\": {\"b\": {\"type\": \"string\"}}}]\n    }\n  }\n}",
			"x.yaml:15: openAPISchema.properties[store].oneOf: a oneOf of object schemas cannot be expressed as one Go type"},
		{"remote $ref", "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"image\": {\"$ref\": \"https://example.com/image.json\"}\n  }\n}",
			"x.yaml:14: openAPISchema.properties[image].$ref: only local references"},
		{"tuple", "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"pair\": {\n      \"type\": \"array\",\n      \"items\": [{\"type\": \"string\"}]\n    }\n  }\n}",
			"x.yaml:16: openAPISchema.properties[pair].items: a list of item schemas (tuple validation) is not supported"},
		{"property name", "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"a,b\": {\"type\": \"string\"}\n  }\n}",
			"x.yaml:14: openAPISchema.properties[a,b]: the property name \"a,b\" cannot be a Go struct field's JSON name"},
		{"not JSON", "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"a\": {\"type\": \"string\"},,\n  }\n}",
			"x.yaml:14: openAPISchema: openAPISchema is not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defs, err := source.ParseDefinitions("x.yaml", []byte(defYAML("Thing", c.schema)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ModelOf(defs[0])
			var se *source.Error
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestNeverOverwritesHandWrittenCode: a file without the header is left
// alone and the run fails; generated files of an earlier run are replaced
// or removed; Prune leaves folders with hand-written files.
func TestNeverOverwritesHandWrittenCode(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "thing")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	hand := "package thing\n\n// Written by hand.\nfunc (in *ThingSpec) Special() {}\n"
	write(t, filepath.Join(pkg, "zz_generated.deepcopy.go"), hand)
	def := filepath.Join(dir, "thing.yaml")
	write(t, def, defYAML("Thing", `{"type": "object", "properties": {"a": {"type": "string"}}}`))

	err := Run([]string{def}, Options{Out: dir})
	if !errors.Is(err, ErrHandWritten) {
		t.Fatalf("want ErrHandWritten, got %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(pkg, "zz_generated.deepcopy.go")); string(got) != hand {
		t.Fatal("the hand-written file was changed")
	}
	if _, err := os.Stat(filepath.Join(pkg, "zz_generated.types.go")); !os.IsNotExist(err) {
		t.Fatal("files were written although the run was refused")
	}

	// Once the hand-written file moves away, generation succeeds; a stale
	// generated file is removed, a hand-written file next to it is kept.
	if err := os.Rename(filepath.Join(pkg, "zz_generated.deepcopy.go"), filepath.Join(pkg, "special.go")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(pkg, "zz_generated.old.go"), "// "+Header+"\n\npackage thing\n")
	if err := Run([]string{def}, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pkg, "zz_generated.old.go")); !os.IsNotExist(err) {
		t.Error("a stale generated file was kept")
	}
	if got, _ := os.ReadFile(filepath.Join(pkg, "special.go")); string(got) != hand {
		t.Error("a hand-written file was changed")
	}

	// Prune: "thing" holds a hand-written file, "gone" only generated ones.
	gone := filepath.Join(dir, "gone")
	if err := os.MkdirAll(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(gone, "zz_generated.types.go"), "// "+Header+"\n\npackage gone\n")
	removed, err := Prune(dir, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != gone {
		t.Errorf("removed %v, want only %s", removed, gone)
	}
	if _, err := os.Stat(filepath.Join(pkg, "special.go")); err != nil {
		t.Error("Prune removed a folder with hand-written code")
	}
}

func TestIdentifier(t *testing.T) {
	for in, want := range map[string]string{
		"max_connections": "MaxConnections", "endpointURL": "EndpointURL", "v15": "V15", "cidr_block": "CIDRBlock",
		"2x": "X2x", "": "Field", "---": "Field", "foo-bar": "FooBar", "id": "ID", "ünïcode": "NCode",
	} {
		if got := Identifier(in, "Field"); got != want {
			t.Errorf("Identifier(%q) = %q, want %q", in, got, want)
		}
	}
}
