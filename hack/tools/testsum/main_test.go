package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

func TestE2ERunCountsAFailureTheReportMissed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	passed := `{"tests": [{"name": "a", "status": "passed"}, {"name": "b", "status": "passed"}]}`
	// Every test passed in the report, but chainsaw failed one in cleanup.
	write("chainsaw-report-x.json", passed)
	write("chainsaw-report-x.status", "1\n    --- FAIL: chainsaw/tests/chainsaw/x/b[b] (31.00s)\nDone with failures.\n")
	// A clean run.
	write("chainsaw-report.json", passed)
	write("chainsaw-report.status", "0\nDone.\n")
	// A run whose control plane did not start: a status file and no report.
	write("chainsaw-report-y.status", "1\nnot run: the control plane did not start\n")
	// A report with no status file (chainsaw run by hand) is read as before.
	write("chainsaw-report-z.json", passed)

	given := []string{filepath.Join(dir, "chainsaw-report.json"), filepath.Join(dir, "chainsaw-report-x.json"), filepath.Join(dir, "chainsaw-report-z.json")}
	runs := e2eRuns(given)
	want := []string{filepath.Join(dir, "chainsaw-report-x.json"), filepath.Join(dir, "chainsaw-report-y.json"), filepath.Join(dir, "chainsaw-report-z.json"), filepath.Join(dir, "chainsaw-report.json")}
	if !reflect.DeepEqual(runs, want) {
		t.Fatalf("runs = %v, want %v", runs, want)
	}
	for _, tc := range []struct {
		run    string
		counts counts
		failed string
	}{
		{"chainsaw-report-x.json", counts{pass: 2, fail: 1}, "e2e x: chainsaw exited 1 though its report lists no failed test (a failure after a test's steps, such as its namespace's cleanup): --- FAIL: chainsaw/tests/chainsaw/x/b[b] (31.00s); Done with failures."},
		{"chainsaw-report-y.json", counts{fail: 1}, "e2e y: chainsaw exited 1: not run: the control plane did not start"},
		{"chainsaw-report-z.json", counts{pass: 2}, ""},
		{"chainsaw-report.json", counts{pass: 2}, ""},
	} {
		c, failed := e2eRun(filepath.Join(dir, tc.run))
		if c != tc.counts {
			t.Errorf("%s: counts = %+v, want %+v", tc.run, c, tc.counts)
		}
		if got := strings.Join(failed, "\n"); got != tc.failed {
			t.Errorf("%s: failed = %q, want %q", tc.run, got, tc.failed)
		}
	}
}
