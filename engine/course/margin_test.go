package course

import (
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

// Bands reads every ranged check reached through all, once per number it
// compared, and leaves out an any's alternatives and setting checks.
func TestBands(t *testing.T) {
	res := knownRun()
	c := Check{All: []Check{
		{Kind: KindClients, Name: "failures", From: 20000, To: 40000, Min: f(50), Max: f(100)},
		{Kind: KindEjected, Host: "h2", At: 40000},
		{Any: []Check{{Kind: KindClients, Name: "failures", From: 20000, To: 40000, Min: f(1000)}}},
		{Kind: KindSetting, Name: "max_ejection_percent", Min: f(34), Max: f(34)},
		{Kind: KindSuccessRate, Name: "mean", From: 20000, To: 40000, Min: f(80)},
		{Kind: KindEvent, Event: "overflow", From: 0, To: End},
	}}
	got := Bands(c, res)
	var paths []string
	for _, b := range got {
		paths = append(paths, b.Path)
	}
	want := "check.all[0] check.all[4] check.all[4] check.all[4]"
	if strings.Join(paths, " ") != want {
		t.Fatalf("paths %q, want %q (%+v)", strings.Join(paths, " "), want, got)
	}
	if got[0].Value != 70 || *got[0].Min != 50 || !strings.Contains(got[0].Check, `"name":"failures"`) {
		t.Errorf("first band %+v", got[0])
	}
}

func margin(t *testing.T, lo, hi *float64, values ...float64) Margin {
	t.Helper()
	var ms MarginSet
	for _, v := range values {
		ms.Add("l/s", Band{Path: "check", Check: "{}", Min: lo, Max: hi, Value: v})
	}
	l := ms.List()
	if len(l) != 1 {
		t.Fatalf("%d margins", len(l))
	}
	return l[0]
}

// spread returns n values evenly from a to b.
func spread(n int, a, b float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	return out
}

func TestMarginFloor(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi *float64
		values []float64
		ok     bool
		says   string
	}{
		// Seen 25–33 (spread 8, floor 2) in 20–40: 5 and 7 clear.
		{"clear of both bounds", f(20), f(40), spread(50, 25, 33), true, "5 below, 7 above (floor 2)"},
		// 1.5 above the closest run, under the floor of 2.
		{"a bound one seed's luck away", f(20), f(34.5), spread(50, 25, 33), false, "1.5 above (floor 2)"},
		// Half the runs sit on the minimum: the quantity's own edge.
		{"an edge", f(5), f(10), append(spread(25, 5, 5), spread(25, 5, 8)...), true, "0 below (26 of 50 runs on it: its edge)"},
		// One run of fifty on the bound is not an edge: it is the tail.
		{"one run on the bound", f(5), f(10), append([]float64{5}, spread(49, 6, 8)...), false, "0 below, 2 above"},
		// Every run alike: no spread, no floor to miss.
		{"every run alike", f(3), f(3), spread(50, 3, 3), true, "0 below (50 of 50 runs on it: its edge), 0 above (50 of 50 runs on it: its edge)"},
		// Too few runs to read a spread: printed, never failed.
		{"too few runs", f(20), f(34.5), spread(5, 25, 33), true, "no floor under 30 runs"},
		// A run outside the band fails the margin whatever the runs.
		{"a run outside", f(20), nil, spread(5, 19, 33), false, "[1 runs outside]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := margin(t, tc.lo, tc.hi, tc.values...)
			if m.OK() != tc.ok || !strings.Contains(m.String(), tc.says) {
				t.Errorf("OK %v, want %v; %s\nwant it to say %q", m.OK(), tc.ok, m, tc.says)
			}
		})
	}
}

// A check that says why its margin is thin prints it and is not failed,
// unless a run leaves the band; thin_margin needs a bound to be about.
func TestThinMargin(t *testing.T) {
	var ms MarginSet
	for _, v := range spread(50, 2, 7) {
		ms.Add("l/s", Band{Path: "check", Check: "{}", Min: f(2), Value: v, Thin: "a count of chance detections"})
	}
	m := ms.List()[0]
	if !m.OK() || !strings.Contains(m.String(), "0 below (floor 1.25) {} thin_margin: a count of chance detections") {
		t.Errorf("%v %s", m.OK(), m)
	}
	ms.Add("l/s", Band{Path: "check", Check: "{}", Min: f(2), Value: 1, Thin: "a count of chance detections"})
	if m := ms.List()[0]; m.OK() {
		t.Errorf("a run outside passes: %s", m)
	}
	c := Check{Kind: KindEvent, Event: "eject", From: 30000, To: End, ThinMargin: "why"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "thin_margin needs min or max") {
		t.Errorf("thin_margin without a band: %v", err)
	}
	c = Check{Kind: KindEjected, Host: "h5", At: 40000, ThinMargin: "why"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "does not take thin_margin") {
		t.Errorf("thin_margin on a kind without a band: %v", err)
	}
}

// marginLines adds one line per ranged check from MarginMinRuns seeds on,
// after the seeds' lines, and none below.
func TestMarginLines(t *testing.T) {
	lines := func(seeds int) []CheckLine {
		var out []CheckLine
		for s := 1; s <= seeds; s++ {
			out = append(out, CheckLine{Lesson: "l", Step: "s", Seed: uint64(s), State: "intended", WantPass: true, Pass: true,
				Bands: []Band{{Path: "check.all[0]", Check: "{}", Min: f(1), Value: float64(10 + s%5)}}})
		}
		return out
	}
	if got := marginLines(lines(MarginMinRuns - 1)); len(got) != 0 {
		t.Errorf("margins on %d seeds: %v", MarginMinRuns-1, got)
	}
	got := marginLines(lines(MarginMinRuns))
	if len(got) != 1 || got[0].Lesson != "l" || got[0].Step != "s" || !got[0].OK() ||
		!strings.HasPrefix(got[0].String(), "ok   l/s check.all[0] margin on 30 runs: seen 10–14, wanted ≥ 1: 9 below (floor 1) {}") {
		t.Errorf("%v", got)
	}
}
