package plan

import (
	"fmt"
	"slices"
	"sync"

	"outlierlab/engine/course"
	"outlierlab/engine/scenario"
)

// Line is one verdict of `plan -check`: one scene's question or one of its
// notes' numbers, on one seed.
type Line struct {
	Plan, Scene string
	Seed        uint64
	// What is "question" or the number's "{{…}}".
	What string
	OK   bool
	// Detail says what the engine did: its answer against the plan's, the
	// run's value against the stated one, or why it could not tell.
	Detail string
}

// String is the report's line:
//
//	ok   lightning/cap-34 seed 7 question "Is h5 ejected at 40 s?": the engine answers "yes", as the plan expects
//	FAIL lightning/cap-34 seed 17 question "Is h5 ejected at 40 s?": the engine answers "no", the plan expects "yes" (the frame at 40 s)
func (l Line) String() string {
	verdict := "ok  "
	if !l.OK {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%s %s/%s seed %d %s: %s", verdict, l.Plan, l.Scene, l.Seed, l.What, l.Detail)
}

// Report checks every scene of every plan on each seed: its question's
// expected answer is the engine's, and every number of its notes
// resolves, a stated one to what it states. Scenes that make the same run
// (one preset and settings) share it, within a seed and across plans;
// seeds run in parallel. Lines come in plan, scene, seed order.
func Report(plans []Plan, seeds []uint64) []Line {
	type job struct {
		p, s int
		seed uint64
	}
	var jobs []job
	for pi := range plans {
		for si := range plans[pi].Scenes {
			for _, seed := range seeds {
				jobs = append(jobs, job{pi, si, seed})
			}
		}
	}
	runs := newRunCache()
	out := make([][]Line, len(jobs))
	course.Parallel(len(jobs), func(i int) {
		j := jobs[i]
		out[i] = checkScene(&plans[j.p], &plans[j.p].Scenes[j.s], j.seed, runs)
	})
	return slices.Concat(out...)
}

// checkScene is Report for one scene on one seed.
func checkScene(p *Plan, s *Scene, seed uint64, runs *runCache) []Line {
	line := func(what string, ok bool, detail string) Line {
		return Line{Plan: p.ID, Scene: s.ID, Seed: seed, What: what, OK: ok, Detail: detail}
	}
	nums := s.Numbers()
	if s.Question == nil && len(nums) == 0 {
		return nil
	}
	run, err := runs.get(s, seed)
	if err != nil {
		return []Line{line("run", false, err.Error())}
	}
	var out []Line
	if q := s.Question; q != nil {
		what := fmt.Sprintf("question %q", q.Words())
		got, detail, err := q.EngineAnswer(run)
		switch {
		case err != nil:
			out = append(out, line(what, false, "the engine has no answer: "+err.Error()))
		case got == q.Answer:
			out = append(out, line(what, true, fmt.Sprintf("the engine answers %q, as the plan expects", got)))
		default:
			out = append(out, line(what, false, fmt.Sprintf("the engine answers %q, the plan expects %q (%s)", got, q.Answer, detail)))
		}
	}
	for _, n := range nums {
		what := "notes {{" + n.Raw + "}}"
		ok, got, err := n.Holds(run)
		switch {
		case err != nil:
			out = append(out, line(what, false, "does not resolve: "+err.Error()))
		case n.Stated == "":
			out = append(out, line(what, true, "the run shows "+got))
		case ok:
			out = append(out, line(what, true, fmt.Sprintf("the run shows %s, as the notes state (%s)", got, n.Stated)))
		default:
			out = append(out, line(what, false, fmt.Sprintf("the run shows %s, the notes state %s", got, n.Stated)))
		}
	}
	return out
}

// runCache holds the runs of one Report, by preset, settings and seed:
// a plan's scenes often show one run at several moments, and the two
// shipped plans share scenes.
type runCache struct {
	mu   sync.Mutex
	runs map[string]*cachedRun
}

type cachedRun struct {
	once sync.Once
	res  scenario.Result
	err  error
}

func newRunCache() *runCache { return &runCache{runs: map[string]*cachedRun{}} }

func (c *runCache) get(s *Scene, seed uint64) (*scenario.Result, error) {
	key := s.State.Key(seed)
	c.mu.Lock()
	r := c.runs[key]
	if r == nil {
		r = &cachedRun{}
		c.runs[key] = r
	}
	c.mu.Unlock()
	r.once.Do(func() { r.res, r.err = s.State.Run(seed) })
	return &r.res, r.err
}
