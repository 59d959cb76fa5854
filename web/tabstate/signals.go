package tabstate

// InputSignals are the inputs the server chose: the preset, the controls'
// values (ControlSignals: each in the JSON type its input binds, so a
// map of any) and, on a lesson page, the step whose scenario is loaded.
type InputSignals struct {
	Preset string         `json:"preset"`
	Cfg    map[string]any `json:"cfg"`
	Step   *string        `json:"step,omitempty"`
}

// ControlSignals is every control's effective value in the type its input
// binds: numbers for sliders, booleans for switches, names for selects;
// only those shown says it shows (nil: all), as a lesson page has only its
// own controls. An address-only control is carried once the tab set it
// (it is in the run's inputs), so a session made from the signals runs
// what the page shows; until then the preset's value needs no signal.
func ControlSignals(r *Run, shown func(*Control) bool) map[string]any {
	out := make(map[string]any, len(Controls))
	for i := range Controls {
		c := &Controls[i]
		if shown != nil && !shown(c) {
			continue
		}
		if _, set := r.Inputs.Values[c.Name]; c.AddressOnly && !set {
			continue
		}
		v, ok := r.Values[c.Name]
		if !ok {
			continue
		}
		switch c.Kind {
		case KindToggle:
			out[c.Name] = v != 0
		case KindChoice:
			out[c.Name] = c.Choice(v)
		default:
			out[c.Name] = v
		}
	}
	return out
}
