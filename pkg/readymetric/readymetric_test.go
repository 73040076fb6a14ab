package readymetric

import (
	"strings"
	"testing"

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
