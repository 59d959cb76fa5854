package course

import (
	"sync/atomic"
	"testing"
)

// What workshop plans (engine/plan) reuse of the lessons' machinery.

// Parallel calls f once for each index, and returns after the last.
func TestParallel(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100} {
		calls := make([]atomic.Int32, n)
		Parallel(n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d: f(%d) called %d times", n, i, c)
			}
		}
	}
}

// A state's Key names its run: the same preset, settings and seed under
// any name; another seed or setting is another run.
func TestStateKey(t *testing.T) {
	a := State{Name: "start", Preset: "search-cache", Settings: map[string]string{"hosts": "6", "max_ejection_percent": "34"}}
	b := State{Name: "after cap-34", Preset: "search-cache", Settings: map[string]string{"max_ejection_percent": "34", "hosts": "6"}}
	if a.Key(1) != b.Key(1) || a.Key(1) != "search-cache|hosts=6 max_ejection_percent=34|1" {
		t.Errorf("keys %q, %q", a.Key(1), b.Key(1))
	}
	c := State{Preset: "search-cache", Settings: map[string]string{"hosts": "6", "max_ejection_percent": "17"}}
	if a.Key(1) == a.Key(2) || a.Key(1) == c.Key(1) {
		t.Errorf("distinct runs share a key: %q %q %q", a.Key(1), a.Key(2), c.Key(1))
	}
}

// ExpandRaw hands every {{…}} to f, parsed or not; Placeholders lists
// their insides.
func TestExpandRaw(t *testing.T) {
	text := "a {{ threshold@40s = 70.9 }} b {{mean}} c"
	got := ExpandRaw(text, func(raw string) string { return "[" + raw + "]" })
	if want := "a [threshold@40s = 70.9] b [mean] c"; got != want {
		t.Errorf("ExpandRaw: %q, want %q", got, want)
	}
	if ps := Placeholders(text); len(ps) != 2 || ps[0] != "threshold@40s = 70.9" || ps[1] != "mean" {
		t.Errorf("Placeholders: %q", ps)
	}
}
