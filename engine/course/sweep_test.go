package course

import (
	"math"
	"strings"
	"testing"

	"outlierlab/lessons"
)

// loadTestLessons loads the shipped lessons and keeps those named.
func loadTestLessons(t *testing.T, ids ...string) []Lesson {
	t.Helper()
	ls, err := Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	var out []Lesson
	for _, l := range ls {
		for _, id := range ids {
			if l.ID == id {
				out = append(out, l)
			}
		}
	}
	if len(out) != len(ids) {
		t.Fatalf("lessons %v: found %d", ids, len(out))
	}
	return out
}

// A claim counts its seeds and names the first failing ones, in order,
// with the first failure's detail.
func TestTallyClaims(t *testing.T) {
	var ty Tally
	for seed := uint64(1); seed <= 20; seed++ {
		ty.Seed(seed)
		ty.Claim("l/s intended", seed%7 != 0, "detail of seed "+string(rune('0'+seed%10)))
		ty.Claim("l/s start", true, "")
	}
	cs := ty.Claims()
	if len(cs) != 2 || cs[0].Where != "l/s intended" || cs[1].Where != "l/s start" {
		t.Fatalf("claims %+v", cs)
	}
	if c := cs[0]; c.Runs != 20 || c.Failed != 2 || len(c.Seeds) != 2 || c.Seeds[0] != 7 || c.Seeds[1] != 14 || c.Detail != "detail of seed 7" || c.OK() {
		t.Errorf("claim %+v", c)
	}
	if got := cs[0].String(); got != "FAIL l/s intended: fails on 2 of 20 seeds (7, 14): detail of seed 7" {
		t.Errorf("line %q", got)
	}
	if got := cs[1].String(); got != "ok   l/s start: holds on 20 of 20 seeds" || !cs[1].OK() {
		t.Errorf("line %q", got)
	}
}

// Seeds come in the order asked for, 9 before 3 if so; the same seed
// twice in a row is a bug in the sweep's folding.
func TestTallySeedOrder(t *testing.T) {
	var ty Tally
	for _, seed := range []uint64{9, 3, 5} {
		ty.Seed(seed)
		ty.Claim("l/s intended", seed == 5, "bad")
		ty.Band("l/s", Band{Path: "check", Check: "{}", Max: f(4), Value: float64(seed)})
	}
	if c := ty.Claims()[0]; c.Failed != 2 || c.Seeds[0] != 9 || c.Seeds[1] != 3 {
		t.Errorf("claim %+v", c)
	}
	if s := ty.Spreads()[0]; s.Runs() != 3 || s.Above != 2 {
		t.Errorf("spread %+v", s)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a seed twice")
		}
	}()
	ty.Seed(5)
}

// A spread keeps each run's lowest and highest value (a check read at
// several ticks), counts the runs past each bound, and judges each
// bound's tail: crossed, or nearer the mean than a normal fit allows for
// one run in ten thousand, fails; the quantity's edge and thin_margin do
// not.
func TestTallySpreads(t *testing.T) {
	band := func(min, max *float64, thin string) func(ty *Tally, v float64) {
		return func(ty *Tally, v float64) {
			ty.Band("l/s", Band{Path: "check", Check: "{}", Min: min, Max: max, Value: v, Thin: thin})
		}
	}
	// values 0…99 (mean 49.5, σ 29): ±3.7σ is about −58 and 157.
	tests := []struct {
		name     string
		min, max *float64
		thin     string
		ok       bool
		want     string
	}{
		{"far", f(-70), f(170), "", true, "4.1σ from the mean"},
		{"near", f(-20), f(120), "", false, "2.4σ from the mean (normal tail 0.008)"},
		{"near but thin", f(-20), f(120), "a count of rare events", true, "thin_margin: a count of rare events"},
		{"crossed", f(5), nil, "thin", false, "5 runs below"},
		{"edge", f(0), nil, "", true, "the quantity's edge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ty Tally
			add := band(tc.min, tc.max, tc.thin)
			for seed := uint64(1); seed <= 100; seed++ {
				ty.Seed(seed)
				v := float64(seed - 1)
				if tc.name == "edge" && seed <= 10 {
					v = 0
				}
				add(&ty, v)
			}
			ss := ty.Spreads()
			if len(ss) != 1 {
				t.Fatalf("%d spreads", len(ss))
			}
			s := ss[0]
			if s.Runs() != 100 || s.OK() != tc.ok || !strings.Contains(s.String(), tc.want) {
				t.Errorf("runs %d, ok %v (want %v): %s", s.Runs(), s.OK(), tc.ok, s)
			}
		})
	}
	// A count of a few whole values: the runs by value.
	var counts Tally
	for seed := uint64(1); seed <= 100; seed++ {
		counts.Seed(seed)
		band(nil, f(2), "")(&counts, float64(min(seed%10, 2)))
	}
	if got := counts.Spreads()[0].String(); !strings.Contains(got, "runs by value 0: 10, 1: 10, 2: 80") {
		t.Errorf("counts: %s", got)
	}
	// A window: three values a run; the lowest and highest of each count.
	var ty Tally
	for seed := uint64(1); seed <= 3; seed++ {
		ty.Seed(seed)
		for _, v := range []float64{10, float64(seed), 20 + float64(seed)} {
			band(f(2), f(22), "")(&ty, v)
		}
	}
	s := ty.Spreads()[0]
	if s.Runs() != 3 || s.Lows[0] != 1 || s.Highs[2] != 23 || s.Below != 1 || s.Above != 1 || s.AtMin != 1 || s.AtMax != 1 {
		t.Errorf("window spread %+v", s)
	}
}

func TestQuantile(t *testing.T) {
	v := spread(1000, 1, 1000)
	for _, tc := range []struct{ q, want float64 }{{0, 1}, {0.001, 1}, {0.01, 10}, {0.5, 500}, {0.999, 999}, {1, 1000}} {
		if got := Quantile(v, tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("no values: not NaN")
	}
}

// SweepLessons folds every seed's lines in seed order: the tally of a
// lesson over seeds 1–3 has its claims (the intended state and each
// state before) with three runs each, its ranged checks' spreads with a
// run per seed.
func TestSweepLessons(t *testing.T) {
	ls := loadTestLessons(t, "cap")
	var done []int
	ty := SweepLessons(ls, []uint64{1, 2, 3}, func(n int) { done = append(done, n) })
	if ty.Seeds() != 3 || len(done) == 0 || done[len(done)-1] != 3 {
		t.Fatalf("seeds %d, progress %v", ty.Seeds(), done)
	}
	report := Report(ls, []uint64{1, 2, 3})
	claims := map[string]bool{}
	for _, c := range ty.Claims() {
		claims[c.Where] = true
		if c.Runs != 3 || !c.OK() {
			t.Errorf("claim %s", c)
		}
	}
	if len(claims)*3 != len(report) {
		t.Errorf("%d claims over 3 seeds, Report has %d lines", len(claims), len(report))
	}
	if !claims["cap/cap-34 intended"] || !claims["cap/cap-34 start"] {
		t.Errorf("claims %v", claims)
	}
	for _, s := range ty.Spreads() {
		if s.Runs() != 3 {
			t.Errorf("spread %s", s)
		}
	}
}
