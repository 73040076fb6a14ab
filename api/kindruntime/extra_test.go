package kindruntime

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

type open struct {
	Known string                          `json:"known,omitempty"`
	Extra map[string]apiextensionsv1.JSON `json:"-"`
}

func TestExtraKeys(t *testing.T) {
	b, err := MarshalWithExtra(open{Known: "k"}, map[string]apiextensionsv1.JSON{"more": {Raw: []byte(`1`)}, "known": {Raw: []byte(`"shadowed"`)}})
	if err != nil || string(b) != `{"known":"k","more":1}` {
		t.Fatalf("MarshalWithExtra = %s, %v: the named field wins, the other key is written next to it", b, err)
	}
	b, err = MarshalWithExtra(open{Known: "k"}, nil)
	if err != nil || string(b) != `{"known":"k"}` {
		t.Fatalf("MarshalWithExtra without extra keys = %s, %v", b, err)
	}
	var o open
	extra, err := UnmarshalWithExtra([]byte(`{"known":"k","more":{"a":1},"Known":"case"}`), &o, "known")
	if err != nil || o.Known != "k" || len(extra) != 2 || string(extra["more"].Raw) != `{"a":1}` || string(extra["Known"].Raw) != `"case"` {
		t.Fatalf("UnmarshalWithExtra = %+v, %v, %v: keys are case-sensitive", o, extra, err)
	}
	extra, err = UnmarshalWithExtra([]byte(`{"known":"k"}`), &o, "known")
	if err != nil || extra != nil {
		t.Fatalf("no other keys must give nil, got %v, %v", extra, err)
	}
	if _, err := UnmarshalWithExtra([]byte(`[1]`), &o, "known"); err == nil {
		t.Fatal("a list is not an object")
	}
}
