package statusapply

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkStatusWrite writes the first status of b.N Widgets as a backend
// controller writes a new instance's (two conditions, the observed
// generation, the backend's identity), as a server-side apply, as a merge
// patch (Writer.Patch), and as an update of the status subresource (a PUT of
// the object as created, with that status, at its resourceVersion: what the
// API server would do without applying a patch to the stored object), and
// reports the API server's CPU per write: its process's, so run it alone,
// with -benchtime=2000x or so (each write needs a Widget made beforehand,
// outside the figure). Each Widget carries the spec of the bench's instances
// ({"replicas": 1}) and two labels.
func BenchmarkStatusWrite(b *testing.B) {
	for _, mode := range []struct {
		name   string
		patch  bool
		update bool
	}{{"apply", false, false}, {"patch", true, false}, {"update", false, true},
		{"apply-again", false, false}, {"patch-again", true, false}, {"update-again", false, true}} {
		b.Run(mode.name, func(b *testing.B) {
			c := widgetClient(b)
			ctx := context.Background()
			objs := make([]*unstructured.Unstructured, b.N)
			for i := range objs {
				u := &unstructured.Unstructured{}
				u.SetAPIVersion("example.com/v1")
				u.SetKind("Widget")
				u.SetNamespace("default")
				u.SetGenerateName("w-" + mode.name + "-")
				u.SetLabels(map[string]string{"app.kubernetes.io/name": "bench", "tenant": "bench"})
				u.Object["spec"] = map[string]any{"replicas": int64(1)}
				if err := c.Create(ctx, u); err != nil {
					b.Fatal(err)
				}
				objs[i] = u
			}
			sw := Writer{Client: c, FieldManager: "bench", Precondition: true, Patch: mode.patch}
			now := metav1.Now()
			cond := func(t string, s metav1.ConditionStatus) metav1.Condition {
				return metav1.Condition{Type: t, Status: s, Reason: "Progressing", ObservedGeneration: 1, LastTransitionTime: now,
					Message: "waiting for helm-controller to report on HelmRelease bench"}
			}
			part := Part{Conditions: []metav1.Condition{cond("Ready", metav1.ConditionUnknown), cond("Reconciling", metav1.ConditionTrue)},
				AllConditions: true, Fields: map[string]any{"observedGeneration": int64(1),
					"backend": map[string]any{"type": "Helm", "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": "bench"}}}
			status, err := PatchOf(nil, part) // from no status: the status whole
			if err != nil {
				b.Fatal(err)
			}
			pid := apiServerPID(b)
			before := processCPU(b, pid)
			b.ResetTimer()
			for _, u := range objs {
				if mode.update {
					u.SetManagedFields(nil) // the server keeps its own
					u.Object["status"] = status
					if err := c.Status().Update(ctx, u, client.FieldOwner("bench")); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if wrote, err := sw.Write(ctx, u, Of(u), part); err != nil || !wrote {
					b.Fatalf("wrote %v: %v", wrote, err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b, pid)-before).Microseconds())/float64(b.N), "apiserver-µs/write")
		})
	}
}

// apiServerPID is the pid of the kube-apiserver this test process started.
func apiServerPID(b testing.TB) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Skip("no /proc: the API server's CPU cannot be read")
	}
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		comm, fields := statFields(string(stat))
		if comm == "kube-apiserver" && len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(e.Name())
			return pid
		}
	}
	b.Fatal("no kube-apiserver started by this process")
	return 0
}

// processCPU is the CPU time pid has used, user and system.
func processCPU(b testing.TB, pid int) time.Duration {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	// utime and stime, in clock ticks (100 a second on Linux), are the
	// 14th and 15th fields: the 12th and 13th after the command's name.
	_, fields := statFields(string(stat))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// statFields splits /proc/<pid>/stat into the command's name and the
// fields after it (state, ppid, ...).
func statFields(stat string) (string, []string) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", nil
	}
	return stat[open+1 : end], strings.Fields(stat[end+1:])
}
