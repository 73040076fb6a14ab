// Package measure holds what the benchmark commands share: waiting for a
// condition, parallel requests, a controller's API writes from its metrics,
// and a process's peak resident set.
package measure

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Client connects to the control plane of kubeconfig with the client-side
// rate limit qps and burst (qps -1: unthrottled) and a scheme of the
// built-in kinds and those adders add.
func Client(kubeconfig string, qps float32, burst int, adders ...func(*runtime.Scheme) error) (*rest.Config, *runtime.Scheme, client.Client) {
	// The clients' caches and watchers log nothing worth reading here.
	ctrllog.SetLogger(logr.Discard())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Check(err)
	cfg.QPS, cfg.Burst = qps, burst
	scheme := runtime.NewScheme()
	Check(clientgoscheme.AddToScheme(scheme))
	for _, add := range adders {
		Check(add(scheme))
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	Check(err)
	return cfg, scheme, c
}

// APIServerMetrics scrapes the API server's own metrics.
func APIServerMetrics(ctx context.Context, cfg *rest.Config) []Sample {
	return ParseMetrics(bytes.NewReader(APIServerMetricsText(ctx, cfg)))
}

// APIServerMetricsText is the API server's /metrics as it serves them.
func APIServerMetricsText(ctx context.Context, cfg *rest.Config) []byte {
	cs, err := kubernetes.NewForConfig(cfg)
	Check(err)
	b, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	Check(err)
	return b
}

// WaitFor polls cond every 100ms and exits the process when it does not hold
// within timeout.
func WaitFor(what string, timeout time.Duration, cond func() bool) {
	Poll(what, timeout, 100*time.Millisecond, cond)
}

// ScrapeEvery is how often the bench may scrape a controller's metrics while
// it waits: a scrape costs the controller a series for each object it
// manages (cozystack_resource_ready), some 50 MB of allocations at 100,000
// instances, so polling one ten times a second would weigh on what is
// measured (Prometheus scrapes every 15 to 60 s).
const ScrapeEvery = time.Second

// Poll asks cond every interval until it holds, or exits the bench after
// timeout, saying what it waited for.
func Poll(what string, timeout, every time.Duration, cond func() bool) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(every) {
		if cond() {
			return
		}
	}
	fmt.Fprintf(os.Stderr, "timed out waiting for %s\n", what)
	os.Exit(1)
}

// Parallel calls f(0..n-1) from workers goroutines.
func Parallel(n, workers int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Writes sums a controller's mutating API requests from its metrics URL.
func Writes(url string) int {
	resp, err := http.Get(url)
	Check(err)
	defer resp.Body.Close()
	total := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "rest_client_requests_total{") {
			continue
		}
		for _, m := range []string{`"POST"`, `"PUT"`, `"PATCH"`, `"DELETE"`} {
			if strings.Contains(l, m) {
				f := strings.Fields(l)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				total += int(v)
			}
		}
	}
	return total
}

// Settled waits until the write count of the metrics URLs holds still for 5
// seconds, and returns it.
func Settled(urls ...string) int {
	sum := func() int {
		t := 0
		for _, u := range urls {
			t += Writes(u)
		}
		return t
	}
	w := sum()
	for since := time.Now(); time.Since(since) < 5*time.Second; time.Sleep(ScrapeEvery) {
		if x := sum(); x != w {
			w, since = x, time.Now()
		}
	}
	return w
}

// Check exits the process on an error.
func Check(err error) {
	if err != nil {
		b, _ := json.Marshal(err.Error())
		fmt.Fprintln(os.Stderr, "error:", string(b))
		os.Exit(1)
	}
}

// Quiet waits for the machine to be quiet before a measurement starts (the
// API server builds its OpenAPI documents for a while after CRDs are
// installed, controllers fill their caches), so that a raw capacity and the
// pipeline it is compared with are measured on the same idle machine, and
// says how long it waited.
func Quiet(what string) {
	waited, busy := WaitQuiet(0.15, time.Minute)
	fmt.Printf("  quiet before %s: %.0f%% of the CPU busy after %.0fs; one core's speed: %.0f decodes/s\n",
		what, 100*busy, waited.Seconds(), CoreSpeed(time.Second))
}

// probeDoc is the fixed JSON document CoreSpeed decodes.
var probeDoc = func() []byte {
	doc := map[string]any{}
	for i := range 50 {
		doc[fmt.Sprintf("key%d", i)] = map[string]any{"n": i, "s": "a string value of some length", "l": []any{1, 2, 3, "x"}}
	}
	b, err := json.Marshal(doc)
	Check(err)
	return b
}()

// CoreSpeed is how many times one goroutine decodes a fixed JSON document
// per second over d: the speed of one of the machine's cores at that moment.
// On a shared virtual machine it moves by a third or more within a minute
// with nothing else running, and every phase's time moves with it.
func CoreSpeed(d time.Duration) float64 {
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		var v map[string]any
		Check(json.Unmarshal(probeDoc, &v))
		n++
	}
	return float64(n) / time.Since(start).Seconds()
}
