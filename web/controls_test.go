package web

import (
	"encoding/json"
	"math"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
)

// Each control is what it claims: an Envoy field envoyconf knows (and the
// lab's range is inside Envoy's), or a scenario knob (inside its range).
func TestControlsMatchTheirFields(t *testing.T) {
	knobs := map[string]scenario.Knob{}
	for _, k := range scenario.Knobs() {
		knobs[k.Name] = k
	}
	seen := map[string]bool{}
	for _, c := range controls {
		if seen[c.Name] {
			t.Errorf("%s: two controls", c.Name)
		}
		seen[c.Name] = true
		if c.Min > c.Max || c.Step <= 0 {
			t.Errorf("%s: range %v–%v step %v", c.Name, c.Min, c.Max, c.Step)
		}
		switch c.Target {
		case targetOutlier:
			f, ok := envoyconf.LookupField(c.Name)
			if !ok {
				t.Errorf("%s: not an outlier_detection field", c.Name)
				continue
			}
			if f.Kind == envoyconf.Uint32 && (c.Min < float64(f.Min) || c.Max > float64(f.Max)) {
				t.Errorf("%s: lab range %v–%v outside Envoy's %s", c.Name, c.Min, c.Max, f.Allowed)
			}
			// The value the control reads back is the value it writes.
			cfg := engine.DefaultConfig()
			got, err := envoyconf.ApplyFields(cfg, map[string]string{c.Name: c.envoyValue(c.outlier(cfg))})
			if err != nil || got != cfg {
				t.Errorf("%s: round trip of %q: %v", c.Name, c.envoyValue(c.outlier(cfg)), err)
			}
		case targetScenario:
			k, ok := knobs[c.Knob]
			if !ok {
				t.Errorf("%s: knob %q does not exist", c.Name, c.Knob)
				continue
			}
			if k.Kind != scenario.KnobBool && (c.Min < k.Min || c.Max > k.Max) {
				t.Errorf("%s: lab range %v–%v outside the knob's %s", c.Name, c.Min, c.Max, k.Allowed())
			}
		}
	}
}

// Every preset's settings fit the sliders, so a slider never shows a value
// other than the one the run uses.
func TestPresetsFitTheControls(t *testing.T) {
	for _, p := range scenario.Presets() {
		r, err := buildRun(Inputs{Preset: p.Name})
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		for name, v := range r.Values {
			c := controlByName[name]
			if err := c.check(v); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
			if c.Step >= 1 && math.Mod(v-c.Min, c.Step) != 0 {
				t.Errorf("%s: %s = %v is off the slider's step %v", p.Name, name, v, c.Step)
			}
		}
		// Sending back every value the page shows changes nothing.
		raw := map[string]json.RawMessage{}
		for name, v := range controlSignals(r) {
			raw[name], _ = json.Marshal(v)
		}
		vals, err := parseControlValues(raw)
		if err != nil {
			t.Errorf("%s: the page's own signals are rejected: %v", p.Name, err)
			continue
		}
		again, err := buildRun(Inputs{Preset: p.Name}.with(vals))
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if again.Config != r.Config || len(again.Frames) != len(r.Frames) {
			t.Errorf("%s: sending the shown values back changed the run", p.Name)
		}
	}
}
