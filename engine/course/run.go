package course

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"outlierlab/engine/scenario"
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

// StartSettings are what a step's check is compared against for
// fails_at_start: the lesson's Start, or nothing over a step's own preset.
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
	sc, _, err := build(p, set, overlay)
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

// RunStart runs what a step's fails_at_start compares against: the
// lesson's start, or a step's own preset as it is.
func RunStart(l Lesson, step string) (scenario.Result, error) {
	s, ok := l.StepByID(step)
	if !ok {
		return scenario.Result{}, fmt.Errorf("%s: no step %q", l.ID, step)
	}
	if s.Preset == "" {
		return RunLesson(l, "", nil)
	}
	p, ok := scenario.Lookup(s.Preset)
	if !ok {
		return scenario.Result{}, fmt.Errorf("%s: unknown preset %q", l.ID, s.Preset)
	}
	sc := p.Scenario()
	return scenario.Run(sc, sc.Outlier, l.SeedOrDefault())
}

// CheckLine is one line of the headless report: one step's check under one
// set of settings.
type CheckLine struct {
	Lesson string
	Step   string
	// Settings is "intended" (start + the step's settings: the check must
	// pass) or "start" (the lesson's start settings, for a step with
	// fails_at_start: the check must fail).
	Settings string
	// Values are the step's own settings ("max_ejection_percent=34"), or
	// the lesson's start settings on a "start" line.
	Values string
	// WantPass is what the lesson claims; Pass what the engine did.
	WantPass bool
	Pass     bool
	Detail   string
	// Err is set when the run itself failed (the check could not be
	// evaluated); such a line is never OK.
	Err string
}

// OK reports whether the engine did what the lesson claims.
func (c CheckLine) OK() bool { return c.Err == "" && c.Pass == c.WantPass }

// String is the report's line: verdict, lesson/step, which settings, what
// the engine did against what the lesson claims, and the numbers compared:
//
//	ok   cap/cap-34 intended(max_ejection_percent=34): pass, claimed pass: h5 eject …
//	ok   cap/cap-34 start: fail, claimed fail: h5 eject (success_rate) at 40 s: 0 …
func (c CheckLine) String() string {
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
	settings := c.Settings
	switch {
	case c.Settings == "intended" && c.Values == "":
		settings += "(as start)"
	case c.Settings == "intended" || strings.HasPrefix(c.Values, "preset="):
		settings += "(" + c.Values + ")"
	}
	if c.Err != "" {
		return fmt.Sprintf("%s %s/%s %s: error, claimed %s: %s", verdict, c.Lesson, c.Step, settings, word(c.WantPass), c.Err)
	}
	return fmt.Sprintf("%s %s/%s %s: %s, claimed %s: %s", verdict, c.Lesson, c.Step, settings, word(c.Pass), word(c.WantPass), c.Detail)
}

// Report runs every step of every lesson with its intended settings (the
// check must pass), and with the lesson's start settings where the step
// says fails_at_start (the check must fail), evaluating each check over
// the whole run.
func Report(lessons []Lesson) []CheckLine {
	var out []CheckLine
	for _, l := range lessons {
		// Start runs are shared by the steps that compare against the same
		// one (the lesson's start, or a step preset as it is).
		type run struct {
			res scenario.Result
			err error
		}
		starts := map[string]run{}
		for _, s := range l.Steps {
			line := CheckLine{Lesson: l.ID, Step: s.ID, Settings: "intended", Values: fmtSettings(s.Settings), WantPass: true}
			if s.Preset != "" {
				line.Values = strings.TrimSpace("preset=" + s.Preset + " " + line.Values)
			}
			if res, err := RunLesson(l, s.ID, nil); err != nil {
				line.Err = err.Error()
			} else {
				r := Evaluate(s.Check, res.Frames, WholeRun)
				line.Pass, line.Detail = r.Pass, r.Detail
			}
			out = append(out, line)
			if !s.Fails() {
				continue
			}
			key := s.Preset
			st, ok := starts[key]
			if !ok {
				res, err := RunStart(l, s.ID)
				st = run{res, err}
				starts[key] = st
			}
			line = CheckLine{Lesson: l.ID, Step: s.ID, Settings: "start", Values: fmtSettings(StartSettings(l, s.ID)), WantPass: false}
			if s.Preset != "" {
				line.Values = "preset=" + s.Preset
			}
			if st.err != nil {
				line.Err = st.err.Error()
			} else {
				r := Evaluate(s.Check, st.res.Frames, WholeRun)
				line.Pass, line.Detail = r.Pass, r.Detail
			}
			out = append(out, line)
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
