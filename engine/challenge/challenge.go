package challenge

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"

	"outlierlab/engine/plan"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// Challenge is one challenge file.
type Challenge struct {
	// ID is the file name without .md: /challenges/{ID}.
	ID      string
	Title   string
	Summary string
	// Story is the markdown body: the cluster, the fault, what is asked.
	Story string
	// Scenarios are the battery: every submission runs each on every
	// hidden seed. The first is the one the lab opens.
	Scenarios []Scenario
	// Unlocked are the settings a learner may change, by the catalog's
	// names (engine/settings), in the order the page lists them.
	Unlocked []string
	// Start is what the learner starts from for the unlocked settings
	// (the "shipped defaults"); an unlocked setting not in Start keeps
	// its preset's value.
	Start map[string]string
	// Reference is a solution: unlocked settings that pass every goal.
	Reference map[string]string
	// Seeds is how many hidden seeds grade a submission (each scenario
	// runs once per seed).
	Seeds int
	// Main names the two goals a room's scatter plots ("scenario/goal").
	Main []string
	File string
}

// Scenario is one run of the battery: a preset with locked settings over
// it, and the goals measured on it.
type Scenario struct {
	ID    string
	Title string
	// Preset and Settings make the run (Settings name no unlocked setting:
	// those are the learner's).
	Preset   string
	Settings map[string]string
	Goals    []Goal
	// Hosts and EndMs are the run's host count and last frame, known
	// before any run (for the goals' validation).
	Hosts int
	EndMs int64
}

// Submission is a learner's values for unlocked settings, by name.
type Submission map[string]string

// Layers are the settings a scenario runs with for a submission, in
// settings.Apply's order: the challenge's start, the scenario's locked
// settings, then the learner's.
func (c *Challenge) Layers(s *Scenario, sub Submission) []map[string]string {
	return []map[string]string{c.Start, s.Settings, sub}
}

// Settings is one map of the layers (later ones winning): what the lab
// opens for the scenario with the submission.
func (c *Challenge) Settings(s *Scenario, sub Submission) map[string]string {
	out := map[string]string{}
	for _, l := range c.Layers(s, sub) {
		maps.Copy(out, l)
	}
	return out
}

// Validate checks a submission: every name unlocked, every value one the
// setting accepts on every scenario of the battery. The error names the
// setting and what it allows (*plan.FieldError, File the challenge's id).
func (c *Challenge) Validate(sub Submission) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(sub)) {
		s, ok := settings.Lookup(name)
		if !ok || !slices.Contains(c.Unlocked, s.Name) {
			errs = append(errs, &plan.FieldError{File: c.ID, Field: name, Problem: "is locked in this challenge (unlocked: " + joinComma(c.Unlocked) + ")"})
			continue
		}
		for i := range c.Scenarios {
			sc := &c.Scenarios[i]
			p, _ := scenario.Lookup(sc.Preset)
			if _, _, err := settings.Apply(p, c.Start, sc.Settings, Submission{name: sub[name]}); err != nil {
				errs = append(errs, &plan.FieldError{File: c.ID, Field: name, Problem: fmt.Sprintf("%q is not allowed (%s)", sub[name], s.Allowed())})
				break
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// Values fine one by one may still clash (max_ejection_time below
	// base_ejection_time): Apply says which.
	for i := range c.Scenarios {
		sc := &c.Scenarios[i]
		p, _ := scenario.Lookup(sc.Preset)
		if _, _, err := settings.Apply(p, c.Layers(sc, sub)...); err != nil {
			return &plan.FieldError{File: c.ID, Field: "settings", Problem: err.Error()}
		}
	}
	return nil
}

// Runs is how many runs grading one submission makes.
func (c *Challenge) Runs() int { return len(c.Scenarios) * c.Seeds }

// Goals counts the goals of the battery.
func (c *Challenge) Goals() int {
	n := 0
	for _, s := range c.Scenarios {
		n += len(s.Goals)
	}
	return n
}

// Load reads every *.md at the root of fsys as a challenge, in file-name
// order; every malformed field of every file is reported (errors.Join of
// *plan.FieldError).
func Load(fsys fs.FS) ([]Challenge, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("no challenge files (*.md)")
	}
	sort.Strings(names)
	var out []Challenge
	var errs []error
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, &plan.FieldError{File: name, Problem: err.Error()})
			continue
		}
		c, err := Parse(name, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// ByID finds a challenge.
func ByID(cs []Challenge, id string) (*Challenge, bool) {
	for i := range cs {
		if cs[i].ID == id {
			return &cs[i], true
		}
	}
	return nil, false
}
