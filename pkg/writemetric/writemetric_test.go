package writemetric

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cozyplane/cozyplane/pkg/ssa"
)

func TestOneCounterForEveryController(t *testing.T) {
	Applied("cozystack-helm", "Postgres", ssa.Created)
	Applied("cozystack-helm", "Postgres", ssa.Unchanged)
	Applied("cozystack-helm", "Postgres", ssa.Corrected)
	Count("cozystack-helm", "Postgres", Suspended)
	Applied("cozystack-appdef", "CustomResourceDefinition", ssa.Updated)
	Count("cozystack-gateway-listeners", "HTTPRoute", Deleted)
	Count("cozystack-gateway-listeners", "HTTPRoute", Deleted)

	header := "# HELP " + MetricName + " Objects written, by controller, kind and outcome (created, updated, corrected, adopted, deleted, suspended, resumed, attached, detached, labelled, status).\n# TYPE " + MetricName + " counter\n"
	want := `cozystack_object_writes_total{controller="cozystack-appdef",kind="CustomResourceDefinition",outcome="updated"} 1
cozystack_object_writes_total{controller="cozystack-gateway-listeners",kind="HTTPRoute",outcome="deleted"} 2
cozystack_object_writes_total{controller="cozystack-helm",kind="Postgres",outcome="corrected"} 1
cozystack_object_writes_total{controller="cozystack-helm",kind="Postgres",outcome="created"} 1
cozystack_object_writes_total{controller="cozystack-helm",kind="Postgres",outcome="suspended"} 1
`
	if err := testutil.CollectAndCompare(writes, strings.NewReader(header+want), MetricName); err != nil {
		t.Fatal(err)
	}
	if n := Counted("cozystack-gateway-listeners", "HTTPRoute", Deleted); n != 2 {
		t.Fatalf("Counted = %v, want 2", n)
	}
	if n := Counted("cozystack-helm", "Postgres", "unchanged"); n != 0 {
		t.Fatalf("an unchanged apply counted: %v", n)
	}
}
