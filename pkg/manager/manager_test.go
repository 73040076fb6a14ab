package manager

import (
	"flag"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

func TestFlags(t *testing.T) {
	o := NewOptions("cozystack-test")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	o.BindFlags(fs)
	err := fs.Parse([]string{
		"--metrics-bind-address=:9090", "--health-probe-bind-address=:9091", "--leader-elect",
		"--watch-namespaces=a, b,,c", "--resync-period=30m", "--kube-api-qps=12.5",
		"--kube-api-burst=40", "--workers=8",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.MetricsAddr != ":9090" || o.ProbeAddr != ":9091" || !o.LeaderElect || o.ResyncPeriod != 30*time.Minute ||
		o.QPS != 12.5 || o.Burst != 40 || o.Workers != 8 || strings.Join(o.WatchNamespaces, "|") != "a|b|c" {
		t.Fatalf("flags not applied: %+v", o)
	}
	mo := o.ManagerOptions(runtime.NewScheme())
	if mo.LeaderElectionID != "cozystack-test.cozystack.io" || !mo.LeaderElection || len(mo.Cache.DefaultNamespaces) != 3 ||
		*mo.Cache.SyncPeriod != 30*time.Minute || mo.Metrics.BindAddress != ":9090" {
		t.Fatalf("manager options not derived: %+v", mo)
	}
	cfg := o.ApplyTo(&rest.Config{Host: "https://x"})
	if cfg.QPS != 12.5 || cfg.Burst != 40 || cfg.UserAgent != "cozystack-test" {
		t.Fatalf("client limits not applied: %+v", cfg)
	}
}

func TestLeaderElectionTimings(t *testing.T) {
	o := NewOptions("x")
	mo := o.ManagerOptions(runtime.NewScheme())
	if mo.LeaseDuration != nil || mo.RenewDeadline != nil || mo.RetryPeriod != nil {
		t.Fatalf("without the flags the timings are controller-runtime's defaults, got %v %v %v", mo.LeaseDuration, mo.RenewDeadline, mo.RetryPeriod)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--leader-election-lease-duration=60s", "--leader-election-renew-deadline=40s", "--leader-election-retry-period=5s"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	mo = o.ManagerOptions(runtime.NewScheme())
	if *mo.LeaseDuration != time.Minute || *mo.RenewDeadline != 40*time.Second || *mo.RetryPeriod != 5*time.Second {
		t.Fatalf("timings not applied: %v %v %v", *mo.LeaseDuration, *mo.RenewDeadline, *mo.RetryPeriod)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--workers=0"}, "--workers"},
		{[]string{"--resync-period=5s"}, "--resync-period"},
		{[]string{"--kube-api-burst=0"}, "--kube-api-burst"},
		{[]string{"--leader-election-lease-duration=10s"}, "--leader-election-lease-duration (10s) must be longer than --leader-election-renew-deadline (10s)"},
		{[]string{"--leader-election-renew-deadline=2s"}, "--leader-election-renew-deadline (2s) must be longer than 1.2 x --leader-election-retry-period (2s)"},
		{[]string{"--leader-election-retry-period=-1s"}, "must not be negative"},
	}
	for _, tt := range tests {
		o := NewOptions("x")
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		o.BindFlags(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("%v: error %v, want mention of %s", tt.args, err, tt.want)
		}
	}
	o := NewOptions("x")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--kube-api-qps=-1"}); err == nil {
		t.Fatal("negative QPS accepted")
	}
}
