// Command testsum reads `go test -json` streams and chainsaw's JSON report
// and prints what passed and failed, ending with one line of counts:
//
//	tests: N passed, N failed, N skipped
//
// Usage:
//
//	testsum brief FILE.json              one line for one module's go test stream
//	testsum summary REPORTS CHAINSAW.json  the closing table of `make test`
//
// A missing or unreadable report counts as a failure: a suite that did not
// run has not passed. So does a chainsaw run whose status file (written by
// chainsaw_run in hack/lib.sh beside its report) shows a non-zero exit.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type counts struct{ pass, fail, skip int }

func (c *counts) add(o counts) { c.pass += o.pass; c.fail += o.fail; c.skip += o.skip }

type goEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// goTests counts test results (subtests included) of one go test -json
// stream, and lists the failures. A package that failed without a failing
// test (build error, TestMain exit) counts as one failure.
func goTests(path string) (counts, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return counts{}, nil, err
	}
	defer f.Close()
	var c counts
	var failed []string
	pkgFailedTests := map[string]int{}
	pkgFailed := map[string]bool{}
	pkgOutput := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e goEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Test == "" {
			switch e.Action {
			case "fail":
				pkgFailed[e.Package] = true
			case "output":
				if len(pkgOutput[e.Package]) < 20 {
					pkgOutput[e.Package] = append(pkgOutput[e.Package], strings.TrimRight(e.Output, "\n"))
				}
			}
			continue
		}
		switch e.Action {
		case "pass":
			c.pass++
		case "fail":
			c.fail++
			pkgFailedTests[e.Package]++
			failed = append(failed, e.Package+" "+e.Test)
		case "skip":
			c.skip++
		}
	}
	for pkg := range pkgFailed {
		if pkgFailedTests[pkg] == 0 {
			c.fail++
			failed = append(failed, pkg+" (package failed: "+strings.Join(pkgOutput[pkg], " | ")+")")
		}
	}
	return c, failed, sc.Err()
}

// chainsawReport is what chainsaw's JSON report says of each test: its
// status is "passed", "failed" or "skipped" (chainsaw's pkg/report).
type chainsawReport struct {
	Tests []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"tests"`
}

func chainsawTests(path string) (counts, []string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return counts{}, nil, err
	}
	var r chainsawReport
	if err := json.Unmarshal(b, &r); err != nil {
		return counts{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	var c counts
	var failed []string
	for _, t := range r.Tests {
		switch t.Status {
		case "passed":
			c.pass++
		case "skipped":
			c.skip++
		default: // failed, or a status this does not know: never counted as passing
			c.fail++
			failed = append(failed, t.Name)
		}
	}
	if len(r.Tests) == 0 {
		return c, nil, fmt.Errorf("%s: the report lists no test", path)
	}
	return c, failed, nil
}

func line(label string, c counts) string {
	return fmt.Sprintf("%-26s %d passed, %d failed, %d skipped", label+":", c.pass, c.fail, c.skip)
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: testsum brief FILE.json | testsum summary REPORTS CHAINSAW.json")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "brief":
		c, failed, err := goTests(os.Args[2])
		if err != nil {
			fmt.Println("   could not read the test report:", err)
			os.Exit(1)
		}
		for _, f := range failed {
			fmt.Println("   FAIL", f)
		}
		fmt.Println("   " + line("unit", c))
	case "summary":
		os.Exit(summary(os.Args[2], os.Args[3:]))
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

func summary(reports string, chainsaw []string) int {
	var total counts
	var failures []string
	fmt.Println()
	fmt.Println("==================== test summary ====================")
	files, _ := filepath.Glob(filepath.Join(reports, "unit-*.json"))
	sort.Strings(files)
	if len(files) == 0 {
		failures = append(failures, "unit tests: no report (did they run?)")
		total.fail++
	}
	for _, f := range files {
		c, failed, err := goTests(f)
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "unit-"), ".json")
		if err != nil {
			failures = append(failures, name+": "+err.Error())
			total.fail++
			continue
		}
		fmt.Println(line("unit "+strings.ReplaceAll(name, "_", "/"), c))
		failures = append(failures, failed...)
		total.add(c)
	}
	if b, err := os.ReadFile(filepath.Join(reports, "verify.status")); err != nil || strings.TrimSpace(string(b)) != "pass" {
		fmt.Println(line("generated code (verify)", counts{fail: 1}))
		failures = append(failures, "make verify: generated files are stale or verification did not run")
		total.fail++
	} else {
		fmt.Println(line("generated code (verify)", counts{pass: 1}))
		total.pass++
	}
	for _, path := range e2eRuns(chainsaw) {
		c, failed := e2eRun(path)
		fmt.Println(line(e2eLabel(path), c))
		failures = append(failures, failed...)
		total.add(c)
	}
	if len(failures) > 0 {
		fmt.Println()
		fmt.Println("failed:")
		for _, f := range failures {
			fmt.Println("  -", f)
		}
	}
	fmt.Println("======================================================")
	fmt.Printf("tests: %d passed, %d failed, %d skipped\n", total.pass, total.fail, total.skip)
	if total.fail > 0 {
		return 1
	}
	return 0
}

// e2eRuns is the chainsaw runs to sum up: each report given (one that does
// not exist included: a run that wrote none has not passed), and each run
// whose status file (chainsaw_run in hack/lib.sh) lies beside them with no
// report, such as one whose control plane did not start.
func e2eRuns(reports []string) []string {
	var runs []string
	seen := map[string]bool{}
	add := func(run string) {
		if !seen[run] {
			seen[run] = true
			runs = append(runs, run)
		}
	}
	for _, r := range reports {
		add(r)
	}
	for _, r := range reports {
		statuses, _ := filepath.Glob(filepath.Join(filepath.Dir(r), "chainsaw-report*.status"))
		for _, st := range statuses {
			add(strings.TrimSuffix(st, ".status") + ".json")
		}
	}
	sort.Strings(runs)
	return runs
}

// e2eRun reads one chainsaw run: its report's counts and failures, and its
// status file beside it (REPORT.status: chainsaw's exit code, then the lines
// naming what failed). chainsaw's report is written as each test's steps
// end, so a run can fail after them (a test namespace's deletion timing out
// in cleanup) with a report in which every test passed: such a run counts
// one failure more, named by the status file's lines.
func e2eRun(report string) (counts, []string) {
	label := e2eLabel(report)
	code, why, hasStatus := runStatus(strings.TrimSuffix(report, ".json") + ".status")
	c, failed, err := chainsawTests(report)
	if err != nil {
		msg := "e2e: " + err.Error()
		if hasStatus && code != 0 {
			msg = fmt.Sprintf("%s: chainsaw exited %d: %s", label, code, strings.Join(why, "; "))
		}
		return counts{fail: 1}, []string{msg}
	}
	var failures []string
	for _, f := range failed {
		failures = append(failures, "e2e "+f)
	}
	if hasStatus && code != 0 && c.fail == 0 {
		c.fail++
		failures = append(failures, fmt.Sprintf("%s: chainsaw exited %d though its report lists no failed test (a failure after a test's steps, such as its namespace's cleanup): %s",
			label, code, strings.Join(why, "; ")))
	}
	return c, failures
}

// runStatus reads a status file chainsaw_run wrote: the exit code, and the
// lines after it. ok is false when there is none (an older run, or one
// started by hand).
func runStatus(path string) (code int, why []string, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, false
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if _, err := fmt.Sscanf(lines[0], "%d", &code); err != nil {
		return 1, append([]string{"unreadable status file " + path}, lines...), true
	}
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" {
			why = append(why, l)
		}
	}
	return code, why, true
}

// e2eLabel names a chainsaw report in the summary by what its file name adds
// to chainsaw-report: "e2e (chainsaw)" for the shared run,
// "e2e gateway-listeners" for chainsaw-report-gateway-listeners.json.
func e2eLabel(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	if rest, ok := strings.CutPrefix(name, "chainsaw-report-"); ok && rest != "" {
		return "e2e " + rest
	}
	return "e2e (chainsaw)"
}
