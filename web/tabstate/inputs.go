// Package tabstate is what one tab of the lab shows, as data: its inputs
// (a preset or lesson step, the controls' values, the faults injected,
// the seed), the one catalog of controls that set them with their ranges
// and error texts, the permalink that carries them, and the run they make
// (the engine's frames and the decision log), kept in a bounded cache.
// Everything here is a function of the inputs: no sessions, no streams,
// no rooms.
package tabstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine/scenario"
	"outlierlab/web/httperr"
)

// Inputs is everything a run is a function of, besides the engine: the
// preset and the value of every control the visitor moved. A session holds
// nothing else that matters, so any session can be rebuilt from the inputs
// (a tab's signals carry them) and identical inputs share one run.
type Inputs struct {
	Preset string
	Seed   uint64
	// Base are settings laid over the preset before Values, as a lesson
	// writes them (course.StartSettings): any name the settings catalog
	// knows (outlier_detection fields by Envoy name, knobs by their own or
	// their alias), values as typed ("10", "250ms", "connect_failure"). The
	// free lab has none.
	Base map[string]string
	// Values holds the controls set away from the preset, by Envoy field
	// name; a control not in the map keeps the preset's value.
	Values map[string]float64
	// Inject is the scenario's inject knob: the faults injected live, as
	// "h3@60s,h1@120s" (normalised by scenario.ParseInjections). They are
	// inputs like any slider: a run, a permalink and a rebuilt session
	// carry them.
	Inject string
}

// Key is a canonical string of the inputs: the run cache's key.
func (in Inputs) Key() string {
	var b strings.Builder
	b.WriteString(in.Preset)
	b.WriteString("|")
	b.WriteString(strconv.FormatUint(in.Seed, 10))
	for _, name := range slices.Sorted(maps.Keys(in.Base)) {
		b.WriteString("|base:")
		b.WriteString(name)
		b.WriteString("=")
		b.WriteString(in.Base[name])
	}
	for _, name := range slices.Sorted(maps.Keys(in.Values)) {
		b.WriteString("|")
		b.WriteString(name)
		b.WriteString("=")
		b.WriteString(httperr.FormatNumber(in.Values[name]))
	}
	if in.Inject != "" {
		b.WriteString("|inject=")
		b.WriteString(in.Inject)
	}
	return b.String()
}

// Canonical drops the free lab's values that equal the preset's own, so a
// page (which knows only the preset) and its stream (whose signals carry
// every control's value) find the same cached run instead of running the
// engine twice. A lesson's inputs (with Base) are left as they are.
func (in Inputs) Canonical() Inputs {
	if len(in.Base) > 0 || len(in.Values) == 0 {
		return in
	}
	def := PresetValues(in.Preset)
	if def == nil {
		return in
	}
	out := in
	out.Values = make(map[string]float64, len(in.Values))
	for name, v := range in.Values {
		if d, ok := def[name]; !ok || d != v {
			out.Values[name] = v
		}
	}
	return out
}

// With returns a copy of in with vals set over its values.
//
// A page that shrinks the cluster below its failing host (fault_host, set
// by the "Model your cluster" box or the address) sends that host back
// unchanged: it moves to the cluster's new last host, as a preset's "last
// host" fault does, rather than the hosts slider being refused. A failing
// host the page itself changes stays as sent, and one past the cluster is
// refused naming the range (scenario's fault_host knob).
func (in Inputs) With(vals map[string]float64) Inputs {
	out := in
	out.Values = maps.Clone(in.Values)
	if out.Values == nil {
		out.Values = map[string]float64{}
	}
	maps.Copy(out.Values, vals)
	host, hostSet := out.Values[faultHost]
	hosts, hostsSent := vals[hostsControl]
	was, wasSet := in.Values[hostsControl]
	shrunk := hostsSent && (!wasSet || hosts < was)
	if hostSet && shrunk && hosts >= 1 && host >= hosts && host == in.Values[faultHost] {
		out.Values[faultHost] = hosts - 1
	}
	return out
}

// The controls With keeps in step.
const (
	faultHost    = "fault_host"
	hostsControl = "hosts"
)

// NormalInject reads an inject list as a page or an address sends it and
// writes it the way the knob does, so equal lists share a run and a link;
// hosts and times are checked when the run is built, against its cluster.
func NormalInject(v string) (string, error) {
	ins, err := scenario.ParseInjections(v)
	if err != nil {
		return "", &httperr.FieldError{Msg: err.Error()} // already names the knob
	}
	return scenario.FormatInjections(ins), nil
}

// ParseControlValues reads the "cfg" signal object: control name → number
// (sliders), bool (switches) or string (selects). A control may also be
// named by its scenario knob (retries for num_retries). Unknown names,
// wrong types and values outside a control's range are errors naming the
// field; every error is reported.
func ParseControlValues(raw map[string]json.RawMessage) (map[string]float64, error) {
	out := make(map[string]float64, len(raw))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		c := LookupControl(name)
		if c == nil {
			errs = append(errs, &httperr.FieldError{Field: name, Msg: "is not a setting of the lab"})
			continue
		}
		var v float64
		var err error
		switch c.Kind {
		case KindToggle:
			v, err = parseBool(c, raw[name])
		case KindChoice:
			v, err = parseChoice(c, raw[name])
		default:
			v, err = parseNumber(c, raw[name])
		}
		if err == nil {
			err = c.Check(v)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[c.Name] = v
	}
	return out, errors.Join(errs...)
}

// parseChoice reads a select's value: one of the control's choices.
func parseChoice(c *Control, raw json.RawMessage) (float64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("%s is not a string (allowed %s)", httperr.ClipJSON(raw), c.Allowed())}
	}
	i, ok := c.choiceIndex(s)
	if !ok {
		return 0, &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("%q is not allowed (allowed %s)", httperr.Truncate(s, 40), c.Allowed())}
	}
	return float64(i), nil
}

func parseNumber(c *Control, raw json.RawMessage) (float64, error) {
	// JSON null decodes into a float64 as "leave it alone", which would
	// silently set the control to 0.
	if isNull(raw) {
		return 0, &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("null is not a number (allowed %s)", c.Allowed())}
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err == nil {
		return v, nil
	}
	// A form post or a hand-written request may send "34".
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, nil
		}
	}
	return 0, &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("%s is not a number (allowed %s)", httperr.ClipJSON(raw), c.Allowed())}
}

func parseBool(c *Control, raw json.RawMessage) (float64, error) {
	if isNull(raw) {
		return 0, &httperr.FieldError{Field: c.Name, Msg: "null is not true or false"}
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return B2F(b), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if b, err := strconv.ParseBool(s); err == nil {
			return B2F(b), nil
		}
	}
	return 0, &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("%s is not true or false", httperr.ClipJSON(raw))}
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

// DefaultPreset is the lab's preset when a page names none.
const DefaultPreset = "search-cache"

// UnknownPreset is the one text for a preset name that is none: the field,
// the name, and the presets there are. Callers give it its kind (a new tab
// on it is a 404, a room's state a bad value).
func UnknownPreset(field, name string) *httperr.FieldError {
	return &httperr.FieldError{Field: field, Msg: fmt.Sprintf("%q is not a preset (allowed %s)", httperr.Truncate(name, 40), strings.Join(PresetNames(), ", "))}
}

// PresetNames are the presets' names, in the catalog's order.
func PresetNames() []string {
	var names []string
	for _, p := range scenario.Presets() {
		names = append(names, p.Name)
	}
	return names
}
