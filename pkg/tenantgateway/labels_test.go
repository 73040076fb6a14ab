package tenantgateway

import (
	"reflect"
	"testing"
)

func TestObjectLabels(t *testing.T) {
	if got := ObjectLabels("cozystack", ""); !reflect.DeepEqual(got, map[string]string{"cozystack.io/gateway": "cozystack", "cozystack.io/tenantgateway": "cozystack"}) {
		t.Fatalf("without managed-by: %v", got)
	}
	a, b := ObjectLabels("x", "y"), ObjectLabels("x", "y")
	a["extra"] = "1"
	if _, shared := b["extra"]; shared {
		t.Fatal("ObjectLabels returns a shared map")
	}
}
