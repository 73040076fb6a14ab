package readymetric

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
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

// The series go out sorted as the registry sorts them: by kind, name, then
// namespace (the labels in the order of their names).
func TestCollectInTheRegistrysOrder(t *testing.T) {
	objects := [][2]string{{"b", "x"}, {"a", "y"}, {"a", "x"}, {"c", "a"}}
	for _, o := range objects {
		Set("Redis", o[1], o[0], metav1.ConditionTrue)
		Set("Postgres", o[1], o[0], metav1.ConditionFalse)
		defer Forget("Redis", o[1], o[0])
		defer Forget("Postgres", o[1], o[0])
	}
	ch := make(chan prometheus.Metric, 2*len(objects))
	gauge.Collect(ch)
	close(ch)
	var got []string
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		var vs []string
		for _, l := range d.GetLabel() { // by name: kind, name, namespace, status
			vs = append(vs, l.GetValue())
		}
		got = append(got, strings.Join(vs, "/"))
	}
	want := []string{
		"Postgres/a/x/False", "Postgres/a/y/False", "Postgres/b/x/False", "Postgres/c/a/False",
		"Redis/a/x/True", "Redis/a/y/True", "Redis/b/x/True", "Redis/c/a/True",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("series in the order\n%v\nwant\n%v", got, want)
	}
}
