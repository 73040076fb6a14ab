package attach

import (
	"reflect"
	"strings"
	"testing"
)

func TestMayAttach(t *testing.T) {
	tests := []struct {
		owner, ns string
		allowed   bool
		msg       string
	}{
		{"tenant-root", "tenant-root", true, ""},
		{"tenant-root", "cozy-dashboard", true, ""},
		{"tenant-root", "default", true, ""},
		{"tenant-root", "tenant-alice", true, ""},
		{"tenant-root", "tenant-alice-bob", true, ""},
		{"cozy-system", "cozy-dashboard", true, ""},
		{"platform", "tenant-alice", true, ""},
		{"tenant-alice", "tenant-alice", true, ""},
		{"tenant-alice", "tenant-alice-bob", true, ""},
		{"tenant-alice", "tenant-alice-bob-carol", true, ""},
		{"tenant-alice", "cozy-dashboard", false, "only the root tenant's TenantGateway (namespace tenant-root)"},
		{"tenant-alice", "default", false, "shared namespace"},
		{"tenant-alice", "tenant-root", false, "not a descendant of tenant namespace tenant-alice"},
		{"tenant-alice", "tenant-bob", false, "not a descendant"},
		// A sibling whose name extends the owner's is no descendant:
		// descendants are <owner>-<name>.
		{"tenant-alice", "tenant-alicex", false, "not a descendant"},
		{"tenant-alice-bob", "tenant-alice", false, "not a descendant"},
	}
	for _, tt := range tests {
		t.Run(tt.owner+"/"+tt.ns, func(t *testing.T) {
			msg := MayAttach(tt.owner, tt.ns)
			if (msg == "") != tt.allowed || !strings.Contains(msg, tt.msg) {
				t.Errorf("MayAttach(%q, %q) = %q, want allowed=%v containing %q", tt.owner, tt.ns, msg, tt.allowed, tt.msg)
			}
		})
	}
}

func TestSplitAttachments(t *testing.T) {
	tests := []struct {
		name                   string
		owner                  string
		attached, rootAttached []string
		want                   Attachments
	}{
		{"a child's own descendants are attached, the rest refused", "tenant-alice",
			[]string{"cozy-system", "tenant-alice-bob", "tenant-bob"}, nil,
			Attachments{Allowed: []string{"tenant-alice", "tenant-alice-bob"},
				Refused: []AttachRefusal{{Namespace: "cozy-system"}, {Namespace: "tenant-bob"}}}},
		{"the root attaches shared namespaces", "tenant-root", []string{"cozy-system", "default"}, nil,
			Attachments{Allowed: []string{"tenant-root", "cozy-system", "default"}}},
		// Upstream's gateway chart renders the cluster-wide list into every
		// tenant's TenantGateway: entries the root lists are published there.
		{"shared entries the root lists are on the root", "tenant-alice",
			[]string{"cozy-system", "default", "cozy-other"}, []string{"default", "cozy-system"},
			Attachments{Allowed: []string{"tenant-alice"}, OnRoot: []string{"cozy-system", "default"},
				Refused: []AttachRefusal{{Namespace: "cozy-other"}}}},
		// A tenant namespace is never the root's to publish for a child.
		{"a sibling the root lists is still refused", "tenant-alice", []string{"tenant-bob"}, []string{"tenant-bob"},
			Attachments{Allowed: []string{"tenant-alice"}, Refused: []AttachRefusal{{Namespace: "tenant-bob"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitAttachments(tt.owner, tt.attached, tt.rootAttached)
			for i := range got.Refused {
				if got.Refused[i].Message != MayAttach(tt.owner, got.Refused[i].Namespace) {
					t.Errorf("refusal %+v does not carry MayAttach's message", got.Refused[i])
				}
				got.Refused[i].Message = ""
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SplitAttachments() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
