package readymetric

import (
	"fmt"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// BenchmarkScrape is one scrape of a controller's metrics endpoint with
// 100,000 objects' series: what a Prometheus pays each scrape interval.
//
//	go test -run '^$' -bench Scrape ./readymetric
func BenchmarkScrape(b *testing.B) {
	const n = 100000
	for i := range n {
		Set("Bench", fmt.Sprintf("tenant-%03d", i%1000), fmt.Sprintf("app-%06d", i), metav1.ConditionUnknown)
	}
	defer func() {
		for i := range n {
			Forget("Bench", fmt.Sprintf("tenant-%03d", i%1000), fmt.Sprintf("app-%06d", i))
		}
	}()
	h := promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{})
	b.ResetTimer()
	for range b.N {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b.SetBytes(int64(rec.Body.Len()))
		_, _ = io.Copy(io.Discard, rec.Body)
	}
}
