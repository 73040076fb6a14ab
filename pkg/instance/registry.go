package instance

import (
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// registry holds the definitions a backend serves, by definition name and by
// served kind. When two definitions claim one kind (the appdef controller
// reports the clash on the younger one), the older one is served.
type registry struct {
	mu     sync.RWMutex
	byName map[string]*Definition
}

func newRegistry() *registry { return &registry{byName: map[string]*Definition{}} }

// set records def and returns the definition it replaces, if any.
func (r *registry) set(def *Definition) *Definition {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.byName[def.Name()]
	r.byName[def.Name()] = def
	return prev
}

// remove forgets the definition called name and returns it, if it was known.
func (r *registry) remove(name string) *Definition {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.byName[name]
	delete(r.byName, name)
	return prev
}

// forKind returns the definition serving gvk.
func (r *registry) forKind(gvk schema.GroupVersionKind) *Definition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var found []*Definition
	for _, d := range r.byName {
		if d.GVK == gvk {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Slice(found, func(i, j int) bool {
		ti, tj := found[i].Object.CreationTimestamp, found[j].Object.CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return found[i].Name() < found[j].Name()
	})
	return found[0]
}

// servesKind reports whether any definition still serves gvk.
func (r *registry) servesKind(gvk schema.GroupVersionKind) bool { return r.forKind(gvk) != nil }
