package ops

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestKindsOfAGroupNotServed: on a cluster where no ApplicationDefinition
// serves a kind yet, the apps group is simply empty (through the cached
// discovery the CLI uses), so a TenantGateway can still be traced.
func TestKindsOfAGroupNotServed(t *testing.T) {
	fake := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "gateway.cozystack.io/v1alpha1",
		APIResources: []metav1.APIResource{{Name: "tenantgateways", Kind: "TenantGateway", Namespaced: true}},
	}}}}
	g := &Gatherer{Discovery: memory.NewMemCacheClient(fake)}
	inst, err := g.InstanceKinds()
	if err != nil || len(inst) != 0 {
		t.Fatalf("InstanceKinds = %v, %v; want none and no error", inst, err)
	}
	kinds, err := g.TraceKinds()
	if err != nil || len(kinds) != 1 || kinds[0].Kind != "TenantGateway" {
		t.Fatalf("TraceKinds = %v, %v; want TenantGateway", kinds, err)
	}
}
