package tenantgateway

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

func TestAllowedAttachments(t *testing.T) {
	allowed, refused := AllowedAttachments("tenant-alice", []string{"cozy-system", "tenant-alice-bob", "tenant-bob"})
	if !reflect.DeepEqual(allowed, []string{"tenant-alice", "tenant-alice-bob"}) {
		t.Errorf("allowed = %v", allowed)
	}
	if len(refused) != 2 || refused[0].Namespace != "cozy-system" || refused[1].Namespace != "tenant-bob" {
		t.Errorf("refused = %+v", refused)
	}
	allowed, refused = AllowedAttachments("tenant-root", []string{"cozy-system", "default"})
	if !reflect.DeepEqual(allowed, []string{"tenant-root", "cozy-system", "default"}) || refused != nil {
		t.Errorf("root: %v %+v", allowed, refused)
	}
}
