package challenge

import (
	"fmt"
	"math"
	"strings"
)

// Verdict is `challenge -check` on one challenge: its reference must pass
// every goal on every seed, and its start (the shipped defaults, what a
// learner submits untouched) must fail at least one, or the challenge
// asks nothing.
type Verdict struct {
	Challenge string
	Reference Grade
	Defaults  Grade
	// Err is a run that could not be made (a challenge that parses runs).
	Err error
}

// OK is whether the challenge holds.
func (v *Verdict) OK() bool {
	return v.Err == nil && v.Reference.Pass() && !v.Defaults.Pass()
}

// Lines is the verdict as `challenge -check` prints it: one line a goal
// for the reference (k of n seeds), the goals the defaults fail, then the
// verdict.
func (v *Verdict) Lines() []string {
	if v.Err != nil {
		return []string{fmt.Sprintf("FAIL %s: %v", v.Challenge, v.Err)}
	}
	var out []string
	for _, r := range v.Reference.Goals {
		verdict := "ok  "
		line := fmt.Sprintf("%s/%s reference: %s: %d of %d seeds (worst %s, bound %s)", v.Challenge, r.Ref(), r.Words, r.Passed, r.Runs, fmtNum(worst(r.Values)), fmtNum(r.Bound))
		if r.Passed < r.Runs {
			verdict = "FAIL"
			line += fmt.Sprintf(" (first fails on the %s seed graded: %s)", ordinal(r.First.SeedIndex+1), r.First.Detail)
		}
		out = append(out, verdict+" "+line)
	}
	failed := v.Defaults.Failed()
	for _, r := range failed {
		out = append(out, fmt.Sprintf("ok   %s/%s defaults fail: %s: %d of %d seeds", v.Challenge, r.Ref(), r.Words, r.Passed, r.Runs))
	}
	if len(failed) == 0 {
		out = append(out, fmt.Sprintf("FAIL %s defaults: pass every goal on every seed, so the challenge asks nothing", v.Challenge))
	}
	verdict := "ok  "
	if !v.OK() {
		verdict = "FAIL"
	}
	out = append(out, fmt.Sprintf("%s %s: the reference passes %d of %d goals on every seed; the defaults fail %d", verdict, v.Challenge, passedAll(v.Reference), len(v.Reference.Goals), len(failed)))
	return out
}

// worst is the largest value (every goal's number is better lower).
func worst(vs []float64) float64 {
	w := math.Inf(-1)
	for _, v := range vs {
		w = max(w, v)
	}
	return w
}

func passedAll(g Grade) int {
	return len(g.Goals) - len(g.Failed())
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// Check grades every challenge's reference and defaults on seeds.
func Check(cs []Challenge, seeds []uint64, each Each) []Verdict {
	out := make([]Verdict, len(cs))
	for i := range cs {
		c := &cs[i]
		v := Verdict{Challenge: c.ID}
		v.Reference, v.Err = c.Grade(c.Reference, seeds, each)
		if v.Err == nil {
			v.Defaults, v.Err = c.Grade(nil, seeds, each)
		}
		out[i] = v
	}
	return out
}

// Summary is the report's last line.
func Summary(vs []Verdict) string {
	var bad []string
	for _, v := range vs {
		if !v.OK() {
			bad = append(bad, v.Challenge)
		}
	}
	if len(bad) == 0 {
		return fmt.Sprintf("%d challenges: every reference passes, every default fails", len(vs))
	}
	return fmt.Sprintf("%d challenges, %d not as claimed: %s", len(vs), len(bad), strings.Join(bad, ", "))
}
