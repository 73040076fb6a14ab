package testenv

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Controller is a controller binary running against the test API server.
type Controller struct {
	Cmd *exec.Cmd
	// Metrics is the address of its Prometheus endpoint.
	Metrics string
}

// BuildController builds the controller module in dir (its main package at
// the module root) into a temporary folder and returns the binary's path.
func BuildController(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(abs))
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", dir, err, out)
	}
	return bin
}

// WriteKubeconfig writes an administrator kubeconfig for the API server.
func (e *Env) WriteKubeconfig(t *testing.T) string {
	t.Helper()
	kc, err := e.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// StartController runs bin with the usual flags plus args and waits until it
// reports ready. The process is killed when the test ends.
func StartController(t *testing.T, bin, kubeconfig string, args ...string) *Controller {
	t.Helper()
	metrics, probes := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig,
		"--metrics-bind-address", metrics, "--health-probe-bind-address", probes}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &Controller{Cmd: cmd, Metrics: metrics}
	t.Cleanup(c.Kill)
	name := filepath.Base(bin)
	Eventually(t, 30*time.Second, func() (bool, string, error) {
		resp, err := http.Get("http://" + probes + "/readyz")
		if err != nil {
			return false, fmt.Sprintf("%s is not ready: %v", name, err), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("%s is not ready: /readyz answers %s", name, resp.Status), nil
	})
	return c
}

// Kill stops the process at once (SIGKILL), as a crash or an eviction would.
func (c *Controller) Kill() {
	if c.Cmd.ProcessState != nil {
		return
	}
	_ = c.Cmd.Process.Signal(syscall.SIGKILL)
	_, _ = c.Cmd.Process.Wait()
}

// Writes is the number of mutating API requests (POST, PUT, PATCH, DELETE)
// the controller has made, from its rest_client_requests_total metric.
func (c *Controller) Writes(t *testing.T) int {
	t.Helper()
	return sum(c.writesBySeries(t))
}

// writesBySeries is the controller's mutating requests per
// rest_client_requests_total series (code, host, method).
func (c *Controller) writesBySeries(t *testing.T) map[string]int {
	t.Helper()
	resp, err := http.Get("http://" + c.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		mutating := false
		for _, m := range []string{`method="POST"`, `method="PUT"`, `method="PATCH"`, `method="DELETE"`} {
			mutating = mutating || strings.Contains(line, m)
		}
		if !mutating {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.Join(f[:len(f)-1], " ")] = int(v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// KillMidWay starts the controller at bin with args (throttled, so that its
// work takes a while), waits up to a minute until progress reports at least
// at, and kills it (SIGKILL). The test fails unless the kill landed mid-way:
// some, but not all, of total done. what names the counted work in messages
// ("Gateways written"). It returns how much was done.
func KillMidWay(t *testing.T, bin, kubeconfig string, args []string, progress func() int, at, total int, what string) int {
	t.Helper()
	c := StartController(t, bin, kubeconfig, args...)
	// Not Eventually: running out of time is no failure by itself; the
	// mid-way check below decides.
	for deadline := time.Now().Add(time.Minute); progress() < at && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	c.Kill()
	done := progress()
	if done == 0 || done >= total {
		t.Fatalf("the kill did not land mid-way: %d of %d %s", done, total, what)
	}
	t.Logf("killed the controller with %d of %d %s", done, total, what)
	return done
}

// AssertIdle waits (up to two minutes) until the controller has made no
// write for five seconds, then fails the test if it makes any API write over
// window (two resync periods of a settled system), naming the requests it
// made.
func (c *Controller) AssertIdle(t *testing.T, window time.Duration) {
	t.Helper()
	before := c.settledWrites(t, 2*time.Minute, 5*time.Second)
	// The window is what is under test: the settled controller is given
	// two resync periods to make a write, and must not. A sleep rather
	// than Consistently, so that a failure names every write it made.
	time.Sleep(window)
	after := c.writesBySeries(t)
	var made []string
	total := 0
	for series, n := range after {
		if d := n - before[series]; d != 0 {
			made = append(made, fmt.Sprintf("%d × %s", d, series))
			total += d
		}
	}
	if total != 0 {
		sort.Strings(made)
		t.Fatalf("the settled controller made %d API writes over two resync periods:\n%s", total, strings.Join(made, "\n"))
	}
}

// settledWrites waits up to timeout until the controller has made no write
// for quiet, and returns its writes per series then.
func (c *Controller) settledWrites(t *testing.T, timeout, quiet time.Duration) map[string]int {
	t.Helper()
	var series map[string]int
	Settled(t, timeout, quiet, func() int {
		series = c.writesBySeries(t)
		return sum(series)
	})
	return series
}

func sum(m map[string]int) int {
	total := 0
	for _, v := range m {
		total += v
	}
	return total
}

// Harness is what a controller's restart test runs against: a private API
// server serving the test's CRDs (stopped when the test ends), the
// controller built from the module in the current folder, an administrator
// kubeconfig for it, and a client whose scheme knows the built-in kinds and
// those each addTo registers.
type Harness struct {
	Env        *Env
	Client     client.Client
	Binary     string
	Kubeconfig string
}

// NewHarness starts the API server with crds, builds the controller and
// makes the client.
func NewHarness(t *testing.T, crds []*apiextensionsv1.CustomResourceDefinition, addTo ...func(*runtime.Scheme) error) Harness {
	t.Helper()
	env, err := Start(crds...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, addTo...) {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return Harness{Env: env, Client: c, Binary: BuildController(t, "."), Kubeconfig: env.WriteKubeconfig(t)}
}
