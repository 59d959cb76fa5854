package course

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"outlierlab/engine/scenario"
)

// A ranged check (one with min or max) passes on every seed the checker
// runs, but a bound the closest seed only just clears is one seed's luck:
// seed 51 may cross it. Margins measure, over the seeds, how far the
// closest run stayed from each bound, and hold it to a floor.
//
// The floor is a quarter of the runs' own spread (the largest value seen
// minus the smallest). For a number that varies from seed to seed roughly
// like a normal variable, n runs span about 4.5 standard deviations at
// n = 50 (4.1 at n = 30), so the extremes lie about 2.2σ from the mean; a
// bound a quarter of the span beyond the closest run sits about 3.3σ out or
// more, where a new seed crosses it a few times in ten thousand. Reports
// judge margins from MarginMinRuns seeds on, where the spread says
// something about σ (Report and engine/plan's add no margin lines below);
// a Margin of fewer runs is never failed for its floor.
//
// A bound that at least a tenth of the runs reach exactly is exempt: the
// quantity piles up there because it cannot go further (a host ejected by
// consecutive_5xx fails at least five requests; a count every seed gives
// exactly, as {min: 3, max: 3}), not because the bound was drawn close to
// a tail.
const (
	MarginMinRuns = 30
	// marginFloorShare is the floor's share of the runs' spread.
	marginFloorShare = 0.25
	// marginEdgeShare is the share of runs on a bound that makes it the
	// quantity's own edge.
	marginEdgeShare = 0.1
)

// Band is one number a ranged check compared with its bounds on one run.
type Band struct {
	// Path is where the check sits in the step's (or choice's) check:
	// "check", "check.all[2]". Checks inside an any are left out: an
	// alternative is expected to fail on some runs.
	Path string
	// Check is the check as written, as compact JSON.
	Check    string
	Min, Max *float64
	Value    float64
	// Thin is the check's thin_margin: why its margin may be under the
	// floor.
	Thin string
}

// Bands evaluates c on the whole run and returns the numbers its ranged
// checks compared: one per check, or one per tick for a success_rate
// check over a window. Setting checks, which read the learner's own
// action rather than the run, are left out.
func Bands(c Check, run *scenario.Result) []Band {
	paths := map[*Check]string{}
	var walk func(c *Check, path string)
	walk = func(c *Check, path string) {
		if c.Any != nil {
			return
		}
		for i := range c.All {
			walk(&c.All[i], fmt.Sprintf("%s.all[%d]", path, i))
		}
		if c.Kind != "" && c.Kind != KindSetting && (c.Min != nil || c.Max != nil) {
			paths[c] = path
		}
	}
	walk(&c, "check")
	var out []Band
	e := evaluator{run: run, frames: run.Frames, note: func(c *Check, v float64) {
		if p, ok := paths[c]; ok {
			out = append(out, Band{Path: p, Check: compact(c), Min: c.Min, Max: c.Max, Value: v, Thin: c.ThinMargin})
		}
	}}
	e.eval(&c)
	return out
}

// compact writes a check as its JSON, the keys lesson files use (its
// thin_margin aside: the margin line says it apart).
func compact(c *Check) string {
	cc := *c
	cc.ThinMargin = ""
	b, err := json.Marshal(&cc)
	if err != nil {
		return c.Kind
	}
	return string(b)
}

// Margin is one ranged check over many runs: the closest values to its
// bounds.
type Margin struct {
	// Where names the check's place: "slow-hosts/timeout check.all[2]".
	Where    string
	Check    string
	Min, Max *float64
	// Lo and Hi are the smallest and largest values over the runs.
	Lo, Hi float64
	Runs   int
	// AtMin, AtMax count the runs whose value is the bound exactly.
	AtMin, AtMax int
	// Failed counts runs outside the band (the check's own lines say so).
	Failed int
	// Thin is the check's thin_margin, if it has one.
	Thin string
}

// MarginSet gathers Bands into Margins, by place, in the order first seen.
type MarginSet struct {
	byKey map[string]*Margin
	order []string
}

// Add counts one run's band at the place where (a lesson/step or a
// plan/scene and what it checks). A check read at several ticks of one run
// is added once per tick.
func (ms *MarginSet) Add(where string, b Band) {
	if ms.byKey == nil {
		ms.byKey = map[string]*Margin{}
	}
	key := where + " " + b.Path
	m := ms.byKey[key]
	if m == nil {
		m = &Margin{Where: key, Check: b.Check, Min: b.Min, Max: b.Max, Lo: b.Value, Hi: b.Value, Thin: b.Thin}
		ms.byKey[key] = m
		ms.order = append(ms.order, key)
	}
	m.Runs++
	m.Lo, m.Hi = math.Min(m.Lo, b.Value), math.Max(m.Hi, b.Value)
	const eps = 1e-9
	if b.Min != nil && math.Abs(b.Value-*b.Min) <= eps {
		m.AtMin++
	}
	if b.Max != nil && math.Abs(b.Value-*b.Max) <= eps {
		m.AtMax++
	}
	if !inBand(b.Value, b.Min, b.Max) {
		m.Failed++
	}
}

// List returns the margins in the order their places were first added.
func (ms *MarginSet) List() []Margin {
	out := make([]Margin, 0, len(ms.order))
	for _, k := range ms.order {
		out = append(out, *ms.byKey[k])
	}
	return out
}

// Floor is the least distance each bound must keep from the closest run.
func (m Margin) Floor() float64 { return marginFloorShare * (m.Hi - m.Lo) }

// edge reports whether a bound is the quantity's own edge: a tenth of the
// runs or more sit on it.
func (m Margin) edge(at int) bool {
	return at > 0 && float64(at) >= marginEdgeShare*float64(m.Runs)
}

// Below and Above are the closest run's distance to each bound (negative
// when a run crossed it); ok is false without that bound.
func (m Margin) Below() (float64, bool) {
	if m.Min == nil {
		return 0, false
	}
	return m.Lo - *m.Min, true
}

func (m Margin) Above() (float64, bool) {
	if m.Max == nil {
		return 0, false
	}
	return *m.Max - m.Hi, true
}

// Enforced reports whether the floor applies: enough runs to read a spread.
func (m Margin) Enforced() bool { return m.Runs >= MarginMinRuns }

// OK reports whether every bound keeps the floor (or is the quantity's
// edge), or there are too few runs to tell, or the check says why its
// margin is thin; a run outside the band is never OK.
func (m Margin) OK() bool {
	if m.Failed > 0 {
		return false
	}
	if !m.Enforced() || m.Thin != "" {
		return true
	}
	floor := m.Floor()
	if d, ok := m.Below(); ok && d < floor && !m.edge(m.AtMin) {
		return false
	}
	if d, ok := m.Above(); ok && d < floor && !m.edge(m.AtMax) {
		return false
	}
	return true
}

// String is the report's line:
//
//	ok   slow-hosts/timeout check.all[2] margin on 50 runs: seen 25–33, wanted 20–40: 5 below, 7 above (floor 2) {"kind":"clients",…}
func (m Margin) String() string {
	verdict := "ok  "
	if !m.OK() {
		verdict = "FAIL"
	}
	seen := fmtNum(m.Lo)
	if m.Hi != m.Lo {
		seen += "–" + fmtNum(m.Hi)
	}
	var sides []string
	side := func(d float64, ok bool, at int, word string) {
		if !ok {
			return
		}
		s := fmtNum(d) + " " + word
		if m.edge(at) {
			s += fmt.Sprintf(" (%d of %d runs on it: its edge)", at, m.Runs)
		}
		sides = append(sides, s)
	}
	d, ok := m.Below()
	side(d, ok, m.AtMin, "below")
	d, ok = m.Above()
	side(d, ok, m.AtMax, "above")
	floor := fmt.Sprintf("floor %s", fmtNum(m.Floor()))
	if !m.Enforced() {
		floor = fmt.Sprintf("no floor under %d runs", MarginMinRuns)
	}
	wanted := strings.TrimSuffix(strings.TrimPrefix(want(m.Min, m.Max, ""), " ("), ")")
	out := fmt.Sprintf("%s %s margin on %d runs: seen %s, %s: %s (%s) %s",
		verdict, m.Where, m.Runs, seen, wanted, strings.Join(sides, ", "), floor, m.Check)
	if m.Failed > 0 {
		out += fmt.Sprintf(" [%d runs outside]", m.Failed)
	}
	if m.Thin != "" {
		out += " thin_margin: " + m.Thin
	}
	return out
}
