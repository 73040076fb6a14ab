package compactcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// packed is what an informer stored for data before Parse: client-go's
// decode, the managed fields stripped, Pack.
func packed(t *testing.T, data string) *Object {
	t.Helper()
	u := decodedJSON(t, data)
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	o, err := Pack(u)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// sameObject fails unless got and want keep the same decoded fields and
// unpack to the same object.
func sameObject(t *testing.T, got, want *Object) {
	t.Helper()
	if got.TypeMeta != want.TypeMeta || got.name != want.name || got.namespace != want.namespace || got.uid != want.uid ||
		got.resourceVersion != want.resourceVersion || got.generation != want.generation ||
		!equality.Semantic.DeepEqual(got.deletionTimestamp, want.deletionTimestamp) ||
		!equality.Semantic.DeepEqual(got.labels, want.labels) || !equality.Semantic.DeepEqual(got.finalizers, want.finalizers) {
		t.Fatalf("decoded fields differ:\n got %+v\nwant %+v", got, want)
	}
	gu, err := got.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	wu, err := want.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(gu.Object, wu.Object) {
		t.Fatalf("unpacked objects differ:\n got %v\nwant %v", gu.Object, wu.Object)
	}
}

func TestParseAsPackOfTheDecodedObject(t *testing.T) {
	compacted := &bytes.Buffer{}
	if err := json.Compact(compacted, []byte(instanceJSON)); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"every metadata field, indented": instanceJSON,
		"every metadata field, compact":  compacted.String(),
		"metadata only":                  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"b"}}`,
		"nulls where values go": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":null,"finalizers":null,` +
			`"annotations":null,"creationTimestamp":null,"generation":null,"deletionTimestamp":null},"data":null}`,
		"empty labels and finalizers": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{},"finalizers":[]}}`,
		"a label that is not a string, as the accessors read it": `{"apiVersion":"v1","kind":"ConfigMap",` +
			`"metadata":{"name":"a","labels":{"a":"b","n":1},"finalizers":["f",2]}}`,
		"fields of the wrong type read as empty": `{"apiVersion":"v1","kind":"ConfigMap",` +
			`"metadata":{"name":7,"uid":true,"generation":1.5,"resourceVersion":{},"deletionTimestamp":"not a time"}}`,
		"the zero time reads as none": `{"apiVersion":"v1","kind":"ConfigMap",` +
			`"metadata":{"name":"a","deletionTimestamp":"0001-01-01T00:00:00Z"}}`,
		"escapes in strings and keys": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a\u002db",` +
			`"labels":{"k\/x":"v\"w","\u0074eam":"\u00e9t\u00e9 \ud83d\ude00"},"annotations":{"t":"\t\n\\"}},` +
			`"data":{"\u006bey":"<&>","s":"\/"}}`,
		"numbers of every form": `{"apiVersion":"v1","kind":"X","metadata":{"name":"a","generation":-3},` +
			`"spec":{"a":0,"b":-0.5,"c":1.25e1,"d":2.5E-2,"e":-12,"f":18446744073709551616,"g":[[],[{}],{"x":[-1]}]}}`,
		"whitespace everywhere": " {\n\t\"apiVersion\" : \"v1\" ,\r\n \"kind\":\"X\", \"metadata\" : { \"name\" : \"a\" ," +
			" \"labels\" : { \"a\" : \"b\" } } , \"spec\" : [ 1 , 2 ] } \n",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(data), "managedFields")
			if err != nil {
				t.Fatal(err)
			}
			sameObject(t, got, packed(t, data))
		})
	}
}

func TestParseKeepsTheServersNumbers(t *testing.T) {
	o, err := Parse([]byte(`{"apiVersion":"v1","kind":"X","metadata":{"name":"a"},"spec":{"f":1.0,"i":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	u, err := o.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	spec := u.Object["spec"].(map[string]any)
	if f, ok := spec["f"].(float64); !ok || f != 1 {
		t.Errorf("1.0 unpacked as %T %v, want float64 1", spec["f"], spec["f"])
	}
	if i, ok := spec["i"].(int64); !ok || i != 1 {
		t.Errorf("1 unpacked as %T %v, want int64 1", spec["i"], spec["i"])
	}
}

func TestParseDropsOnlyWhatItIsTold(t *testing.T) {
	const data = `{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[{"manager":"m"}]}}`
	kept, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	u, err := kept.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	if len(u.GetManagedFields()) != 1 {
		t.Errorf("managed fields %v, want the one sent", u.GetManagedFields())
	}
	dropped, err := Parse([]byte(data), "managedFields")
	if err != nil {
		t.Fatal(err)
	}
	if dropped.Packed != "" {
		t.Errorf("packed %q, want nothing once the managed fields are dropped", dropped.Packed)
	}
}

func TestParseRejectsWhatIsNotAnObjectsJSON(t *testing.T) {
	for _, data := range []string{
		``, ` `, `null`, `[]`, `"s"`, `1`,
		`{"apiVersion":"v1","kind":"X"}`,                   // no metadata
		`{"apiVersion":"v1","kind":"X","metadata":[]}`,     // metadata not an object
		`{"apiVersion":"v1","kind":"X","metadata":{}`,      // cut short
		`{"apiVersion":"v1","kind":"X","metadata":{}}}`,    // more after its end
		`{"apiVersion":"v1","kind":"X","metadata":{}} {}`,  // another value after it
		`{"apiVersion":"v1","kind":"X","metadata":{},}`,    // a trailing comma
		`{"apiVersion":"v1","kind":"X","metadata":{"a":}}`, // no value
		`{"apiVersion":"v1","kind":"X","metadata":{"a" 1}}`,
		`{"apiVersion":"v1","kind":"X","metadata":{a:1}}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":[1,]}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":[1 2]}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":tru}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":nul}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":01}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":1.}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":-}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":1e}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":.5}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":+1}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":"a` + "\n" + `b"}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":"\x"}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":"\u12g4"}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":"open}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":[}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":{]}`,
		`{"apiVersion":"v1","kind":"X","metadata":{},"s":` + strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2) + `}`,
	} {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("Parse(%q) succeeded", data)
		}
	}
}

// FuzzParse: whatever Parse accepts is JSON, and unpacks.
func FuzzParse(f *testing.F) {
	f.Add([]byte(instanceJSON))
	f.Add([]byte(`{"apiVersion":"v1","kind":"X","metadata":{"name":"a","labels":{"a":"b"}},"s":[1,{"a":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted %q, which is not JSON", data)
		}
		if _, err := o.Unpack(); err != nil {
			t.Fatalf("Parse(%q) does not unpack: %v", data, err)
		}
	})
}

func TestParseList(t *testing.T) {
	const list = `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"42","continue":"c",` +
		`"remainingItemCount":3},"items":[` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"40"},"data":{"k":"v"}},` +
		"\n" + `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"n","resourceVersion":"41"}}]}`
	meta, items, err := ParseList([]byte(list))
	if err != nil {
		t.Fatal(err)
	}
	if meta.ResourceVersion != "42" || meta.Continue != "c" || meta.RemainingItemCount == nil || *meta.RemainingItemCount != 3 {
		t.Errorf("list metadata %+v", meta)
	}
	if len(items) != 2 || items[0].GetName() != "a" || items[1].GetName() != "b" || items[1].GetResourceVersion() != "41" {
		t.Fatalf("items %+v", items)
	}
	sameObject(t, items[0], packed(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"40"},"data":{"k":"v"}}`))
	for _, empty := range []string{`{"kind":"List","metadata":{},"items":null}`, `{"kind":"List","metadata":{},"items":[]}`, `{"metadata":{}}`} {
		if _, items, err := ParseList([]byte(empty)); err != nil || len(items) != 0 {
			t.Errorf("ParseList(%s) = %v, %v", empty, items, err)
		}
	}
	for _, bad := range []string{`[]`, `{"items":[{"metadata":{}},]}`, `{"items":[{"kind":"X"}]}`, `{"metadata":{"resourceVersion":1}}`} {
		if _, _, err := ParseList([]byte(bad)); err == nil {
			t.Errorf("ParseList(%s) succeeded", bad)
		}
	}
}

// chunks reads its data in pieces of random lengths, 1 byte at least.
type chunks struct {
	data []byte
	rnd  *rand.Rand
	// err ends the data, io.EOF by default.
	err    error
	closed bool
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rnd.IntN(300))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func (c *chunks) Close() error { c.closed = true; return nil }

func event(typ, object string) string { return `{"type":"` + typ + `","object":` + object + `}` }

func TestWatchDecoder(t *testing.T) {
	big := strings.Repeat("x", 3*firstBuffer) // an event longer than the first buffer
	objects := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"1","labels":{"l":"v"}},"data":{"k":"v"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"2"},"data":{"k":"` + big + `"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"3","managedFields":[{"manager":"m"}]}}`,
	}
	bookmark := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"4","annotations":{"k8s.io/initial-events-end":"true"}}}`
	status := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}`
	events := []string{event("ADDED", objects[0]), event("MODIFIED", objects[1]), event("DELETED", objects[2]), event("BOOKMARK", bookmark), event("ERROR", status)}
	for name, sep := range map[string]string{"one a line, as the API server writes them": "\n", "back to back": "", "apart": " \r\n\t "} {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(20) {
				src := &chunks{data: []byte(strings.Join(events, sep) + sep), rnd: rand.New(rand.NewPCG(seed, 1))}
				d := NewWatchDecoder(src, "managedFields")
				for i, want := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
					typ, obj, err := d.Decode()
					if err != nil || typ != want {
						t.Fatalf("event %d: %s, %v; want %s", i, typ, err, want)
					}
					sameObject(t, obj.(*Object), packed(t, objects[i]))
				}
				typ, obj, err := d.Decode()
				if err != nil || typ != watch.Bookmark {
					t.Fatalf("bookmark: %s, %v", typ, err)
				}
				if b := obj.(*Object); b.GetResourceVersion() != "4" || b.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					t.Fatalf("bookmark %+v: its version and annotations lost", b)
				}
				typ, obj, err = d.Decode()
				if err != nil || typ != watch.Error {
					t.Fatalf("error event: %s, %v", typ, err)
				}
				if s := obj.(*metav1.Status); s.Code != 410 || s.Reason != metav1.StatusReasonExpired {
					t.Fatalf("error event's status %+v", s)
				}
				if _, _, err := d.Decode(); !errors.Is(err, io.EOF) {
					t.Fatalf("after the last event: %v, want EOF", err)
				}
				d.Close()
				if !src.closed {
					t.Fatal("Close did not close the stream")
				}
			}
		})
	}
}

func TestWatchDecoderErrors(t *testing.T) {
	obj := `{"apiVersion":"v1","kind":"X","metadata":{"name":"a"}}`
	for name, tc := range map[string]struct {
		stream string
		cause  error
		want   error
	}{
		"cut inside an event":        {stream: event("ADDED", obj)[:20], want: io.ErrUnexpectedEOF},
		"the connection fails":       {stream: event("ADDED", obj)[:20], cause: io.ErrClosedPipe, want: io.ErrClosedPipe},
		"not JSON":                   {stream: `{"type":"ADDED","object":{]}`},
		"not an event":               {stream: `[1]`},
		"an event without object":    {stream: `{"type":"ADDED"}`},
		"an unknown event type":      {stream: event("RENAMED", obj)},
		"an object without metadata": {stream: event("ADDED", `{"kind":"X"}`)},
	} {
		t.Run(name, func(t *testing.T) {
			d := NewWatchDecoder(&chunks{data: []byte(tc.stream), rnd: rand.New(rand.NewPCG(1, 2)), err: tc.cause})
			_, _, err := d.Decode()
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Decode: %v, want an error (%v)", err, tc.want)
			}
		})
	}
}
