package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	// Bands are the numbers this line compared with a band: a stated
	// band's value, the expected choice's ranged checks (course.Bands).
	Bands []course.Band
	// Margin, when set, makes this line a margin's: one band over every
	// seed (Report adds them after the seeds' lines; Seed is 0).
	Margin *course.Margin
}

// String is the report's line:
//
//	ok   lightning/cap-34 seed 7 question "Is h5 ejected at 40 s?": the engine answers "yes", as the plan expects
//	FAIL lightning/cap-34 seed 17 question "Is h5 ejected at 40 s?": the engine answers "no", the plan expects "yes" (the frame at 40 s)
func (l Line) String() string {
	if l.Margin != nil {
		return l.Margin.String()
	}
	verdict := "ok  "
	if !l.OK {
		verdict = "FAIL"
	}
	if l.Seed == 0 { // the notes as written, on no run
		return fmt.Sprintf("%s %s/%s %s: %s", verdict, l.Plan, l.Scene, l.What, l.Detail)
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
	// The notes' plain-text numbers: once a scene, whatever the seed.
	var literals []Line
	for pi := range plans {
		for si := range plans[pi].Scenes {
			if plans[pi].Scenes[si].Notes != "" {
				literals = append(literals, literalsLine(&plans[pi], &plans[pi].Scenes[si]))
			}
		}
	}
	runs := newRunCache()
	out := make([][]Line, len(jobs))
	course.Parallel(len(jobs), func(i int) {
		j := jobs[i]
		out[i] = checkScene(&plans[j.p], &plans[j.p].Scenes[j.s], j.seed, runs)
	})
	lines := slices.Concat(literals, slices.Concat(out...))
	if len(seeds) < course.MarginMinRuns {
		return lines
	}
	// The margins (course.Margin): how close the closest seed came to each
	// band the notes state or the expected choice's checks bound.
	var ms course.MarginSet
	for _, l := range lines {
		for _, b := range l.Bands {
			ms.Add(l.Plan+"/"+l.Scene, b)
		}
	}
	for _, m := range ms.List() {
		p, s, _ := strings.Cut(strings.Fields(m.Where)[0], "/")
		lines = append(lines, Line{Plan: p, Scene: s, What: "margin", OK: m.OK(), Margin: &m})
	}
	return lines
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
			l := line(what, true, fmt.Sprintf("the engine answers %q, as the plan expects", got))
			for _, c := range q.Choices {
				if c.Text == q.Answer {
					for _, b := range course.Bands(c.Check, run) {
						b.Path = fmt.Sprintf("question %q %s", c.Text, b.Path)
						l.Bands = append(l.Bands, b)
					}
				}
			}
			out = append(out, l)
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
		default:
			l := line(what, true, fmt.Sprintf("the run shows %s, as the notes state (%s)", got, n.Stated))
			if !ok {
				l = line(what, false, fmt.Sprintf("the run shows %s, the notes state %s", got, n.Stated))
			}
			// A band's value, in or out of it: the margins and the sweep's
			// spreads count the runs outside too.
			if v, err := strconv.ParseFloat(strings.TrimSuffix(got, " s"), 64); err == nil && n.Min != nil {
				l.Bands = []course.Band{{Path: what, Check: n.Stated, Min: n.Min, Max: n.Max, Value: v}}
			}
			out = append(out, l)
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

// Sweep is Report over many seeds, folded into a course.Tally (the
// lessons' sweep, engine/course): each question and number of each scene
// is a claim, each stated band and each ranged check of a question's
// expected answer a spread. Seeds run a few at a time, each few sharing
// their runs, so the sweep holds no more than a few seeds' runs at once.
// progress, if set, is told how many seeds are done after each few.
func Sweep(plans []Plan, seeds []uint64, progress func(done int)) *course.Tally {
	type scene struct{ p, s int }
	var scenes []scene
	for pi := range plans {
		for si := range plans[pi].Scenes {
			scenes = append(scenes, scene{pi, si})
		}
	}
	var t course.Tally
	const chunk = 16
	for start := 0; start < len(seeds); start += chunk {
		part := seeds[start:min(start+chunk, len(seeds))]
		runs := newRunCache()
		out := make([][]Line, len(part)*len(scenes))
		course.Parallel(len(out), func(i int) {
			sc := scenes[i%len(scenes)]
			out[i] = checkScene(&plans[sc.p], &plans[sc.p].Scenes[sc.s], part[i/len(scenes)], runs)
		})
		for si, seed := range part {
			t.Seed(seed)
			for _, sc := range scenes {
				if s := &plans[sc.p].Scenes[sc.s]; s.Notes != "" {
					l := literalsLine(&plans[sc.p], s)
					t.Claim(l.Plan+"/"+l.Scene+" "+l.What, l.OK, l.Detail)
				}
			}
			for _, lines := range out[si*len(scenes) : (si+1)*len(scenes)] {
				for _, l := range lines {
					t.Claim(l.Plan+"/"+l.Scene+" "+l.What, l.OK, l.Detail)
					for _, b := range l.Bands {
						t.Band(l.Plan+"/"+l.Scene, b)
					}
				}
			}
		}
		if progress != nil {
			progress(start + len(part))
		}
	}
	return &t
}
