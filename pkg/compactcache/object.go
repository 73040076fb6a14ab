package compactcache

import (
	"maps"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a cached object of a packed kind: its apiVersion and kind, the
// Decoded metadata fields, and every other field packed in Packed. It is a
// client.Object, so informers, indexes and event handlers read it through
// the accessors they use on any object; Reader gives a reconcile the object
// whole, as an unstructured.Unstructured.
//
// It holds only the fields it keeps, the labels as a list: some 160 bytes
// and the labels' strings beside Packed, against some 700 for the same
// fields in the maps of an unstructured object (the object and metadata
// maps take a group of eight slots each, and each string value a box of its
// own) and some 300 in a metav1.ObjectMeta with a map of labels.
//
// A cached object is read, never changed: the setters of the fields it
// keeps work, and those of the packed fields (annotations, owner
// references, the creation time, managed fields...) do nothing, as their
// getters return nothing. Such a field is set on an unpacked copy.
type Object struct {
	metav1.TypeMeta
	name, namespace, resourceVersion string
	uid                              types.UID
	generation                       int64
	deletionTimestamp                *metav1.Time
	// labels are the keys and values in turn, by key.
	labels     []string
	finalizers []string
	// annotations are a watch bookmark's (ParseBookmark), which tell the
	// end of a watch's initial events; a stored object's are packed.
	annotations map[string]string
	// Packed is every other field as JSON ("metadata" holding the metadata
	// fields not in Decoded), compressed against its kind's dictionary
	// (dict.go).
	Packed string
}

var _ client.Object = &Object{}

// DeepCopyObject implements runtime.Object. Packed is immutable and shared.
func (o *Object) DeepCopyObject() k8sruntime.Object {
	c := *o
	c.deletionTimestamp = o.deletionTimestamp.DeepCopy()
	c.labels = slices.Clone(o.labels)
	c.finalizers = slices.Clone(o.finalizers)
	c.annotations = maps.Clone(o.annotations)
	return &c
}

// labelList is m as keys and values in turn, by key, with shared keys and
// the values of keys whose values repeat (labelValues); nil when m is empty.
func labelList(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	l := make([]string, 0, 2*len(m))
	for _, k := range keys {
		l = append(l, intern(k), labelValues.share(shared, k, m[k]))
	}
	return l
}

// labelValues decides, label key by label key, whether the values are worth
// sharing. A shared copy costs a table entry (some 150 bytes with the map's
// slot, the boxed string and the copy), against the few bytes of a value
// held twice: a key whose values repeat across objects (an application
// kind, a group, a team) gains, a key whose value names the object it is on
// (apps.cozystack.io/application.name on a backing object, one per
// instance) only fills the table. A key is judged on its first
// valueSample values: when more than half were new to the table, its values
// are kept as the object has them from then on.
var labelValues = &valueSharing{keys: map[string]*valueCount{}}

// valueSample is how many values of a key are looked at before it is
// judged; maxJudgedKeys bounds the keys followed (those beyond it are
// shared, as every key was before).
const (
	valueSample   = 256
	maxJudgedKeys = 4096
)

type valueSharing struct {
	mu   sync.Mutex
	keys map[string]*valueCount
}

type valueCount struct {
	seen, fresh int
	// unshared: the key was judged, and its values are not shared.
	unshared bool
}

// share returns value, label key's value, shared through t unless key is
// judged not worth it.
func (v *valueSharing) share(t *stringTable, key, value string) string {
	if value == "" {
		return ""
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.keys[key]
	if c == nil && len(v.keys) < maxJudgedKeys {
		c = &valueCount{}
		v.keys[strings.Clone(key)] = c
	}
	if c != nil && c.unshared {
		return value
	}
	s, fresh := t.internNew(value)
	if c != nil && c.seen < valueSample {
		c.seen++
		if fresh {
			c.fresh++
		}
		c.unshared = c.seen == valueSample && 2*c.fresh > valueSample
	}
	return s.(string)
}

// The fields an Object keeps (metav1.Object).

func (o *Object) GetName() string                     { return o.name }
func (o *Object) SetName(name string)                 { o.name = name }
func (o *Object) GetNamespace() string                { return o.namespace }
func (o *Object) SetNamespace(namespace string)       { o.namespace = namespace }
func (o *Object) GetUID() types.UID                   { return o.uid }
func (o *Object) SetUID(uid types.UID)                { o.uid = uid }
func (o *Object) GetResourceVersion() string          { return o.resourceVersion }
func (o *Object) SetResourceVersion(v string)         { o.resourceVersion = v }
func (o *Object) GetGeneration() int64                { return o.generation }
func (o *Object) SetGeneration(generation int64)      { o.generation = generation }
func (o *Object) GetDeletionTimestamp() *metav1.Time  { return o.deletionTimestamp }
func (o *Object) SetDeletionTimestamp(t *metav1.Time) { o.deletionTimestamp = t }
func (o *Object) GetFinalizers() []string             { return o.finalizers }
func (o *Object) SetFinalizers(finalizers []string)   { o.finalizers = finalizers }

// GetLabels returns a new map of the labels (nil when there are none), as
// an unstructured object's GetLabels does.
func (o *Object) GetLabels() map[string]string {
	if len(o.labels) == 0 {
		return nil
	}
	m := make(map[string]string, len(o.labels)/2)
	for i := 0; i < len(o.labels); i += 2 {
		m[o.labels[i]] = o.labels[i+1]
	}
	return m
}

// SetLabels implements metav1.Object.
func (o *Object) SetLabels(labels map[string]string) { o.labels = labelList(labels) }

// GetAnnotations implements metav1.Object: a watch bookmark's annotations
// (ParseBookmark); a stored object's are packed, read from an unpacked copy.
func (o *Object) GetAnnotations() map[string]string { return o.annotations }

// The packed fields: read from an unpacked copy (see Object).

func (o *Object) GetGenerateName() string                       { return "" }
func (o *Object) SetGenerateName(string)                        {}
func (o *Object) GetSelfLink() string                           { return "" }
func (o *Object) SetSelfLink(string)                            {}
func (o *Object) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (o *Object) SetCreationTimestamp(metav1.Time)              {}
func (o *Object) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (o *Object) SetDeletionGracePeriodSeconds(*int64)          {}
func (o *Object) SetAnnotations(map[string]string)              {}
func (o *Object) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (o *Object) SetOwnerReferences([]metav1.OwnerReference)    {}
func (o *Object) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (o *Object) SetManagedFields([]metav1.ManagedFieldsEntry)  {}
