package course

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"outlierlab/engine/scenario"
)

// Settings are the settings a step is meant to end with: the lesson's
// Start with the step's Settings laid over it. An empty step id means the
// Start settings alone (what the page opens with).
func Settings(l Lesson, step string) (map[string]string, error) {
	if step == "" {
		return Merge(l.Start), nil
	}
	s, ok := l.StepByID(step)
	if !ok {
		return nil, fmt.Errorf("%s: no step %q", l.ID, step)
	}
	return Merge(l.Start, s.Settings), nil
}

// Scenario builds the lesson's scenario and outlier_detection config for a
// step (or the start, with step ""), with overlay (the learner's own
// changes, by the same names) laid on top.
func Scenario(l Lesson, step string, overlay map[string]string) (scenario.Scenario, error) {
	p, ok := scenario.Lookup(l.Preset)
	if !ok {
		return scenario.Scenario{}, fmt.Errorf("%s: unknown preset %q", l.ID, l.Preset)
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

// RunLesson runs the lesson's preset with its start settings, the step's
// settings (step "" for none) and overlay, on the lesson's fixed seed. The
// returned Result's Config is the outlier_detection block that ran.
func RunLesson(l Lesson, step string, overlay map[string]string) (scenario.Result, error) {
	sc, err := Scenario(l, step, overlay)
	if err != nil {
		return scenario.Result{}, err
	}
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

func (c CheckLine) String() string {
	verdict := "ok  "
	if !c.OK() {
		verdict = "FAIL"
	}
	claim := "passes"
	if !c.WantPass {
		claim = "fails"
	}
	got := "pass"
	if !c.Pass {
		got = "fail"
	}
	values := c.Values
	if values == "" {
		values = "-"
	}
	detail := c.Detail
	if c.Err != "" {
		detail, got = "error: "+c.Err, "error"
	}
	return fmt.Sprintf("%s %s/%s [%s: %s] %s (should %s): %s", verdict, c.Lesson, c.Step, c.Settings, values, got, claim, detail)
}

// Report runs every step of every lesson with its intended settings (the
// check must pass), and with the lesson's start settings where the step
// says fails_at_start (the check must fail), evaluating each check over
// the whole run.
func Report(lessons []Lesson) []CheckLine {
	var out []CheckLine
	for _, l := range lessons {
		var start *scenario.Result
		var startErr error
		startDone := false
		for _, s := range l.Steps {
			line := CheckLine{Lesson: l.ID, Step: s.ID, Settings: "intended", Values: fmtSettings(s.Settings), WantPass: true}
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
			if !startDone {
				res, err := RunLesson(l, "", nil)
				start, startErr, startDone = &res, err, true
			}
			line = CheckLine{Lesson: l.ID, Step: s.ID, Settings: "start", Values: fmtSettings(l.Start), WantPass: false}
			if startErr != nil {
				line.Err = startErr.Error()
			} else {
				r := Evaluate(s.Check, start.Frames, WholeRun)
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
