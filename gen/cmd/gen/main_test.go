package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The tests run from the gen module's root, so paths in outputs and
// messages are the ones a user of `gen` sees there.
func TestMain(m *testing.M) {
	if err := os.Chdir("../.."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run with -update to accept it):\n--- got\n%s", path, got)
	}
}

func gen(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

// The test modules' definitions; gen/generate.sh generates typed Go
// (gen/testkinds) from these golden files.
var terraformGoldens = []struct {
	module string
	args   []string
}{
	{"vpc", []string{"--name", "network", "--kind", "Network", "--source-kind", "OCIRepository", "--source-name", "infra-modules", "--path", "./modules/vpc", "--approve-plan", "auto", "--destroy-on-delete"}},
	{"dnszone", []string{"--name", "zone", "--kind", "Zone", "--source-name", "infra-modules", "--path", "./modules/dnszone"}},
	{"database", []string{"--kind", "Database", "--source-name", "infra-modules", "--source-namespace", "platform", "--path", "./modules/database", "--approve-plan", "auto"}},
}

func TestGoldenFromTerraform(t *testing.T) {
	for _, g := range terraformGoldens {
		t.Run(g.module, func(t *testing.T) {
			dir := filepath.Join("testdata", "terraform", g.module)
			out, errOut, code := gen(t, append(append([]string{"from-terraform"}, g.args...), dir)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, filepath.Join(dir, "definition.golden.yaml"), []byte(out))
		})
	}
}

func TestGoldenFromHelm(t *testing.T) {
	out, errOut, code := gen(t, "from-helm", "--chart-kind", "OCIRepository", "--chart-name", "redis-chart", "testdata/helm/redis")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, filepath.Join("testdata", "helm", "redis", "definition.golden.yaml"), []byte(out))
}

func TestGoldenCRD(t *testing.T) {
	out, errOut, code := gen(t, "crd", "../examples/helm/backend-form/postgres.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, filepath.Join("cmd", "gen", "testdata", "postgres-crd.golden.yaml"), []byte(out))
}

// Flags may follow the arguments, and the definitions flow through types.
func TestTypesFlagsAfterArguments(t *testing.T) {
	out := t.TempDir()
	_, errOut, code := gen(t, "types", "../examples/helm/backend-form/bucket.yaml", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "bucket", "zz_generated.types.go")); err != nil {
		t.Fatal(err)
	}
}

func TestHelp(t *testing.T) {
	out, _, code := gen(t, "help")
	if code != 0 || !strings.Contains(out, "from-terraform") {
		t.Fatalf("help: exit %d:\n%s", code, out)
	}
	for _, c := range commands {
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}} {
			out, _, code := gen(t, args...)
			if code != 0 || !strings.Contains(out, "Example:\n  gen "+c.name) || !strings.Contains(out, "Flags:") {
				t.Errorf("%v: exit %d, no example:\n%s", args, code, out)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	tmp := t.TempDir()
	badVar := filepath.Join(tmp, "badvar")
	if err := os.MkdirAll(badVar, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badVar, "variables.tf"), []byte("variable \"ok\" {}\n\nvariable \"Bad-Name\" {\n  type = string\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tuple := filepath.Join(tmp, "tuple")
	if err := os.MkdirAll(tuple, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tuple, "main.tf"), []byte("variable \"pair\" {\n  type = tuple([string, number])\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"types"}, 2, "types needs at least one DEFINITION.yaml"},
		{[]string{"crd", "a", "b"}, 2, "crd needs exactly one"},
		{[]string{"from-terraform", badVar}, 1, filepath.Join(badVar, "variables.tf") + `:3: variable Bad-Name: "Bad-Name" is not a valid variable name for a Terraform kind`},
		{[]string{"from-terraform", tuple}, 1, filepath.Join(tuple, "main.tf") + ":2: variable pair.type: tuple([string,number]): a tuple of different element types cannot be expressed"},
		{[]string{"from-helm", "testdata/helm/bad-ref"}, 1, "testdata/helm/bad-ref/values.schema.json:5: openAPISchema.properties[image].$ref: only local references"},
		{[]string{"from-helm", "testdata/helm/bad-oneof"}, 1, "testdata/helm/bad-oneof/values.schema.json:5: openAPISchema.properties[storage].oneOf: a oneOf of object schemas cannot be expressed"},
		{[]string{"from-helm", "testdata/helm/bad-tuple"}, 1, "testdata/helm/bad-tuple/values.schema.json:4: openAPISchema.properties[pair].items: a list of item schemas (tuple validation) is not supported"},
		{[]string{"from-helm", "testdata/helm/bad-json"}, 1, "testdata/helm/bad-json/values.schema.json:4: openAPISchema: openAPISchema is not valid JSON"},
		{[]string{"from-terraform", "--bogus", "x"}, 2, "flag provided but not defined: -bogus"},
	}
	for _, c := range cases {
		_, errOut, code := gen(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("gen %v: exit %d, want %d and an error containing\n  %s\ngot:\n  %s", c.args, code, c.code, c.want, errOut)
		}
	}
}
