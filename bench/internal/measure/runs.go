package measure

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Runs is how many times a shape is measured: its verdict is the median of
// the runs' own figures, with their range printed beside as the spread, so
// one run (on a machine whose speed moves by itself) is never the verdict.
const Runs = 3

// RunEfficiencies is, for each run, the efficiency of its own times: the
// writes a perfect controller must send per item, sent raw (raw[k]), over the
// pipeline's time (pipeline[k]). Both sides of run k were measured in the
// same run; no work left behind is added to either.
func RunEfficiencies(writes int, raw, pipeline []time.Duration) []float64 {
	out := make([]float64, min(len(raw), len(pipeline)))
	for k := range out {
		out[k] = Efficiency(writes, raw[k], pipeline[k])
	}
	return out
}

// Spread is the median of xs and their lowest and highest values (zeros for
// none).
func Spread(xs []float64) (median, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	return Median(xs), slices.Min(xs), slices.Max(xs)
}

// MedianFigure prints the median of the runs' figures xs with its target,
// its verdict (on the median) and the runs' range beside, and returns its
// row: setting, figure, value, target, verdict.
func MedianFigure(setting, name string, xs []float64, unit string, target float64, higherIsBetter bool) []string {
	m, lo, hi := Spread(xs)
	return Figure(setting, fmt.Sprintf("%s, median of %d (%.2f-%.2f)", name, len(xs), lo, hi), m, unit, target, higherIsBetter)
}

// Missed reports whether any row's verdict is "missed".
func Missed(rows [][]string) bool {
	for _, r := range rows {
		if len(r) == 5 && r[4] == "missed" {
			return true
		}
	}
	return false
}

// InTurns runs raw and pipe Runs times in turns (raw first in even runs,
// the pipeline first in odd ones), each after prepare(k) when given, and
// returns their own times; name heads the line printed after each run.
func InTurns(name string, prepare func(k int), raw, pipe func(k int) time.Duration) (raws, pipes []time.Duration) {
	for k := range Runs {
		if prepare != nil {
			prepare(k)
		}
		var dr, dp time.Duration
		if k%2 == 0 {
			dr, dp = raw(k), pipe(k)
		} else {
			dp, dr = pipe(k), raw(k)
		}
		fmt.Printf("  %s run %d/%d: raw %.1fs, pipeline %.1fs\n", name, k+1, Runs, dr.Seconds(), dp.Seconds())
		raws, pipes = append(raws, dr), append(pipes, dp)
	}
	return raws, pipes
}

// KeepRun keeps x, the figure of run k (1-based) of a measurement whose runs
// are separate processes, in the file at path, and returns the figures of
// runs 1 to k. Run 1 starts the file afresh; a later run reads the runs
// before it and fails unless all k-1 of them are there, so a run missed or
// repeated is an error rather than a median of fewer runs.
func KeepRun(path string, k int, x float64) ([]float64, error) {
	var xs []float64
	if k > 1 {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the runs before run %d: %w", k, err)
		}
		for _, f := range strings.Fields(string(b)) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			xs = append(xs, v)
		}
		if len(xs) != k-1 {
			return nil, fmt.Errorf("%s holds %d runs, run %d needs the %d before it", path, len(xs), k, k-1)
		}
	}
	xs = append(xs, x)
	var b strings.Builder
	for _, v := range xs {
		fmt.Fprintf(&b, "%s\n", strconv.FormatFloat(v, 'g', -1, 64))
	}
	return xs, os.WriteFile(path, []byte(b.String()), 0o644)
}
