package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestChainsawTestsReadsEachTestsStatus(t *testing.T) {
	// The shape chainsaw v0.2 writes (--report-format JSON).
	report := `{"name": "chainsaw-report", "tests": [
	  {"name": "ok", "status": "passed", "steps": [{"name": "s", "status": "passed"}]},
	  {"name": "broken", "status": "failed", "steps": [{"name": "s", "status": "failed",
	    "operations": [{"type": "assert", "status": "failed", "failure": {"error": "timeout"}}]}]},
	  {"name": "later", "status": "skipped"},
	  {"name": "odd", "status": ""}
	]}`
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte(report), 0o600); err != nil {
		t.Fatal(err)
	}
	c, failed, err := chainsawTests(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := (counts{pass: 1, fail: 2, skip: 1}); c != want {
		t.Errorf("counts = %+v, want %+v", c, want)
	}
	if want := []string{"broken", "odd"}; !reflect.DeepEqual(failed, want) {
		t.Errorf("failed = %v, want %v", failed, want)
	}
}

func TestE2ELabelNamesTheReport(t *testing.T) {
	for path, want := range map[string]string{
		"/r/chainsaw-report.json":                                    "e2e (chainsaw)",
		"/r/chainsaw-report-gateway-listeners.json":                  "e2e gateway-listeners",
		"/r/chainsaw-report-stock-identities.json":                   "e2e stock-identities",
		"/r/chainsaw-report-stock-identities-gateway-listeners.json": "e2e stock-identities-gateway-listeners",
	} {
		if got := e2eLabel(path); got != want {
			t.Errorf("e2eLabel(%s) = %q, want %q", path, got, want)
		}
	}
}
