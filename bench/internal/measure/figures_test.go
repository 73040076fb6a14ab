package measure

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEfficiency(t *testing.T) {
	for _, tt := range []struct {
		writes   int
		raw, all time.Duration
		want     float64
	}{
		{3, 5 * time.Second, 15 * time.Second, 1},
		{3, 5200 * time.Millisecond, 42800 * time.Millisecond, 0.3645},
		{2, time.Second, 4 * time.Second, 0.5},
		{3, time.Second, 0, 0},
	} {
		got := Efficiency(tt.writes, tt.raw, tt.all)
		if got < tt.want-0.001 || got > tt.want+0.001 {
			t.Errorf("Efficiency(%d, %s, %s) = %.4f, want %.4f", tt.writes, tt.raw, tt.all, got, tt.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	for _, tt := range []struct {
		v, target float64
		higher    bool
		want      string
	}{
		{0.8, 0.8, true, "met"}, {0.79, 0.8, true, "missed"},
		{150, 150, false, "met"}, {151, 150, false, "missed"}, {0, 0, false, "met"}, {1, 0, false, "missed"},
	} {
		if got := Verdict(tt.v, tt.target, tt.higher); got != tt.want {
			t.Errorf("Verdict(%v, %v, %v) = %s, want %s", tt.v, tt.target, tt.higher, got, tt.want)
		}
	}
}

const exposition = `# HELP rest_client_requests_total Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:22443",method="GET"} 17
rest_client_requests_total{code="201",host="127.0.0.1:22443",method="POST"} 2000
rest_client_requests_total{code="200",host="127.0.0.1:22443",method="PATCH"} 1999
rest_client_requests_total{code="409",host="127.0.0.1:22443",method="PATCH"} 1
controller_runtime_reconcile_total{controller="cozystack-helm",result="success"} 4000
controller_runtime_reconcile_total{controller="cozystack-helm-definitions",result="success"} 3
workqueue_depth{controller="cozystack-helm",name="cozystack-helm"} 0
odd{a="x,y",b="z"} 2.5
process_resident_memory_bytes 1.2e+08
broken{ 3
`

func TestParseMetrics(t *testing.T) {
	s := ParseMetrics(strings.NewReader(exposition))
	if got := WriteCount(s); got != 4000 {
		t.Errorf("writes %d, want 4000", got)
	}
	if got := Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": "cozystack-helm"}); got != 4000 {
		t.Errorf("reconciles %v, want 4000", got)
	}
	if got := Sum(s, "odd", map[string]string{"a": "x,y", "b": "z"}); got != 2.5 {
		t.Errorf("quoted comma: %v", got)
	}
	if got := Sum(s, "process_resident_memory_bytes", nil); got != 1.2e8 {
		t.Errorf("unlabelled: %v", got)
	}
	if got := Sum(s, "broken", nil); got != 0 {
		t.Errorf("malformed line read as %v", got)
	}
}

func TestKVAndVmHWM(t *testing.T) {
	kv := KV("helm=1, appdef=2,,bad")
	if len(kv) != 2 || kv[0] != [2]string{"helm", "1"} || kv[1] != [2]string{"appdef", "2"} {
		t.Fatalf("KV: %v", kv)
	}
	mib, err := ParseVmHWM("Name:\tx\nVmPeak:\t 9 kB\nVmHWM:\t  153600 kB\n")
	if err != nil || mib != 150 {
		t.Fatalf("VmHWM %v %v", mib, err)
	}
	if _, err := ParseVmHWM("Name: x\n"); err == nil {
		t.Fatal("missing VmHWM accepted")
	}
}

func TestCPUTimes(t *testing.T) {
	busy, total, err := CPUTimes("cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 1 2 3 4\n")
	if err != nil {
		t.Fatal(err)
	}
	if busy != 160 || total != 1000 {
		t.Fatalf("busy %d total %d, want 160 of 1000 (idle and iowait are not busy)", busy, total)
	}
	if _, _, err := CPUTimes("intr 1 2 3\n"); err == nil {
		t.Fatal("a /proc/stat without a cpu line parsed")
	}
}

func TestParseProcessCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250, stime 50 ticks.
	stat := "4242 (kube api) x) S 1 4242 4242 0 -1 4194560 9000 0 0 0 250 50 0 0 20 0 12 0 100 0\n"
	got, err := ParseProcessCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Fatalf("ParseProcessCPU = %v, want %v", got, want)
	}
	for _, bad := range []string{"4242 kube S 1", "4242 (kube) S 1 2 3", "4242 (kube) S 1 4242 4242 0 -1 4194560 9000 0 0 0 x 50"} {
		if _, err := ParseProcessCPU(bad); err == nil {
			t.Errorf("ParseProcessCPU(%q): want an error", bad)
		}
	}
}

func TestRequestMix(t *testing.T) {
	before := ParseMetrics(strings.NewReader(`
apiserver_request_total{code="201",resource="benches",verb="POST"} 10
apiserver_request_total{code="200",resource="benches",subresource="status",verb="PUT"} 4
apiserver_request_total{code="200",resource="benches",verb="WATCH"} 3
`))
	after := ParseMetrics(strings.NewReader(`
apiserver_request_total{code="201",resource="benches",verb="POST"} 110
apiserver_request_total{code="409",resource="benches",verb="POST"} 50
apiserver_request_total{code="200",resource="benches",subresource="status",verb="PUT"} 104
apiserver_request_total{code="200",resource="benches",verb="WATCH"} 900
apiserver_request_total{code="201",resource="events",verb="POST"} 100
apiserver_request_total{code="200",resource="leases",verb="GET"} 0.5
`))
	got := RequestMix(before, after, 100)
	if want := "POST benches 1.50, POST events 1.00, PUT benches/status 1.00"; got != want {
		t.Fatalf("RequestMix = %q, want %q", got, want)
	}
}

func TestMix(t *testing.T) {
	after := ParseMetrics(strings.NewReader(`
cozystack_object_writes_total{controller="gateway-certs",kind="Certificate",outcome="created"} 90
cozystack_object_writes_total{controller="gateway-certs",kind="Issuer",outcome="created"} 10
cozystack_object_writes_total{controller="gateway-certs",kind="Issuer",outcome="updated"} 10
rest_client_requests_total{code="201",host="h",method="POST"} 20
rest_client_requests_total{code="200",host="h",method="PATCH"} 110
rest_client_requests_total{code="409",host="h",method="PATCH"} 10
`))
	if got, want := Mix(nil, after, 10, "cozystack_object_writes_total", "kind", "outcome"),
		"Certificate created 9.00, Issuer created 1.00, Issuer updated 1.00"; got != want {
		t.Fatalf("Mix by kind, outcome = %q, want %q", got, want)
	}
	if got, want := Mix(nil, after, 10, "rest_client_requests_total", "method"), "PATCH 12.00, POST 2.00"; got != want {
		t.Fatalf("Mix by method = %q, want %q", got, want)
	}
}

func TestMeans(t *testing.T) {
	before := ParseMetrics(strings.NewReader(`
apiserver_watch_list_duration_seconds_sum{resource="benches",scope="cluster"} 1
apiserver_watch_list_duration_seconds_count{resource="benches",scope="cluster"} 1
`))
	after := ParseMetrics(strings.NewReader(`
apiserver_watch_list_duration_seconds_bucket{resource="benches",scope="cluster",le="1"} 1
apiserver_watch_list_duration_seconds_sum{resource="benches",scope="cluster"} 5
apiserver_watch_list_duration_seconds_count{resource="benches",scope="cluster"} 3
apiserver_watch_list_duration_seconds_sum{resource="helmreleases",scope="cluster"} 4.1
apiserver_watch_list_duration_seconds_count{resource="helmreleases",scope="cluster"} 1
apiserver_watch_list_duration_seconds_sum{resource="namespaces",scope="cluster"} 0.5
apiserver_watch_list_duration_seconds_count{resource="namespaces",scope="cluster"} 0
apiserver_watch_list_duration_seconds_sum{resource="leases",scope="cluster"} 0.004
apiserver_watch_list_duration_seconds_count{resource="leases",scope="cluster"} 2
`))
	if got, want := Means(before, after, "apiserver_watch_list_duration_seconds", "resource"),
		"helmreleases 4.10s (1), benches 2.00s (2)"; got != want {
		t.Fatalf("Means = %q, want %q", got, want)
	}
	if got := Means(after, after, "apiserver_watch_list_duration_seconds", "resource"); got != "" {
		t.Fatalf("Means with nothing observed = %q, want none", got)
	}
}

func TestFlowMix(t *testing.T) {
	after := ParseMetrics(strings.NewReader(`
apiserver_flowcontrol_dispatched_requests_total{flow_schema="service-accounts",priority_level="workload-low"} 300
apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 100
apiserver_flowcontrol_dispatched_requests_total{flow_schema="leader-election",priority_level="leader-election"} 0.5
`))
	if got, want := FlowMix(nil, after, 100), "service-accounts/workload-low 3.00, exempt/exempt 1.00"; got != want {
		t.Fatalf("FlowMix = %q, want %q", got, want)
	}
}

func TestMemoryLimit(t *testing.T) {
	limits := "appdef=180, helm=256,gateway-listeners=180,gateway=99"
	for _, c := range []struct {
		name string
		mib  float64
		ok   bool
	}{
		{"helm", 256, true},
		{"helm-restarted", 256, true},
		{"helm-s1", 256, true},
		{"appdef", 180, true},
		{"gateway-listeners", 180, true},
		{"gateway-certs", 99, true},
		{"helmet", 0, false},
		{"kro", 0, false},
	} {
		mib, ok := MemoryLimit(limits, c.name)
		if mib != c.mib || ok != c.ok {
			t.Errorf("MemoryLimit(%q) = %v, %v; want %v, %v", c.name, mib, ok, c.mib, c.ok)
		}
	}
}

func TestProcesses(t *testing.T) {
	got := Processes("apiserver=10, etcd=11", "", "helm=12")
	want := []Process{{"apiserver", 10}, {"etcd", 11}, {"helm", 12}}
	if len(got) != len(want) {
		t.Fatalf("Processes = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Processes = %v, want %v", got, want)
		}
	}
}

func TestScrapeOnly(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Query()["name[]"]
		fmt.Fprint(w, `# TYPE workqueue_depth gauge
workqueue_depth{name="cozystack-helm"} 3
controller_runtime_reconcile_total{controller="cozystack-helm",result="success"} 7
cozystack_resource_ready{kind="Bench",name="app-1",namespace="t",status="True"} 1
workqueue_depth_other 9
`)
	}))
	defer srv.Close()
	got, err := ScrapeOnly(srv.URL, "workqueue_depth", "controller_runtime_reconcile_total")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"workqueue_depth", "controller_runtime_reconcile_total"}; !slices.Equal(asked, want) {
		t.Errorf("asked for %v, want %v", asked, want)
	}
	if len(got) != 2 || Sum(got, "workqueue_depth", nil) != 3 ||
		Sum(got, "controller_runtime_reconcile_total", map[string]string{"controller": "cozystack-helm"}) != 7 {
		t.Errorf("ScrapeOnly kept %v, want the depth (3) and the reconciles (7) alone", got)
	}
	all, err := Scrape(srv.URL)
	if err != nil || len(all) != 4 || asked != nil {
		t.Errorf("Scrape: %d samples (%v), asked %v; want all 4, no names asked", len(all), err, asked)
	}
}
