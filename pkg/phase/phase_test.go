package phase

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestRunStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var ran []string
	step := func(name string, err error) Phase[*[]string] {
		return Phase[*[]string]{Name: name, Run: func(_ context.Context, s *[]string) error {
			*s = append(*s, name)
			return err
		}}
	}
	err := Run(context.Background(), &ran, step("a", nil), step("b", boom), step("c", nil))
	if err != boom {
		t.Errorf("Run = %v, want the failing phase's error as it is", err)
	}
	if !reflect.DeepEqual(ran, []string{"a", "b"}) {
		t.Errorf("ran %v, want a, b", ran)
	}
	ran = nil
	if err := Run(context.Background(), &ran, step("a", nil), step("b", nil)); err != nil || len(ran) != 2 {
		t.Errorf("Run = %v after %v, want every phase and no error", err, ran)
	}
}
