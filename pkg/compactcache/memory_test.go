package compactcache

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	toolscache "k8s.io/client-go/tools/cache"
)

// benchInstanceJSON is an instance of the bench's kind as the API server sends
// it to the helm controller after its first reconcile (bench/cmd/bench,
// pkg/instance), managed fields dropped (pkg/manager).
const benchInstanceJSON = `{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Bench",
 "metadata": {"name": "app-%05[1]d", "namespace": "tenant-%03[2]d", "uid": "6f1c1f0e-2b1a-4c5e-9d1e-%012[1]d",
  "resourceVersion": "%[3]d", "generation": 1, "creationTimestamp": "2026-11-26T18:00:00Z"},
 "spec": {},
 "status": {"observedGeneration": 1, "displayVersion": "<unknown>",
  "backend": {"type": "Helm", "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": "b-app-%05[1]d"},
  "conditions": [
   {"type": "Ready", "status": "Unknown", "reason": "Progressing", "observedGeneration": 1, "lastTransitionTime": "2026-11-26T18:00:01Z",
    "message": "waiting for helm-controller to report on HelmRelease b-app-%05[1]d"},
   {"type": "Reconciling", "status": "True", "reason": "Progressing", "observedGeneration": 1, "lastTransitionTime": "2026-11-26T18:00:01Z",
    "message": "waiting for helm-controller to report on HelmRelease b-app-%05[1]d"}]}}`

// benchReleaseJSON is the HelmRelease the helm controller writes for it
// (bench/cmd/bench's release, which follows docs/helm-backend.md).
const benchReleaseJSON = `{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
 "metadata": {"name": "b-app-%05[1]d", "namespace": "tenant-%03[2]d", "uid": "0a2c3e4f-5a6b-4c7d-8e9f-%012[1]d",
  "resourceVersion": "%[4]d", "generation": 1, "creationTimestamp": "2026-11-26T18:00:00Z",
  "labels": {"apps.cozystack.io/application.kind": "Bench", "apps.cozystack.io/application.group": "apps.cozystack.io",
   "apps.cozystack.io/application.name": "app-%05[1]d"},
  "annotations": {"cozystack.io/applied-hash.cozystack-helm": "000000000000000000000000"},
  "ownerReferences": [{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Bench", "name": "app-%05[1]d",
   "uid": "6f1c1f0e-2b1a-4c5e-9d1e-%012[1]d", "controller": true, "blockOwnerDeletion": true}]},
 "spec": {"interval": "5m0s", "maxHistory": 5, "chartRef": {"kind": "HelmChart", "name": "bench", "namespace": "cozy-system"},
  "values": {"replicas": 1}, "valuesFrom": [{"kind": "Secret", "name": "cozystack-values"}],
  "install": {"timeout": "10m0s", "strategy": {"name": "RetryOnFailure", "retryInterval": "30s"}},
  "upgrade": {"timeout": "10m0s", "strategy": {"name": "RetryOnFailure", "retryInterval": "30s"}}}}`

// BenchmarkCachedBytes prints what an instance and its HelmRelease cost in an
// informer's store (with its namespace index), decoded as the API server
// sends them and packed: a figure to compare changes by, not a timing.
//
//	go test -run '^$' -bench CachedBytes ./compactcache
func BenchmarkCachedBytes(b *testing.B) {
	const n = 10000
	for _, packed := range []bool{false, true} {
		name := map[bool]string{false: "decoded", true: "packed"}[packed]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				perInstance := cachedBytes(b, n, packed)
				b.ReportMetric(perInstance, "B/instance")
			}
		})
	}
}

// cachedBytes fills two stores (instances, HelmReleases) with n of each and
// returns the live heap they take per instance.
func cachedBytes(b *testing.B, n int, packed bool) float64 {
	b.Helper()
	raw := make([][2][]byte, n)
	for i := range raw {
		for j, f := range []string{benchInstanceJSON, benchReleaseJSON} {
			raw[i][j] = fmt.Appendf(nil, f, i, i%1000, 100000+2*i, 100001+2*i)
		}
	}
	before := liveHeap()
	stores := [2]toolscache.Indexer{}
	for j := range stores {
		stores[j] = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	}
	for i := range raw {
		for j := range stores {
			m := map[string]any{}
			if err := utiljson.Unmarshal(raw[i][j], &m); err != nil {
				b.Fatal(err)
			}
			var obj any = &unstructured.Unstructured{Object: m}
			if packed {
				o, err := Pack(obj.(*unstructured.Unstructured))
				if err != nil {
					b.Fatal(err)
				}
				obj = o
			}
			if err := stores[j].Add(obj); err != nil {
				b.Fatal(err)
			}
		}
	}
	after := liveHeap()
	runtime.KeepAlive(stores)
	runtime.KeepAlive(raw)
	return float64(after-before) / float64(n)
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
