package challenge

import (
	"fmt"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// Grade is a submission graded on a battery of seeds.
type Grade struct {
	Goals []GoalResult
	// Runs is how many runs it took (scenarios × seeds).
	Runs int
}

// Pass is whether every goal passed on every seed.
func (g *Grade) Pass() bool {
	for _, r := range g.Goals {
		if r.Passed < r.Runs {
			return false
		}
	}
	return len(g.Goals) > 0
}

// Failed lists the goals that failed on some seed.
func (g *Grade) Failed() []GoalResult {
	var out []GoalResult
	for _, r := range g.Goals {
		if r.Passed < r.Runs {
			out = append(out, r)
		}
	}
	return out
}

// GoalResult is one goal over every seed.
type GoalResult struct {
	Scenario, Goal string
	// Words is the goal as the learner reads it.
	Words string
	// Passed of Runs: the seeds it held on.
	Passed, Runs int
	// Values are the goal's number on each seed, in the seeds' order;
	// Bound is the most a passing run's may be (Goal.Bound).
	Values []float64
	Bound  float64
	// First is the first seed (in the seeds' order) it failed on.
	First *Failure
	// Detail is the last seed's detail on a pass, to say what held.
	Detail string
}

// Ref is "scenario/goal".
func (r GoalResult) Ref() string { return r.Scenario + "/" + r.Goal }

// Failure is where a goal failed: the index of the seed in the list
// graded (never the seed itself: a caller's seeds may be secret), the
// moment that decided it, and what the run did.
type Failure struct {
	SeedIndex int
	AtMs      int64
	Detail    string
}

// Each runs f(0) … f(n-1), in parallel or not as the caller can afford
// (course.Parallel on every core for the checker; one at a time within a
// web request's budget).
type Each func(n int, f func(i int))

// Sequential is Each one call after another.
func Sequential(n int, f func(i int)) {
	for i := range n {
		f(i)
	}
}

// Run runs one scenario of the battery with a submission on a seed.
func (c *Challenge) Run(s *Scenario, sub Submission, seed uint64) (scenario.Result, error) {
	p, ok := scenario.Lookup(s.Preset)
	if !ok {
		return scenario.Result{}, fmt.Errorf("%s: unknown preset %q", s.ID, s.Preset)
	}
	sc, cfg, err := settings.Apply(p, c.Layers(s, sub)...)
	if err != nil {
		return scenario.Result{}, err
	}
	return scenario.Run(sc, cfg, seed)
}

// Grade runs every scenario of the battery with sub on every seed and
// measures each goal. The submission must have passed Validate.
func (c *Challenge) Grade(sub Submission, seeds []uint64, each Each) (Grade, error) {
	if each == nil {
		each = Sequential
	}
	type cell struct {
		out []Outcome
		err error
	}
	n := len(c.Scenarios) * len(seeds)
	cells := make([]cell, n)
	each(n, func(i int) {
		s := &c.Scenarios[i/len(seeds)]
		run, err := c.Run(s, sub, seeds[i%len(seeds)])
		if err != nil {
			cells[i].err = err
			return
		}
		for j := range s.Goals {
			cells[i].out = append(cells[i].out, s.Goals[j].Measure(&run))
		}
	})
	g := Grade{Runs: n}
	for si := range c.Scenarios {
		s := &c.Scenarios[si]
		for gi := range s.Goals {
			r := GoalResult{Scenario: s.ID, Goal: s.Goals[gi].ID, Words: s.Goals[gi].Words(), Runs: len(seeds), Bound: s.Goals[gi].Bound()}
			for k := range seeds {
				cl := cells[si*len(seeds)+k]
				if cl.err != nil {
					return Grade{}, fmt.Errorf("%s: %w", s.ID, cl.err)
				}
				o := cl.out[gi]
				r.Values = append(r.Values, o.Value)
				if o.Pass {
					r.Passed++
					r.Detail = o.Detail
				} else if r.First == nil {
					r.First = &Failure{SeedIndex: k, AtMs: o.AtMs, Detail: o.Detail}
				}
			}
			g.Goals = append(g.Goals, r)
		}
	}
	return g, nil
}
