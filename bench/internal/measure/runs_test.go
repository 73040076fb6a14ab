package measure

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestRunEfficiencies(t *testing.T) {
	s := time.Second
	got := RunEfficiencies(2, []time.Duration{4 * s, 5 * s, 3 * s}, []time.Duration{10 * s, 10 * s, 5 * s})
	if want := []float64{0.8, 1, 1.2}; !reflect.DeepEqual(got, want) {
		t.Errorf("RunEfficiencies = %v, want %v", got, want)
	}
	// A pipeline that did not finish a run (0) counts as 0, not as infinite.
	if got := RunEfficiencies(1, []time.Duration{s}, []time.Duration{0}); got[0] != 0 {
		t.Errorf("a run without a pipeline time: %v, want 0", got)
	}
	// Runs measured on one side only are left out.
	if got := RunEfficiencies(1, []time.Duration{s, s}, []time.Duration{s}); len(got) != 1 {
		t.Errorf("uneven sides: %v, want one run", got)
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		xs            []float64
		med, lo, high float64
	}{
		{nil, 0, 0, 0},
		{[]float64{0.7}, 0.7, 0.7, 0.7},
		{[]float64{0.9, 0.6, 0.8}, 0.8, 0.6, 0.9},
		{[]float64{1, 0.5, 0.7, 0.9}, 0.8, 0.5, 1},
	} {
		m, lo, hi := Spread(tc.xs)
		if m != tc.med || lo != tc.lo || hi != tc.high {
			t.Errorf("Spread(%v) = %v %v %v, want %v %v %v", tc.xs, m, lo, hi, tc.med, tc.lo, tc.high)
		}
	}
}

func TestMedianFigure(t *testing.T) {
	// The verdict is on the median: one run below the target does not miss it.
	row := MedianFigure("s", "fan-out efficiency", []float64{0.85, 0.7, 0.9}, "", 0.8, true)
	if want := []string{"s", "fan-out efficiency, median of 3 (0.70-0.90)", "0.85", ">= 0.8", "met"}; !reflect.DeepEqual(row, want) {
		t.Errorf("row = %q, want %q", row, want)
	}
	row = MedianFigure("s", "LISTs per delete", []float64{0, 0.01, 0}, "", 0, false)
	if row[4] != "met" {
		t.Errorf("median 0 LISTs against <= 0: %q", row)
	}
	row = MedianFigure("s", "LISTs per delete", []float64{1, 1, 0}, "", 0, false)
	if row[4] != "missed" {
		t.Errorf("median 1 LIST against <= 0: %q", row)
	}
}

func TestMissed(t *testing.T) {
	met := []string{"s", "f", "1", ">= 0.8", "met"}
	reported := []string{"s", "g", "x", "-", "reported"}
	missed := []string{"s", "h", "0.5", ">= 0.8", "missed"}
	if Missed([][]string{met, reported}) {
		t.Error("no miss reported as one")
	}
	if !Missed([][]string{met, missed, reported}) {
		t.Error("a miss not found")
	}
}

func TestInTurns(t *testing.T) {
	var order []string
	raws, pipes := InTurns("test", func(k int) { order = append(order, "prepare") }, func(k int) time.Duration {
		order = append(order, "raw")
		return time.Duration(k+1) * time.Second
	}, func(k int) time.Duration {
		order = append(order, "pipe")
		return time.Duration(k+10) * time.Second
	})
	want := []string{"prepare", "raw", "pipe", "prepare", "pipe", "raw", "prepare", "raw", "pipe"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if raws[1] != 2*time.Second || pipes[2] != 12*time.Second {
		t.Errorf("times %v %v: each run's own", raws, pipes)
	}
}

func TestKeepRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs")
	// A later run with no run before it on record is an error.
	if _, err := KeepRun(path, 2, 1); err == nil {
		t.Error("run 2 with no run 1: no error")
	}
	for k, x := range []float64{41.5, 38.25, 44} {
		got, err := KeepRun(path, k+1, x)
		if err != nil {
			t.Fatalf("run %d: %v", k+1, err)
		}
		if want := []float64{41.5, 38.25, 44}[:k+1]; !reflect.DeepEqual(got, want) {
			t.Errorf("run %d: %v, want %v", k+1, got, want)
		}
	}
	// A run repeated (the file already holds three) is an error, not a
	// median of a different set of runs.
	if _, err := KeepRun(path, 3, 50); err == nil {
		t.Error("run 3 with three runs on record: no error")
	}
	// Run 1 starts afresh.
	if got, err := KeepRun(path, 1, 7); err != nil || !reflect.DeepEqual(got, []float64{7}) {
		t.Errorf("run 1 again: %v %v, want [7]", got, err)
	}
}
