package ops

import (
	"bytes"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	root := &Node{Kind: "Postgres", Namespace: "t", Name: "orders", Status: "True", Reason: "InstallSucceeded", Message: "Helm install\n succeeded",
		Notes: []string{"last handled reconcile request: r1"}}
	hr := &Node{Kind: "HelmRelease", Namespace: "t", Name: "postgres-orders", Status: "False", Reason: "UpgradeFailed"}
	hr.Add(&Node{Kind: "Secret", Namespace: "t", Name: "s", Condition: "Exists", Status: "True"})
	root.Add(hr, &Node{Kind: "Namespace", Name: "cozy-a", Condition: "Attached", Notes: []string{"n1"}})
	for _, tc := range []struct {
		name  string
		color bool
		want  string
	}{
		{"plain", false, `Postgres t/orders  Ready=True  InstallSucceeded: Helm install succeeded
│   last handled reconcile request: r1
├── HelmRelease t/postgres-orders  Ready=False  UpgradeFailed
│   └── Secret t/s  Exists=True
└── Namespace cozy-a  Attached=-
        n1
`},
		{"color", true, "\x1b[1mPostgres\x1b[0m t/orders  \x1b[32mReady=True\x1b[0m  InstallSucceeded: Helm install succeeded\n" +
			"│   \x1b[90mlast handled reconcile request: r1\x1b[0m\n" +
			"├── \x1b[1mHelmRelease\x1b[0m t/postgres-orders  \x1b[31mReady=False\x1b[0m  UpgradeFailed\n" +
			"│   └── \x1b[1mSecret\x1b[0m t/s  \x1b[32mExists=True\x1b[0m\n" +
			"└── \x1b[1mNamespace\x1b[0m cozy-a  \x1b[33mAttached=-\x1b[0m\n" +
			"        \x1b[90mn1\x1b[0m\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, root, tc.color); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
			if !tc.color && strings.Contains(b.String(), "\x1b") {
				t.Error("escape codes in plain output")
			}
		})
	}
}
