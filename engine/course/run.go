package course

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// Settings are the settings a step is meant to end with: the lesson's
// Start with the step's Settings laid over it (a step with its own preset:
// its Settings alone). An empty step id means the Start settings alone
// (what the page opens with).
func Settings(l Lesson, step string) (map[string]string, error) {
	if step == "" {
		return Merge(l.Start), nil
	}
	s, ok := l.StepByID(step)
	if !ok {
		return nil, fmt.Errorf("%s: no step %q", l.ID, step)
	}
	if s.Preset != "" {
		return Merge(s.Settings), nil
	}
	return Merge(l.Start, s.Settings), nil
}

// StartSettings are what the page loads for a step (step "": the lesson's
// start): the lesson's Start, or nothing over a step's own preset, which
// its button loads as it is.
func StartSettings(l Lesson, step string) map[string]string {
	if s, ok := l.StepByID(step); ok && s.Preset != "" {
		return map[string]string{}
	}
	return Merge(l.Start)
}

// Scenario builds the lesson's scenario and outlier_detection config for a
// step (or the start, with step ""), with overlay (the learner's own
// changes, by the same names) laid on top.
func Scenario(l Lesson, step string, overlay map[string]string) (scenario.Scenario, error) {
	name := l.PresetFor(step)
	p, ok := scenario.Lookup(name)
	if !ok {
		return scenario.Scenario{}, fmt.Errorf("%s: unknown preset %q", l.ID, name)
	}
	set, err := Settings(l, step)
	if err != nil {
		return scenario.Scenario{}, err
	}
	sc, _, err := settings.Apply(p, set, overlay)
	if err != nil {
		return scenario.Scenario{}, fmt.Errorf("%s: %w", l.ID, err)
	}
	return sc, nil
}

// RunLesson runs the lesson's preset (or the step's own) with its start
// settings, the step's settings (step "" for none) and overlay, on the
// lesson's fixed seed. The returned Result's Config is the
// outlier_detection block that ran.
func RunLesson(l Lesson, step string, overlay map[string]string) (scenario.Result, error) {
	sc, err := Scenario(l, step, overlay)
	if err != nil {
		return scenario.Result{}, err
	}
	return scenario.Run(sc, sc.Outlier, l.SeedOrDefault())
}

// RunSeed is RunLesson on another seed than the lesson's own: the
// checker proves a lesson's claims for several seeds.
func RunSeed(l Lesson, step string, overlay map[string]string, seed uint64) (scenario.Result, error) {
	l.Seed = seed
	return RunLesson(l, step, overlay)
}

// State is a set of inputs a learner can have on a lesson page: a
// scenario and the settings laid over it.
type State struct {
	// Name says how the learner got there: "start" (the page as it
	// opens), "start(preset=burst)" (a step's button loaded that
	// scenario), "after cap-34" (the settings step cap-34 leads to),
	// "intended" (the step's own settings).
	Name     string
	Preset   string
	Settings map[string]string
	// Step is the step whose settings these are ("" for a start).
	Step string
}

// key identifies the run a state makes, whatever its name.
func (st State) key() string { return st.Preset + "|" + fmtSettings(st.Settings) }

// Key identifies the run a state makes on a seed, whatever its name: a
// cache's key (workshop plans share runs between scenes, engine/plan).
func (st State) Key(seed uint64) string { return st.key() + "|" + strconv.FormatUint(seed, 10) }

// Run runs the state on a seed.
func (st State) Run(seed uint64) (scenario.Result, error) {
	p, ok := scenario.Lookup(st.Preset)
	if !ok {
		return scenario.Result{}, fmt.Errorf("unknown preset %q", st.Preset)
	}
	sc, _, err := settings.Apply(p, st.Settings)
	if err != nil {
		return scenario.Result{}, err
	}
	return scenario.Run(sc, sc.Outlier, seed)
}

// Intended is the state a step leads to: its check must pass there.
func Intended(l Lesson, step string) (State, error) {
	set, err := Settings(l, step)
	if err != nil {
		return State{}, err
	}
	return State{Name: "intended", Preset: l.PresetFor(step), Settings: set, Step: step}, nil
}

// Before lists the states the learner can be in before doing a step, on
// the step's scenario (a check about another scenario cannot be compared
// with it): the lesson's start, the scenario of each step button up to
// this step (a step with its own preset loads it as it is), and what each
// earlier step leads to. The cursor is not part of a state: the checker
// reads the whole run, the most the learner can have played. A state that
// makes the same run as an earlier one is listed once, under the first
// name. Unless the step says passes_before, its check must fail in each.
func Before(l Lesson, step string) ([]State, error) {
	idx := slices.IndexFunc(l.Steps, func(s Step) bool { return s.ID == step })
	if idx < 0 {
		return nil, fmt.Errorf("%s: no step %q", l.ID, step)
	}
	preset := l.PresetFor(step)
	var out []State
	seen := map[string]bool{}
	add := func(st State) {
		if st.Preset != preset || seen[st.key()] {
			return
		}
		seen[st.key()] = true
		out = append(out, st)
	}
	add(State{Name: "start", Preset: l.Preset, Settings: Merge(l.Start)})
	for i := 0; i <= idx; i++ {
		if s := &l.Steps[i]; s.Preset != "" {
			add(State{Name: "start(preset=" + s.Preset + ")", Preset: s.Preset, Settings: map[string]string{}})
		}
		if i < idx {
			st, err := Intended(l, l.Steps[i].ID)
			if err != nil {
				return nil, err
			}
			st.Name = "after " + st.Step
			add(st)
		}
	}
	return out, nil
}

// CheckLine is one line of the headless report: one step's check, on one
// seed, in one state.
type CheckLine struct {
	Lesson string
	Step   string
	Seed   uint64
	// State is "intended" (the step's settings: the check must pass) or
	// one of Before's names (the check must fail there).
	State string
	// Values are the settings the state's step sets ("max_ejection_percent=34"),
	// with its preset if the step loads one.
	Values string
	// WantPass is what the lesson claims; Pass what the engine did.
	WantPass bool
	Pass     bool
	Detail   string
	// Err is set when the run itself failed (the check could not be
	// evaluated); such a line is never OK.
	Err string
	// PassesBefore is the step's reason on the line that stands for its
	// before-states, which are then not checked.
	PassesBefore string
	// Bands are the numbers the intended state's ranged checks compared
	// (Bands), for the margins.
	Bands []Band
	// Margin, when set, makes this line a margin's: one ranged check over
	// every seed (Report adds them after the seeds' lines).
	Margin *Margin
}

// OK reports whether the engine did what the lesson claims.
func (c CheckLine) OK() bool {
	if c.Margin != nil {
		return c.Margin.OK()
	}
	return c.Err == "" && (c.PassesBefore != "" || c.Pass == c.WantPass)
}

// String is the report's line: verdict, lesson/step, seed, state, what
// the engine did against what the lesson claims, and the numbers compared:
//
//	ok   cap/cap-34 seed 1 intended(max_ejection_percent=34): pass, claimed pass: h5 eject …
//	ok   cap/cap-34 seed 1 start: fail, claimed fail: h5 eject (success_rate) at 40 s: 0 …
//	FAIL cap/cap-17 seed 1 after cap-34(max_ejection_percent=34): pass, claimed fail: …
//	ok   cap/overflow seed 1 before: not checked, passes_before: looking step: …
func (c CheckLine) String() string {
	if c.Margin != nil {
		return c.Margin.String()
	}
	verdict := "ok  "
	if !c.OK() {
		verdict = "FAIL"
	}
	word := func(b bool) string {
		if b {
			return "pass"
		}
		return "fail"
	}
	head := fmt.Sprintf("%s %s/%s seed %d", verdict, c.Lesson, c.Step, c.Seed)
	if c.PassesBefore != "" {
		return fmt.Sprintf("%s before: not checked, passes_before: %s", head, c.PassesBefore)
	}
	state := c.State
	switch {
	case c.State == "start" || strings.HasPrefix(c.State, "start("):
	case c.Values == "":
		state += "(as start)"
	default:
		state += "(" + c.Values + ")"
	}
	if c.Err != "" {
		return fmt.Sprintf("%s %s: error, claimed %s: %s", head, state, word(c.WantPass), c.Err)
	}
	return fmt.Sprintf("%s %s: %s, claimed %s: %s", head, state, word(c.Pass), word(c.WantPass), c.Detail)
}

// Report checks every step of every lesson on each seed (nil: each
// lesson's own seed): its check must pass with the settings it leads to,
// and, unless it says passes_before, fail in every state Before lists.
// Checks read the whole run. Lessons and seeds are checked in parallel;
// runs are shared within a lesson and seed. Lines come in lesson, seed,
// step order.
func Report(lessons []Lesson, seeds []uint64) []CheckLine {
	type job struct {
		l    Lesson
		seed uint64
	}
	var jobs []job
	for _, l := range lessons {
		ss := seeds
		if len(ss) == 0 {
			ss = []uint64{l.SeedOrDefault()}
		}
		for _, seed := range ss {
			jobs = append(jobs, job{l, seed})
		}
	}
	out := make([][]CheckLine, len(jobs))
	Parallel(len(jobs), func(i int) { out[i] = reportLesson(jobs[i].l, jobs[i].seed) })
	lines := slices.Concat(out...)
	return append(lines, marginLines(lines)...)
}

// marginLines are the margins of the intended states' ranged checks over
// the seeds (margin.go), one line each, in lesson and step order; none
// under MarginMinRuns seeds, where a spread says too little to judge.
func marginLines(lines []CheckLine) []CheckLine {
	seeds := map[uint64]bool{}
	var ms MarginSet
	for _, l := range lines {
		seeds[l.Seed] = true
		for _, b := range l.Bands {
			ms.Add(l.Lesson+"/"+l.Step, b)
		}
	}
	if len(seeds) < MarginMinRuns {
		return nil
	}
	var out []CheckLine
	for _, m := range ms.List() {
		lesson, step, _ := strings.Cut(strings.Fields(m.Where)[0], "/")
		out = append(out, CheckLine{Lesson: lesson, Step: step, State: "margin", WantPass: true, Pass: m.OK(), Margin: &m})
	}
	return out
}

// Parallel calls f(0) … f(n-1), on as many goroutines as there are
// cores (GOMAXPROCS), and returns when every call has: the checkers'
// runs (Report, and engine/plan's) are independent and CPU-bound.
func Parallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// reportLesson is Report for one lesson on one seed.
func reportLesson(l Lesson, seed uint64) []CheckLine {
	type run struct {
		res scenario.Result
		err error
	}
	runs := map[string]*run{}
	get := func(st State) *run {
		r, ok := runs[st.key()]
		if !ok {
			res, err := st.Run(seed)
			r = &run{res, err}
			runs[st.key()] = r
		}
		return r
	}
	// values names what a state's step sets, as the line shows it.
	values := func(st State) string {
		s, ok := l.StepByID(st.Step)
		if !ok {
			return ""
		}
		v := fmtSettings(s.Settings)
		if s.Preset != "" {
			v = strings.TrimSpace("preset=" + s.Preset + " " + v)
		}
		return v
	}
	var out []CheckLine
	for i := range l.Steps {
		s := &l.Steps[i]
		line := func(st State, want bool) CheckLine {
			c := CheckLine{Lesson: l.ID, Step: s.ID, Seed: seed, State: st.Name, Values: values(st), WantPass: want}
			r := get(st)
			if r.err != nil {
				c.Err = r.err.Error()
				return c
			}
			res := Evaluate(s.Check, &r.res, WholeRun)
			c.Pass, c.Detail = res.Pass, res.Detail
			if want {
				c.Bands = Bands(s.Check, &r.res)
			}
			return c
		}
		st, err := Intended(l, s.ID)
		if err != nil {
			out = append(out, CheckLine{Lesson: l.ID, Step: s.ID, Seed: seed, State: "intended", WantPass: true, Err: err.Error()})
			continue
		}
		out = append(out, line(st, true))
		if !s.MustFailBefore() {
			out = append(out, CheckLine{Lesson: l.ID, Step: s.ID, Seed: seed, State: "before", PassesBefore: *s.PassesBefore})
			continue
		}
		before, err := Before(l, s.ID)
		if err != nil {
			out = append(out, CheckLine{Lesson: l.ID, Step: s.ID, Seed: seed, State: "before", Err: err.Error()})
			continue
		}
		for _, b := range before {
			out = append(out, line(b, false))
		}
	}
	return out
}

// fmtSettings writes settings as "a=1 b=2", sorted.
func fmtSettings(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}
