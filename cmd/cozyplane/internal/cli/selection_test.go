package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestActOnSeveral(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    int
		wantOut string
		// suspended: the instances of tenant-a that end up with the suspend annotation.
		suspended []string
	}{
		{"--all", []string{"suspend", "postgres", "--all", "-n", "tenant-a", "--timeout", "0"}, 0, "", []string{"billing", "orders"}},
		{"-l", []string{"suspend", "postgres", "-l", "team=shop", "-n", "tenant-a", "--timeout", "0"}, 0, "", []string{"orders"}},
		{"-l -A", []string{"suspend", "pg", "-l", "team=shop", "-A", "--timeout", "0"}, 0, "", []string{"orders"}},
		{"nothing selected", []string{"suspend", "postgres", "-l", "team=none", "-A"}, ExitNotFound, "no postgres matches -l team=none in any namespace", nil},
		{"each times out", []string{"reconcile", "postgres", "--all", "-n", "tenant-a", "--timeout", "600ms"}, ExitTimeout, "2 of 2 instances failed", nil},
		{"each refused", []string{"approve", "postgres", "--all", "-n", "tenant-a"}, ExitFailure, "which has no plans to approve", nil},
		{"name and --all", []string{"reconcile", "postgres/orders", "--all", "-n", "tenant-a"}, ExitUsage, "give only its KIND", nil},
		{"--all and -l", []string{"reconcile", "postgres", "--all", "-l", "a=b"}, ExitUsage, "give one", nil},
		{"-A alone", []string{"reconcile", "postgres/orders", "-A"}, ExitUsage, "-A needs --all or -l", nil},
		{"KIND alone", []string{"reconcile", "postgres", "-n", "tenant-a"}, ExitUsage, "is not KIND/NAME", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd, client := fakeRoot(t, &out, &errOut)
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			var printed bytes.Buffer
			code := exitWith(&printed, err)
			all := out.String() + errOut.String() + printed.String()
			if code != tc.want || !strings.Contains(all, tc.wantOut) {
				t.Fatalf("exit %d, want %d; output lacks %q:\n%s", code, tc.want, tc.wantOut, all)
			}
			var suspended []string
			list, lerr := client.Resource(postgresGVR).Namespace("tenant-a").List(context.Background(), metav1.ListOptions{})
			if lerr != nil {
				t.Fatal(lerr)
			}
			for _, i := range list.Items {
				if i.GetAnnotations()["apps.cozystack.io/suspend"] == "true" {
					suspended = append(suspended, i.GetName())
				}
			}
			if strings.Join(suspended, ",") != strings.Join(tc.suspended, ",") {
				t.Errorf("suspended %v, want %v", suspended, tc.suspended)
			}
		})
	}
}

func TestReconcileForceReset(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd, client := fakeRoot(t, &out, &errOut)
	cmd.SetArgs([]string{"reconcile", "postgres/orders", "-n", "tenant-a", "--force", "--reset", "--timeout", "0"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	u, err := client.Resource(postgresGVR).Namespace("tenant-a").Get(context.Background(), "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := u.GetAnnotations()
	at := a["reconcile.fluxcd.io/requestedAt"]
	if at == "" || a["reconcile.fluxcd.io/forceAt"] != at || a["reconcile.fluxcd.io/resetAt"] != at {
		t.Errorf("annotations %v", a)
	}
	if !strings.Contains(errOut.String(), "with reconcile.fluxcd.io/forceAt, reconcile.fluxcd.io/requestedAt, reconcile.fluxcd.io/resetAt=") {
		t.Errorf("log: %s", errOut.String())
	}

	out.Reset()
	errOut.Reset()
	cmd, client = fakeRoot(t, &out, &errOut)
	cmd.SetArgs([]string{"reconcile", "redis/cache", "-n", "tenant-b", "--force"})
	err = cmd.Execute()
	if code := ExitCode(err); code != ExitFailure || !strings.Contains(err.Error(), "reports no backend yet") {
		t.Errorf("no backend: exit %d, %v", code, err)
	}
	u, _ = client.Resource(redisGVR).Namespace("tenant-b").Get(context.Background(), "cache", metav1.GetOptions{})
	if len(u.GetAnnotations()) != 0 {
		t.Errorf("refused, yet annotated: %v", u.GetAnnotations())
	}
}
