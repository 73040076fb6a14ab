package readymetric

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOneSeriesPerObjectFollowingItsStatus(t *testing.T) {
	expect := func(want string) {
		t.Helper()
		header := "# HELP " + MetricName + " " + "1 for every managed object, labelled with its kind, namespace, name and the status of its Ready condition (True, False or Unknown).\n# TYPE " + MetricName + " gauge\n"
		if err := testutil.CollectAndCompare(gauge, strings.NewReader(header+want), MetricName); err != nil {
			t.Fatal(err)
		}
	}
	Set("Postgres", "tenant-a", "db", "")
	expect(`cozystack_resource_ready{kind="Postgres",name="db",namespace="tenant-a",status="Unknown"} 1` + "\n")

	Set("Postgres", "tenant-a", "db", metav1.ConditionTrue)
	Set("Postgres", "tenant-a", "db", metav1.ConditionTrue)
	Set("Redis", "tenant-a", "cache", metav1.ConditionFalse)
	expect(`cozystack_resource_ready{kind="Postgres",name="db",namespace="tenant-a",status="True"} 1
cozystack_resource_ready{kind="Redis",name="cache",namespace="tenant-a",status="False"} 1
`)

	Forget("Postgres", "tenant-a", "db")
	Forget("Postgres", "tenant-a", "never-seen")
	expect(`cozystack_resource_ready{kind="Redis",name="cache",namespace="tenant-a",status="False"} 1` + "\n")
	Forget("Redis", "tenant-a", "cache")
	if n := testutil.CollectAndCount(gauge); n != 0 {
		t.Fatalf("series left after Forget: %d", n)
	}
}

// A scrape in progress does not hold up the reconcilers that record a status.
func TestSetDuringAScrape(t *testing.T) {
	Set("Postgres", "tenant-a", "one", metav1.ConditionTrue)
	Set("Postgres", "tenant-a", "two", metav1.ConditionTrue)
	defer Forget("Postgres", "tenant-a", "one")
	defer Forget("Postgres", "tenant-a", "two")
	defer Forget("Postgres", "tenant-a", "three")

	// A scraper that took the first series and is slow to take the next.
	ch := make(chan prometheus.Metric)
	collected := make(chan struct{})
	go func() { gauge.Collect(ch); close(collected) }()
	<-ch

	set := make(chan struct{})
	go func() { Set("Postgres", "tenant-a", "three", metav1.ConditionFalse); close(set) }()
	select {
	case <-set:
	case <-time.After(10 * time.Second):
		t.Error("Set waited for the scrape in progress")
	}
	// Let the scrape finish.
	for done := false; !done; {
		select {
		case <-ch:
		case <-collected:
			done = true
		}
	}
	<-set
}
