package lab

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/httperr"
	"outlierlab/web/labview"
	"outlierlab/web/tabstate"
)

// Each control is a setting of the catalog, once, with the setting's
// help, unit and choices; its slider's span is inside the setting's range;
// and the value it reads from a run is the value it writes back.
func TestControlsAreTheirSettings(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, c := range tabstate.Controls {
		s, ok := settings.Lookup(c.Setting)
		if !ok || c.Name != s.EnvoyName() {
			t.Errorf("%s: setting %q: %+v", c.Name, c.Setting, s)
			continue
		}
		if seen[s.Name] {
			t.Errorf("%s: two controls", c.Name)
		}
		seen[s.Name] = true
		if c.Help != s.Help || c.Unit != s.Unit || !slices.Equal(c.Choices, s.Menu) {
			t.Errorf("%s: help, unit or choices are not the catalog's", c.Name)
		}
		numeric := c.Kind != tabstate.KindChoice && c.Kind != tabstate.KindToggle
		if c.Min > c.Max || c.Step <= 0 || (numeric && (c.Min < s.Min || c.Max > s.Max)) {
			t.Errorf("%s: span %v–%v step %v, setting %s", c.Name, c.Min, c.Max, c.Step, s.Allowed())
		}
		if c.Kind == tabstate.KindChoice && (c.Min != 0 || c.Max != float64(len(c.Choices)-1)) {
			t.Errorf("%s: range %v–%v for %d choices", c.Name, c.Min, c.Max, len(c.Choices))
		}
		// Every preset's value, read as the control's number and written
		// back, is the same value to the engine.
		for _, p := range scenario.Presets() {
			sc := p.Scenario()
			v, ok := settings.Value(sc, sc.Outlier, c.Setting)
			if !ok && c.Name == "fault_host" {
				continue // a fault of several hosts names no one host
			}
			f, shown := c.Number(v)
			if !ok || !shown {
				t.Errorf("%s: %s = %q is not shown", p.Name, c.Name, v)
				continue
			}
			again, cfg, err := settings.Apply(p, map[string]string{c.Name: c.EnvoyValue(f)})
			if err != nil {
				t.Errorf("%s: %s: %v", p.Name, c.Name, err)
			} else if back, _ := settings.Value(again, cfg, c.Setting); back != v {
				t.Errorf("%s: %s = %q comes back as %q", p.Name, c.Name, v, back)
			}
		}
	}
}

// Every preset's settings fit the sliders, so a slider never shows a value
// other than the one the run uses.
func TestPresetsFitTheControls(t *testing.T) {
	t.Parallel()
	for _, p := range scenario.Presets() {
		r, err := tabstate.BuildRun(tabstate.Inputs{Preset: p.Name})
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		for name, v := range r.Values {
			c := tabstate.ControlByName[name]
			if err := c.Check(v); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
			if c.Step >= 1 && math.Mod(v-c.Min, c.Step) != 0 {
				t.Errorf("%s: %s = %v is off the slider's step %v", p.Name, name, v, c.Step)
			}
		}
		// Sending back every value the page shows changes nothing.
		raw := map[string]json.RawMessage{}
		for name, v := range controlSignals(r, nil) {
			raw[name], _ = json.Marshal(v)
		}
		vals, err := tabstate.ParseControlValues(raw)
		if err != nil {
			t.Errorf("%s: the page's own signals are rejected: %v", p.Name, err)
			continue
		}
		again, err := tabstate.BuildRun(tabstate.Inputs{Preset: p.Name}.With(vals))
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if again.Config != r.Config || len(again.Frames) != len(r.Frames) {
			t.Errorf("%s: sending the shown values back changed the run", p.Name)
		}
	}
}

// Lessons name some controls by their scenario knob; the lab accepts both
// names, and a select's value by name.
func TestControlAliasesAndChoices(t *testing.T) {
	t.Parallel()
	raw := map[string]json.RawMessage{
		"retries":         json.RawMessage(`2`),
		"panic_threshold": json.RawMessage(`0`),
		"lb_policy":       json.RawMessage(`"random"`),
		"fault_kind":      json.RawMessage(`"connect_failure"`),
		"per_try_timeout": json.RawMessage(`0.25`),
	}
	vals, err := tabstate.ParseControlValues(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"num_retries": 2, "healthy_panic_threshold": 0, "lb_policy": 2, "fault_kind": 4, "per_try_timeout": 0.25}
	for k, v := range want {
		if vals[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, vals[k], v, vals)
		}
	}
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache"}.With(vals))
	if err != nil {
		t.Fatal(err)
	}
	for knob, want := range map[string]string{"retries": "2", "panic_threshold": "0", "lb": "random", "fault_kind": "connect_failure", "per_try_timeout": "250ms"} {
		if got := scenario.KnobValue(r.Scenario, knob); got != want {
			t.Errorf("knob %s = %q, want %q", knob, got, want)
		}
	}
	if _, err := tabstate.ParseControlValues(map[string]json.RawMessage{"lb_policy": json.RawMessage(`"fastest"`)}); err == nil ||
		!strings.Contains(err.Error(), "lb_policy") || !strings.Contains(err.Error(), "round_robin") {
		t.Errorf("a bad choice: %v", err)
	}
}

// max_retries (circuit_breakers.thresholds.max_retries) takes its whole
// range, 0–4294967295, and the run follows it: bad-deploy with Envoy's
// default 3 refuses most retries (upstream_rq_retry_overflow), the breaker
// lifted as Istio lifts it lets them all through.
func TestMaxRetriesControl(t *testing.T) {
	t.Parallel()
	c := tabstate.LookupControl("max_retries")
	if c == nil || c.Setting != "max_retries" || c.Min != 0 || c.Max != 4294967295 || c.InputOf() != tabstate.InputNumber {
		t.Fatalf("max_retries control: %+v", c)
	}
	def, err := tabstate.BuildRun(tabstate.Inputs{Preset: "bad-deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if def.Values["max_retries"] != 3 {
		t.Fatalf("bad-deploy's max_retries = %v, want Envoy's default 3", def.Values["max_retries"])
	}
	vals, err := tabstate.ParseControlValues(map[string]json.RawMessage{"max_retries": json.RawMessage(`4294967295`)})
	if err != nil {
		t.Fatal(err)
	}
	lifted, err := tabstate.BuildRun(tabstate.Inputs{Preset: "bad-deploy"}.With(vals))
	if err != nil {
		t.Fatal(err)
	}
	if got := scenario.KnobValue(lifted.Scenario, "max_retries"); got != "4294967295" {
		t.Fatalf("knob max_retries = %q", got)
	}
	d, l := def.Result.Summary, lifted.Result.Summary
	if d.RetryOverflow <= d.Retries || l.RetryOverflow != 0 || l.Retries <= 10*d.Retries {
		t.Errorf("breaker 3: %d retries, %d overflows; lifted: %d retries, %d overflows", d.Retries, d.RetryOverflow, l.Retries, l.RetryOverflow)
	}
	// The page: a number field alone, with the field's whole range and
	// Envoy's path under it; no slider.
	v := labview.Control(c, 3)
	if !v.NumberOnly || v.Number || v.Max != "4294967295" || v.NumStep != "1" || v.Field != "circuit_breakers.thresholds.max_retries" {
		t.Errorf("view: %+v", v)
	}
}

// Long-range sliders get a number field beside them; fault_rate's takes a
// third to the thousandth; short ranges stay sliders alone.
func TestNumberFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, step string
		number     bool
	}{
		{"max_ejection_time", "1", true},
		{"base_ejection_time", "1", true},
		{"fault_rate", "0.001", true},
		{"rps", "10", true},
		{"max_ejection_percent", "", false},
		{"interval", "", false},
		{"consecutive_5xx", "", false},
		{"per_try_timeout", "", false},
	} {
		c := tabstate.LookupControl(tc.name)
		v := labview.Control(c, c.Min)
		if v.Number != tc.number || v.NumberOnly || v.NumStep != tc.step || (tc.number && v.NumLabel == "") {
			t.Errorf("%s: number field %v step %q label %q; want %v step %q", tc.name, v.Number, v.NumStep, v.NumLabel, tc.number, tc.step)
		}
	}
	vals, err := tabstate.ParseControlValues(map[string]json.RawMessage{"fault_rate": json.RawMessage(`0.333`), "max_ejection_time": json.RawMessage(`"437"`)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache"}.With(vals))
	if err != nil {
		t.Fatal(err)
	}
	if got := scenario.KnobValue(r.Scenario, "fault_rate"); got != "0.333" {
		t.Errorf("fault_rate = %q, want 0.333", got)
	}
	if r.Config.MaxEjectionTimeMs != 437000 {
		t.Errorf("max_ejection_time = %d ms, want 437000", r.Config.MaxEjectionTimeMs)
	}
}

// The page's values go through the catalog's Apply, as the CLI's and a
// lesson's do: Envoy's cross-field check and a knob's own check answer
// with the same field-named message, as an input error (a 4xx, never a
// 500).
func TestPageValuesAreCheckedByTheCatalog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   tabstate.Inputs
		want string
	}{
		{tabstate.Inputs{Preset: "search-cache", Values: map[string]float64{"base_ejection_time": 60, "max_ejection_time": 30}},
			"max_ejection_time: 30s is below base_ejection_time 60s (allowed ≥ base_ejection_time)"},
		{tabstate.Inputs{Preset: "search-cache", Base: map[string]string{"panic_threshold": "50"}, Values: map[string]float64{"healthy_panic_threshold": 101}},
			"healthy_panic_threshold: 101 is out of range (allowed 0–100 %)"},
		{tabstate.Inputs{Preset: "search-cache", Inject: "h9@60s"},
			"inject: h9@60s: h9 is not a host of this cluster (allowed h0–h5)"},
		{tabstate.Inputs{Preset: "search-cache", Base: map[string]string{"hosts": "500"}},
			"hosts: 500 is out of range (allowed 1–200 hosts)"},
	} {
		_, err := tabstate.BuildRun(tc.in)
		var ie *httperr.FieldError
		if !errors.As(err, &ie) || httperr.Text(err) != tc.want {
			t.Errorf("%+v: %v, want the input error %q", tc.in, err, tc.want)
		}
	}
	// A learner's value by the Envoy name wins over the lesson's by the
	// knob's.
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache", Base: map[string]string{"panic_threshold": "50"}, Values: map[string]float64{"healthy_panic_threshold": 0}})
	if err != nil || r.Scenario.Cluster.HealthyPanicThreshold != 0 || r.Values["healthy_panic_threshold"] != 0 {
		t.Errorf("panic %v, %v", r.Values["healthy_panic_threshold"], err)
	}
}
