package course

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A stated number is a claim about Envoy under the lesson's traffic, so it
// must hold for any seed, not only for the fifty Report runs in make test.
// The sweep (`lessons -check -sweep`, `plan -check -sweep`) runs the same
// checks over many seeds, hundreds or thousands, and reports, instead of
// a line per seed, one line per claim (how many seeds it failed on, and
// which) and one per ranged check (the values' distribution: its
// quantiles, and how far each bound lies in the tail).

// SweepRare is how rarely a bound may be crossed: by fewer than one run
// in ten thousand. A sweep of a few thousand seeds cannot see that directly,
// so each bound's tail is also estimated from a normal fit of the runs
// (the mean and σ of each run's value, or of its lowest or highest over a
// window): a bound less than about 3.7σ from the mean is reported as
// crossed more often than that, unless it is the quantity's own edge (a
// tenth of the runs on it, as for the margins) or the check says why its
// margin is thin (thin_margin; a count of rare events is not normal, and
// its author says so with the numbers).
const SweepRare = 1e-4

// sweepListed is how many failing seeds a claim's line names.
const sweepListed = 12

// Tally gathers the verdicts and bands of many seeds, a seed at a time,
// keeping counts and one number per run rather than the lines: the
// sweep's memory does not grow with the detail of each line. Each seed's
// lines are added together, after Seed (SweepLessons and engine/plan's
// Sweep fold them so, in the order of the seeds asked for), so that the
// lines come out in the order of the first seed's and each claim's
// failing seeds in the order asked.
type Tally struct {
	seeds   int
	last    uint64
	claims  map[string]*Claim
	corder  []string
	spreads map[string]*Spread
	sorder  []string
}

// Claim is one check in one state (a lesson's step in its intended state
// or a state before it; a plan's question or a number of its notes) over
// every seed swept.
type Claim struct {
	// Where names it: "cap/cap-34 intended", "lightning/cap-34 notes {{…}}".
	Where  string
	Runs   int
	Failed int
	// Seeds are the first failing seeds, in order (up to sweepListed).
	Seeds []uint64
	// Detail is the first failure's detail.
	Detail string
}

// OK reports whether the claim held on every seed.
func (c Claim) OK() bool { return c.Failed == 0 }

func (c Claim) String() string {
	if c.OK() {
		return fmt.Sprintf("ok   %s: holds on %d of %d seeds", c.Where, c.Runs, c.Runs)
	}
	var seeds []string
	for _, s := range c.Seeds {
		seeds = append(seeds, fmt.Sprint(s))
	}
	if c.Failed > len(c.Seeds) {
		seeds = append(seeds, "…")
	}
	return fmt.Sprintf("FAIL %s: fails on %d of %d seeds (%s): %s",
		c.Where, c.Failed, c.Runs, strings.Join(seeds, ", "), c.Detail)
}

// Spread is one ranged check over every seed swept: each run's value (a
// check read at several ticks of a run: its lowest and its highest).
type Spread struct {
	Where, Check string
	Min, Max     *float64
	Thin         string
	// Lows and Highs are each run's smallest and largest value, sorted.
	Lows, Highs []float64
	// Below and Above count the runs with a value under Min, over Max;
	// AtMin and AtMax the runs with a value on it exactly.
	Below, Above int
	AtMin, AtMax int

	seed         uint64
	open         bool
	curLo, curHi float64
}

// Runs is how many runs the check compared a number on.
func (s *Spread) Runs() int { return len(s.Lows) }

// add counts one value of a run.
func (s *Spread) add(seed uint64, v float64) {
	if s.open && s.seed != seed {
		s.flush()
	}
	if !s.open {
		s.open, s.seed, s.curLo, s.curHi = true, seed, v, v
		return
	}
	s.curLo, s.curHi = math.Min(s.curLo, v), math.Max(s.curHi, v)
}

// flush closes the run being added.
func (s *Spread) flush() {
	if !s.open {
		return
	}
	s.open = false
	s.Lows = append(s.Lows, s.curLo)
	s.Highs = append(s.Highs, s.curHi)
	const eps = 1e-9
	if s.Min != nil {
		if s.curLo < *s.Min-eps || math.IsNaN(s.curLo) {
			s.Below++
		}
		if math.Abs(s.curLo-*s.Min) <= eps {
			s.AtMin++
		}
	}
	if s.Max != nil {
		if s.curHi > *s.Max+eps || math.IsNaN(s.curHi) {
			s.Above++
		}
		if math.Abs(s.curHi-*s.Max) <= eps {
			s.AtMax++
		}
	}
}

// counts is how many runs gave each value, "0: 1979, 1: 1008, 2: 13",
// for a count that takes a few whole values (one per run): a normal fit
// says little about its tail, the counts say more. "" otherwise.
func (s *Spread) counts() string {
	const most = 8
	var vals []float64
	n := map[float64]int{}
	for i, v := range s.Lows {
		if v != s.Highs[i] || v != math.Trunc(v) {
			return ""
		}
		if n[v] == 0 {
			if len(vals) == most {
				return ""
			}
			vals = append(vals, v)
		}
		n[v]++
	}
	if len(vals) < 2 {
		return ""
	}
	var parts []string
	for _, v := range vals { // Lows is sorted
		parts = append(parts, fmt.Sprintf("%s: %d", fmtNum(v), n[v]))
	}
	return strings.Join(parts, ", ")
}

// Quantile is the q-quantile (0 ≤ q ≤ 1) of sorted values, by nearest
// rank.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	if len(v) > 1 {
		sd = math.Sqrt(sd / float64(len(v)-1))
	}
	return mean, sd
}

// Tail is a bound's side of the distribution: how many runs crossed it,
// how far it lies from the mean in standard deviations, and the share of
// runs a normal fit puts beyond it.
type Tail struct {
	Bound   float64
	Crossed int
	Z, P    float64
	// Edge: a tenth of the runs or more sit on the bound exactly.
	Edge bool
}

func (s *Spread) tail(min bool) (Tail, bool) {
	vals, b, crossed, at := s.Highs, s.Max, s.Above, s.AtMax
	if min {
		vals, b, crossed, at = s.Lows, s.Min, s.Below, s.AtMin
	}
	if b == nil || len(vals) == 0 {
		return Tail{}, false
	}
	mean, sd := meanSD(vals)
	if sd <= 1e-9*math.Max(1, math.Abs(mean)) {
		sd = 0 // every run the same, but for rounding
	}
	d := mean - *b
	if !min {
		d = *b - mean
	}
	t := Tail{Bound: *b, Crossed: crossed, Edge: at > 0 && float64(at) >= marginEdgeShare*float64(len(vals))}
	switch {
	case sd > 0:
		t.Z = d / sd
	case d > 0:
		t.Z = math.Inf(1)
	default:
		t.Z = math.Inf(-1)
	}
	t.P = 0.5 * math.Erfc(t.Z/math.Sqrt2)
	return t, true
}

// Rare reports whether a side's bound is crossed rarely enough: by no run
// swept and, unless it is the quantity's edge or the check says why its
// margin is thin, by fewer than SweepRare of runs under a normal fit.
func (s *Spread) rare(t Tail) bool {
	if t.Crossed > 0 {
		return false
	}
	return t.Edge || s.Thin != "" || t.P < SweepRare
}

// OK reports whether every bound is rare enough to cross (rare).
func (s *Spread) OK() bool {
	for _, min := range []bool{true, false} {
		if t, ok := s.tail(min); ok && !s.rare(t) {
			return false
		}
	}
	return true
}

// String is the spread's line:
//
//	ok   cap/cap-34 check.all[2] on 2000 runs: wanted 20–40, seen 25–33 (median 29); ≥ 20: 0 below, lowest 25, 0.1% 25.4, 1% 26.1, 4.2σ (normal tail 1e-5); ≤ 40: … {"kind":…}
func (s *Spread) String() string {
	verdict := "ok  "
	if !s.OK() {
		verdict = "FAIL"
	}
	wanted := strings.TrimSuffix(strings.TrimPrefix(want(s.Min, s.Max, ""), " ("), ")")
	lo, hi := Quantile(s.Lows, 0), Quantile(s.Highs, 1)
	seen := fmtNum(lo)
	if hi != lo {
		seen += "–" + fmtNum(hi)
	}
	parts := []string{fmt.Sprintf("%s %s %s on %d runs: %s, seen %s (median %s)",
		verdict, s.Where, "spread", s.Runs(), wanted, seen, fmtNum(Quantile(s.Lows, 0.5)))}
	side := func(min bool) {
		t, ok := s.tail(min)
		if !ok {
			return
		}
		var p string
		if min {
			p = fmt.Sprintf("≥ %s: %d runs below; lowest %s, 0.1%% %s, 1%% %s", fmtNum(t.Bound), t.Crossed,
				fmtNum(lo), fmtNum(Quantile(s.Lows, 0.001)), fmtNum(Quantile(s.Lows, 0.01)))
		} else {
			p = fmt.Sprintf("≤ %s: %d runs above; 99%% %s, 99.9%% %s, highest %s", fmtNum(t.Bound), t.Crossed,
				fmtNum(Quantile(s.Highs, 0.99)), fmtNum(Quantile(s.Highs, 0.999)), fmtNum(hi))
		}
		switch {
		case t.Crossed > 0:
		case t.Edge:
			p += "; the quantity's edge"
		case math.IsInf(t.Z, 1):
			p += "; every run the same"
		default:
			p += fmt.Sprintf("; %.1fσ from the mean (normal tail %s)", t.Z, fmtTail(t.P))
		}
		parts = append(parts, p)
	}
	side(true)
	side(false)
	if h := s.counts(); h != "" {
		parts = append(parts, "runs by value "+h)
	}
	out := strings.Join(parts, "; ") + " " + s.Check
	if s.Thin != "" {
		out += " thin_margin: " + s.Thin
	}
	return out
}

// fmtTail writes a tail's share with one significant digit, "< 1e-9"
// for what is too small to mean anything.
func fmtTail(p float64) string {
	if p < 1e-9 {
		return "< 1e-9"
	}
	return fmt.Sprintf("%.1g", p)
}

// Seed starts a seed's lines: each seed once, its lines together (in
// the order the seeds were asked for, which a claim's failing seeds keep).
func (t *Tally) Seed(seed uint64) {
	if t.seeds > 0 && seed == t.last {
		panic(fmt.Sprintf("course.Tally: seed %d twice", seed))
	}
	t.seeds++
	t.last = seed
}

// Seeds is how many seeds were added.
func (t *Tally) Seeds() int { return t.seeds }

// Claim counts one verdict of the current seed.
func (t *Tally) Claim(where string, ok bool, detail string) {
	if t.claims == nil {
		t.claims = map[string]*Claim{}
	}
	c := t.claims[where]
	if c == nil {
		c = &Claim{Where: where}
		t.claims[where] = c
		t.corder = append(t.corder, where)
	}
	c.Runs++
	if ok {
		return
	}
	if c.Failed == 0 {
		c.Detail = detail
	}
	c.Failed++
	if len(c.Seeds) < sweepListed {
		c.Seeds = append(c.Seeds, t.last)
	}
}

// Band counts one number a ranged check compared on the current seed, at
// the place where (a lesson/step or plan/scene).
func (t *Tally) Band(where string, b Band) {
	if t.spreads == nil {
		t.spreads = map[string]*Spread{}
	}
	key := where + " " + b.Path
	s := t.spreads[key]
	if s == nil {
		s = &Spread{Where: key, Check: b.Check, Min: b.Min, Max: b.Max, Thin: b.Thin}
		t.spreads[key] = s
		t.sorder = append(t.sorder, key)
	}
	s.add(t.last, b.Value)
}

// Claims are the claims, in the order first seen.
func (t *Tally) Claims() []Claim {
	out := make([]Claim, 0, len(t.corder))
	for _, k := range t.corder {
		out = append(out, *t.claims[k])
	}
	return out
}

// Spreads are the ranged checks, in the order first seen, their values
// sorted.
func (t *Tally) Spreads() []*Spread {
	out := make([]*Spread, 0, len(t.sorder))
	for _, k := range t.sorder {
		s := t.spreads[k]
		s.flush()
		slices.Sort(s.Lows)
		slices.Sort(s.Highs)
		out = append(out, s)
	}
	return out
}

// sweepChunk is how many seeds a sweep runs at once before folding their
// lines into the tally in order: enough to keep the cores busy, few enough
// that the lines in between stay small.
const sweepChunk = 16

// SweepLessons is Report over many seeds, folded into a Tally: each
// step's check in each state is a claim (the intended state must pass,
// each state before it fail), each of the intended state's ranged checks
// a spread. progress, if set, is told how many seeds are done after each
// chunk.
func SweepLessons(lessons []Lesson, seeds []uint64, progress func(done int)) *Tally {
	var t Tally
	for start := 0; start < len(seeds); start += sweepChunk {
		chunk := seeds[start:min(start+sweepChunk, len(seeds))]
		out := make([][]CheckLine, len(chunk)*len(lessons))
		Parallel(len(out), func(i int) { out[i] = reportLesson(lessons[i%len(lessons)], chunk[i/len(lessons)]) })
		for si, seed := range chunk {
			t.Seed(seed)
			for li := range lessons {
				for _, l := range out[si*len(lessons)+li] {
					l.fold(&t)
				}
			}
		}
		if progress != nil {
			progress(start + len(chunk))
		}
	}
	return &t
}

// fold adds a seed's line to a tally: its verdict and its bands.
func (c CheckLine) fold(t *Tally) {
	where := c.Lesson + "/" + c.Step + " " + c.State
	if c.Values != "" && c.State != "intended" {
		where += "(" + c.Values + ")"
	}
	detail := c.Detail
	if c.Err != "" {
		detail = "error: " + c.Err
	} else if c.Pass != c.WantPass && c.PassesBefore == "" {
		detail = fmt.Sprintf("%s, claimed %s: %s", passWord(c.Pass), passWord(c.WantPass), c.Detail)
	}
	t.Claim(where, c.OK(), detail)
	for _, b := range c.Bands {
		t.Band(c.Lesson+"/"+c.Step, b)
	}
}

func passWord(b bool) string {
	if b {
		return "pass"
	}
	return "fail"
}
