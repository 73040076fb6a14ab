package controller

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
)

func TestBuildRoles(t *testing.T) {
	def := newHelmDef("postgres", "Postgres", "postgreses", `{"type":"object"}`)
	roles := buildRoles(def)
	byName := map[string]*rbacv1.ClusterRole{}
	for _, r := range roles {
		byName[r.Name] = r
	}
	cases := []struct {
		name, label string
		verbs       string // on the instances
	}{
		{"cozystack:app:postgreses:view", "rbac.authorization.k8s.io/aggregate-to-view", "get,list,watch"},
		{"cozystack:app:postgreses:edit", "rbac.authorization.k8s.io/aggregate-to-edit", "get,list,watch,create,update,patch,delete,deletecollection"},
		{"cozystack:app:postgreses:admin", "rbac.authorization.k8s.io/aggregate-to-admin", "get,list,watch,create,update,patch,delete,deletecollection"},
		// Cozystack's tenant roles: view (and use, which aggregates it) reads;
		// admin (and super-admin) writes as cozy:tenant:admin does upstream's kinds.
		{"cozystack:app:postgreses:tenant-view", "rbac.cozystack.io/aggregate-to-tenant-view", "get,list,watch"},
		{"cozystack:app:postgreses:tenant-admin", "rbac.cozystack.io/aggregate-to-tenant-admin", "get,list,watch,create,update,patch,delete"},
	}
	if len(roles) != len(cases) {
		t.Fatalf("%d roles, want %d", len(roles), len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := byName[c.name]
			if r == nil {
				t.Fatalf("no role %s", c.name)
			}
			if !strings.HasPrefix(r.Name, RolePrefix) {
				t.Errorf("name %s lacks the prefix the identity policy allows", r.Name)
			}
			l := r.Labels
			if l[cozyschema.LabelDefinition] != "postgres" || l[c.label] != "true" || len(l) != 2 {
				t.Errorf("labels %v: want the definition and %s only", l, c.label)
			}
			if r.AggregationRule != nil {
				t.Error("an aggregationRule")
			}
			if len(r.Rules) != 2 {
				t.Fatalf("rules %+v", r.Rules)
			}
			for _, rule := range r.Rules {
				if strings.Join(rule.APIGroups, ",") != "apps.cozystack.io" || len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
					t.Errorf("rule outside apps.cozystack.io: %+v", rule)
				}
			}
			if got := strings.Join(r.Rules[0].Resources, ","); got != "postgreses" {
				t.Errorf("first rule on %s", got)
			}
			if got := strings.Join(r.Rules[0].Verbs, ","); got != c.verbs {
				t.Errorf("verbs on instances %s, want %s", got, c.verbs)
			}
			// status is read, never written, at every level
			if got := strings.Join(r.Rules[1].Resources, ","); got != "postgreses/status" {
				t.Errorf("second rule on %s", got)
			}
			if got := strings.Join(r.Rules[1].Verbs, ","); got != "get,list,watch" {
				t.Errorf("verbs on status %s, want read only", got)
			}
		})
	}
	// The builder must not share rule slices between roles.
	roles[1].Rules[0].Verbs[0] = "mutated"
	if buildRoles(def)[2].Rules[0].Verbs[0] != "get" || roles[2].Rules[0].Verbs[0] != "get" {
		t.Error("roles share their verbs")
	}
}

func TestAggregatedInto(t *testing.T) {
	for level, want := range map[string]string{
		RoleEdit:        "the built-in edit role",
		RoleTenantView:  "Cozystack's cozy:tenant:view role",
		RoleTenantAdmin: "Cozystack's cozy:tenant:admin role",
	} {
		if got := aggregatedInto(level); got != want {
			t.Errorf("aggregatedInto(%s) = %s, want %s", level, got, want)
		}
	}
}

func TestRoleNameAndLevel(t *testing.T) {
	for _, c := range []struct{ plural, level, name string }{
		{"tenants", RoleView, "cozystack:app:tenants:view"},
		{"virtual-machines", RoleAdmin, "cozystack:app:virtual-machines:admin"},
		{"tenants", RoleTenantAdmin, "cozystack:app:tenants:tenant-admin"},
	} {
		if got := RoleName(c.plural, c.level); got != c.name {
			t.Errorf("RoleName(%s, %s) = %s, want %s", c.plural, c.level, got, c.name)
		}
		if got := levelOf(c.name); got != c.level {
			t.Errorf("levelOf(%s) = %s", c.name, got)
		}
	}
}
