package course

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"outlierlab/engine/settings"
)

// Ending is what a lesson ends with (issue 38): the settings it taught
// with Envoy's defaults, the stats to watch, one rule of thumb, and a
// "your cluster" exercise that opens the lab with the learner's own
// numbers. In the front matter:
//
//	ending:
//	  settings:                      # what the lesson taught, in the order it did
//	    - {name: consecutive_5xx, default: "5"}
//	    - {name: panic_threshold}      # a knob: no default stated (checkEndingDefault)
//	  stats: [ejections_enforced_consecutive_5xx, ejections_overflow]
//	  rule: "One sentence to keep."
//	  exercise:
//	    text: "What to try on your own cluster."
//	    settings: [consecutive_5xx]  # offered beside hosts and rps
//
// A stated default is checked against the settings catalog, whose
// outlier_detection defaults are engine.DefaultConfig() as Envoy's proto
// renders it (envoyconf), so a default the page prints is Envoy's or the
// lesson does not load.
type Ending struct {
	Settings []EndingSetting `json:"settings"`
	// Stats are names a stat check reads (StatNames): an outlier_detection
	// stat (ejections_enforced_total) or a cluster one (lb_healthy_panic).
	Stats    []string `json:"stats"`
	Rule     string   `json:"rule"`
	Exercise Exercise `json:"exercise"`
}

// EndingSetting is one setting the lesson taught.
type EndingSetting struct {
	Name string `json:"name"`
	// Default is Envoy's, as Envoy YAML writes it ("5", "10s"): required
	// for an outlier_detection field, absent for a knob (checkEndingDefault).
	Default string `json:"default,omitempty"`
}

// Exercise is the "your cluster" form at the end of a lesson: hosts and
// requests a second always, and the settings it names, opened in the free
// lab on the lesson's scenario.
type Exercise struct {
	Text     string   `json:"text"`
	Settings []string `json:"settings,omitempty"`
}

// ExerciseAlways are the settings every exercise asks for: the learner's
// cluster's size and traffic.
var exerciseAlways = []string{"hosts", "rps"}

// ExerciseSettings are the settings the exercise's form offers, in order:
// hosts and rps, then the ending's own.
func (x Exercise) ExerciseSettings() []string {
	return slices.Concat(exerciseAlways, x.Settings)
}

// StatPath is where Envoy shows a stat an ending names: under
// cluster.<name>.outlier_detection. for the detector's, under
// cluster.<name>. for the router's and load balancer's.
func StatPath(name string) string {
	if _, ok := clusterStats[name]; ok {
		return name
	}
	return "outlier_detection." + name
}

// CheckEnding reports a lesson without an ending: `lessons -check` and
// the course's tests require one of every lesson (Parse checks one that
// is there).
func (l *Lesson) CheckEnding() error {
	if l.Ending == nil {
		return &LessonError{File: l.File, Problem: "missing ending (the settings it taught, the stats to watch, a rule and a your-cluster exercise: see Ending)"}
	}
	return nil
}

// validateEnding checks an ending that is there.
func (l *Lesson) validateEnding() error {
	e := l.Ending
	if e == nil {
		return nil
	}
	switch {
	case len(e.Settings) == 0:
		return errors.New("ending.settings: missing (the settings the lesson taught)")
	case len(e.Stats) == 0:
		return errors.New("ending.stats: missing (the stats to watch, by Envoy's names)")
	case strings.TrimSpace(e.Rule) == "":
		return errors.New("ending.rule: missing (one rule of thumb)")
	case strings.TrimSpace(e.Exercise.Text) == "":
		return errors.New("ending.exercise.text: missing (what to try on your own cluster)")
	}
	seen := map[string]bool{}
	for i, s := range e.Settings {
		where := fmt.Sprintf("ending.settings[%d]", i)
		if seen[s.Name] {
			return fmt.Errorf("%s: %q is listed twice", where, s.Name)
		}
		seen[s.Name] = true
		if err := checkEndingDefault(where, s); err != nil {
			return err
		}
	}
	stats := StatNames()
	for i, name := range e.Stats {
		if !slices.Contains(stats, name) {
			return fmt.Errorf("ending.stats[%d]: unknown stat %q (one of %s)", i, name, strings.Join(stats, ", "))
		}
	}
	offered := map[string]bool{}
	for i, name := range e.Exercise.ExerciseSettings() {
		where := fmt.Sprintf("ending.exercise.settings[%d]", i-len(exerciseAlways))
		switch {
		case !isSetting(name):
			return fmt.Errorf("%s: unknown setting %q (an outlier_detection field or a scenario knob, by its own name)", where, name)
		case offered[name] && slices.Contains(exerciseAlways, name):
			return fmt.Errorf("%s: %s is always offered (hosts and rps come first): leave it out", where, name)
		case offered[name]:
			return fmt.Errorf("%s: %q is listed twice", where, name)
		}
		offered[name] = true
	}
	if err := validatePlaceholders("ending.rule", e.Rule); err != nil {
		return err
	}
	return validatePlaceholders("ending.exercise.text", e.Exercise.Text)
}

// checkEndingDefault holds a stated default to Envoy's: an
// outlier_detection field must state its default, and it must be the
// catalog's (engine.DefaultConfig, rendered as Envoy writes it). A knob
// states none: the catalog's default for a knob is the lab's, and some
// Envoy settings the lab models have none (a health check's interval
// is required), so the page names where it lives in Envoy instead.
func checkEndingDefault(where string, s EndingSetting) error {
	if !isSetting(s.Name) {
		return fmt.Errorf("%s: unknown setting %q (an outlier_detection field or a scenario knob, by its own name)", where, s.Name)
	}
	set, _ := settings.Lookup(s.Name)
	switch {
	case set.Target != settings.OutlierField && s.Default != "":
		return fmt.Errorf("%s: %s is not an outlier_detection field: state no default (the page names where it lives in Envoy)", where, s.Name)
	case set.Target == settings.OutlierField && s.Default == "":
		return fmt.Errorf("%s: %s needs its default (Envoy's is %q)", where, s.Name, set.Default)
	case set.Target == settings.OutlierField && s.Default != set.Default:
		return fmt.Errorf("%s: default %q is not Envoy's (%s defaults to %q)", where, s.Default, s.Name, set.Default)
	}
	return nil
}
