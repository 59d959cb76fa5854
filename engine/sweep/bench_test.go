package sweep

import (
	"context"
	"testing"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// The goal: a 101-point sweep of search-cache (seed 1) in ≤ 1 s on
// a 2-core machine.
func BenchmarkSweepSearchCache101(b *testing.B) {
	_, values, _ := ParseRange("max_ejection_percent=0:100:1")
	for b.Loop() {
		if _, err := Run(context.Background(), Spec{Preset: scenario.SearchCache, Param: "max_ejection_percent", Values: values, Seeds: []uint64{1}}); err != nil {
			b.Fatal(err)
		}
	}
}

// Seeds 1–5, the band.
func BenchmarkSweepSearchCache101Seeds5(b *testing.B) {
	_, values, _ := ParseRange("max_ejection_percent=0:100:1")
	for b.Loop() {
		if _, err := Run(context.Background(), Spec{Preset: scenario.SearchCache, Param: "max_ejection_percent", Values: values, Seeds: []uint64{1, 2, 3, 4, 5}}); err != nil {
			b.Fatal(err)
		}
	}
}

// The same 101 runs without merging equal behaviours: what the sweep costs
// when every value changes the run (a duration, a threshold).
func BenchmarkSweepSearchCache101EveryRun(b *testing.B) {
	_, values, _ := ParseRange("max_ejection_percent=0:100:1")
	jobs := map[string]Job{}
	for _, v := range values {
		sc, cfg, err := settings.Apply(scenario.SearchCache, map[string]string{"max_ejection_percent": v})
		if err != nil {
			b.Fatal(err)
		}
		jobs[v] = Job{sc, cfg, 1}
	}
	for b.Loop() {
		if _, err := runAll(context.Background(), jobs, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}
