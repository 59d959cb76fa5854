package lab

import (
	"slices"
	"strconv"

	"outlierlab/engine/course"
	"outlierlab/engine/settings"
	"outlierlab/web/httperr"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// The learner's own cluster, in two forms that open the free lab: the
// "your cluster" exercise at a lesson's end and the "Model your cluster"
// box at the top of /lab (issue 38). Both are plain GET forms to /lab
// whose fields carry the lab's own parameter names, so the browser writes
// the permalink and tabstate.ParseLabQuery reads it as it reads any
// address: a bad value is its 400 naming the field and the range, and no
// form can set what the lab has no setting for.

// modelPreset is the scenario the "Model your cluster" box models: one
// host fails (search-cache's last, from 30 s); the box sets how many hosts
// there are, their traffic, which host fails (fault_host), how, from when
// (fault_start) and for how long, and which others fail from when (the
// inject knob, each to the end of the run). fault_host and fault_start are
// address-only controls (tabstate.Control.AddressOnly): the box and the
// address set them, /lab's settings panel draws no slider for them.
const modelPreset = "search-cache"

// modelFields are the box's controls, in its order.
var modelFields = []string{"hosts", "rps", "fault_host", "fault_kind", "fault_rate", "fault_pattern", "fault_start", "fault_duration"}

// modelBox is the free lab's "Model your cluster" form, filled with the
// page's numbers when the page runs the scenario it models, else with the
// scenario's own.
func modelBox(run *tabstate.Run) *view.ClusterForm {
	vals := tabstate.PresetValues(modelPreset)
	inject := ""
	if run.Preset == modelPreset {
		vals, inject = run.Values, run.Inputs.Inject
	}
	f := &view.ClusterForm{ID: "model", Hidden: []view.Param{{Name: "preset", Value: modelPreset}},
		Text: "One host fails the way you set here, from the time you give (a fault that lasts 0 s lasts to the end); the others serve unless you name them below."}
	for _, name := range modelFields {
		c := tabstate.LookupControl(name)
		ff := formField(c, vals[c.Name])
		if name == "fault_host" {
			// By number, as the hosts are named: the range is the
			// cluster's, which the lab checks when the hosts are known.
			ff.Allowed = "0 to hosts − 1: 2 is h2"
		}
		f.Fields = append(f.Fields, ff)
	}
	f.Fields = append(f.Fields, view.FormField{
		Name: "inject", Label: "Other hosts that fail, from when", Value: inject, Text: true,
		Placeholder: "h1@60s, h2@120s",
		Allowed:     "HOST@TIME, comma-separated: each fails from then to the end, as the failing host does",
	})
	return f
}

// formField is a control as a form's input holding v: a menu for a
// choice or a switch, else a number field with the control's span. A
// duration is typed in seconds, as the lab's address takes it.
func formField(c *tabstate.Control, v float64) view.FormField {
	f := view.FormField{Name: c.Name, Label: c.Label, Allowed: c.Allowed()}
	switch c.Kind {
	case tabstate.KindChoice:
		f.Options, f.Value = c.Choices, c.Choice(v)
		return f
	case tabstate.KindToggle:
		f.Options, f.Value = []string{"true", "false"}, c.EnvoyValue(v)
		return f
	}
	f.Min, f.Max, f.Value = httperr.FormatNumber(c.Min), httperr.FormatNumber(c.Max), strconv.FormatFloat(v, 'f', -1, 64)
	// The lab refuses only fractions of a whole-number control
	// (Control.Check), so a field asks no more: a step of 10 on rps would
	// mark 25 invalid, which the lab accepts.
	f.Step = "1"
	if c.Step < 1 {
		f.Step = "any"
	}
	if c.Kind == tabstate.KindSeconds {
		f.Label += " (s)"
	}
	return f
}

// endingView is a lesson's ending: its settings with Envoy's defaults,
// the stats, the rule (vals fill its live numbers) and the exercise's
// form, filled with the lesson's start run.
func endingView(d *lessonbook.Doc, run *tabstate.Run, vals []string) *view.Ending {
	e := d.Ending
	if e == nil {
		return nil
	}
	v := &view.Ending{Rule: view.HTML(d.RuleText.HTML(vals))}
	for _, s := range e.Settings {
		set, _ := settings.Lookup(s.Name) // the parser checked the name
		es := view.EndingSetting{Name: set.EnvoyName(), Default: s.Default, Where: set.Envoy}
		if es.Where == "" && set.Target == settings.Knob {
			es.Where = "the simulation's"
		}
		v.Settings = append(v.Settings, es)
	}
	for _, st := range e.Stats {
		v.Stats = append(v.Stats, course.StatPath(st))
	}
	v.Exercise = exerciseForm(d, run, vals)
	return v
}

// exerciseForm opens the free lab on the lesson's scenario with its start
// settings (those the lab has controls for, as hidden fields) and the
// learner's hosts, traffic and the settings the exercise names.
func exerciseForm(d *lessonbook.Doc, run *tabstate.Run, vals []string) view.ClusterForm {
	f := view.ClusterForm{ID: "yours", Text: view.HTML(d.ExerciseText.HTML(vals)),
		Hidden: []view.Param{{Name: "preset", Value: run.Preset}}}
	var shown []string
	for _, name := range d.Ending.Exercise.ExerciseSettings() {
		c := tabstate.LookupControl(name) // lessonbook checked it is one
		f.Fields = append(f.Fields, formField(c, run.Values[c.Name]))
		shown = append(shown, c.Name)
	}
	// The lesson's start, where it differs from the scenario's own, goes
	// along: the exercise is the lesson's situation with the learner's
	// numbers, not the bare preset.
	def := tabstate.PresetValues(run.Preset)
	for i := range tabstate.Controls {
		c := &tabstate.Controls[i]
		v, ok := run.Values[c.Name]
		if d, same := def[c.Name]; !ok || (same && d == v) || slices.Contains(shown, c.Name) {
			continue
		}
		f.Hidden = append(f.Hidden, view.Param{Name: c.Name, Value: c.EnvoyValue(v)})
	}
	return f
}
