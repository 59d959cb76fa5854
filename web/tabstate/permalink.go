package tabstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine/scenario"
	"outlierlab/web/httperr"
)

// A permalink is the inputs plus the cursor (design.md): since a timeline
// is a pure function of its inputs, an address that holds them and the
// cursor is the whole state of a tab. The free lab's is
//
//	/lab?preset=search-cache&max_ejection_percent=34&base_ejection_time=30s&t=80
//
// preset, then every control whose value differs from the preset's own (by
// the names the page's inputs use, in page order, values as Envoy YAML
// writes them), then the faults injected live (inject=h3@60s,h1@120s), then t: the time of the last interval shown, in seconds
// (left out at t = 0). Opening it gives a fresh tab with those settings,
// paused there; the stream keeps the address bar on the permalink of the
// tab's state, so what an instructor shows is what a learner bookmarks.

// MaxQueryBytes bounds a lab address's query. Every control set to its
// longest value fits in well under 2 KiB; anything longer is not a link the
// lab wrote, and is refused before it is parsed.
const MaxQueryBytes = 4096

// maxUnknownNamed bounds how many unknown parameters an error lists.
const maxUnknownNamed = 10

// LabLink is what a lab address says.
type LabLink struct {
	Preset string
	// Values are the controls the address sets, by Envoy field name,
	// already checked against each control's range.
	Values map[string]float64
	// TMs is the cursor as a time: the frames at or before it are shown.
	TMs int64
	// Inject is the inject knob's list, normalised ("h3@60s").
	Inject string
}

// ParseBoundedQuery parses an address's query, refusing one longer than
// MaxQueryBytes before reading it (a lab, compare or sweep address).
func ParseBoundedQuery(raw string) (url.Values, error) {
	if len(raw) > MaxQueryBytes {
		return nil, fmt.Errorf("%w: the query is %d bytes long (allowed up to %d)", httperr.ErrQueryTooLong, len(raw), MaxQueryBytes)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, &httperr.FieldError{Msg: "the query is not valid: " + err.Error()}
	}
	return q, nil
}

// ParseLabQuery reads a lab address's query. The controls are read by
// ParseControlValues, the set command's own parser, so an address accepts
// the names, aliases and ranges a slider does and a bad value gets the
// same field-named error; a duration may also be written as Envoy writes it
// ("30s"). Every problem is reported, one FieldError each.
func ParseLabQuery(rawQuery string) (LabLink, error) {
	link := LabLink{Preset: DefaultPreset}
	q, err := ParseBoundedQuery(rawQuery)
	if err != nil {
		return link, err
	}
	var errs []error
	raw := map[string]json.RawMessage{}
	setBy := map[string]string{} // control name → the parameter that set it
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(q)) {
		vs := q[name]
		if len(vs) > 1 {
			errs = append(errs, &httperr.FieldError{Field: httperr.Truncate(name, 40), Msg: fmt.Sprintf("is given %d times (allowed once)", len(vs))})
			continue
		}
		v := vs[0]
		switch name {
		case "preset":
			if v != "" {
				link.Preset = v
			}
			continue
		case "t":
			if link.TMs, err = parseSeconds(v); err != nil {
				errs = append(errs, err)
			}
			continue
		case "inject":
			// Checked against the cluster when the run is built.
			if link.Inject, err = NormalInject(v); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		c := LookupControl(name)
		if c == nil {
			unknown = append(unknown, name)
			continue
		}
		if prev, ok := setBy[c.Name]; ok {
			errs = append(errs, &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("is given twice, as %s and as %s (allowed once)", prev, name)})
			continue
		}
		setBy[c.Name] = name
		raw[name] = queryValueJSON(c, v)
	}
	for i, name := range unknown {
		if i == maxUnknownNamed {
			errs = append(errs, &httperr.FieldError{Msg: fmt.Sprintf("and %d more parameters that are not settings of the lab", len(unknown)-i)})
			break
		}
		errs = append(errs, &httperr.FieldError{Field: httperr.Truncate(name, 40), Msg: "is not a setting of the lab (allowed preset, t, inject and the controls' names)"})
	}
	vals, err := ParseControlValues(raw)
	if err != nil {
		errs = append(errs, err)
	}
	link.Values = vals
	return link, errors.Join(errs...)
}

// queryValueJSON turns a query value into the JSON a page's signal would
// carry, for ParseControlValues: a duration written with its unit ("30s",
// "250ms") becomes a number of seconds, everything else a string, which
// the parser reads as a number, a bool or a choice as the control needs.
func queryValueJSON(c *Control, v string) json.RawMessage {
	if c.Kind == KindSeconds {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			if d, err := time.ParseDuration(v); err == nil {
				return json.RawMessage(strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
			}
		}
	}
	b, _ := json.Marshal(v)
	return b
}

// parseSeconds reads t: seconds ("80", "2.5") or a duration ("1m20s").
func parseSeconds(v string) (int64, error) {
	sec, err := strconv.ParseFloat(v, 64)
	if err != nil {
		d, derr := time.ParseDuration(v)
		if derr != nil {
			return 0, &httperr.FieldError{Field: "t", Msg: fmt.Sprintf("%q is not a time (allowed seconds from 0, such as 80)", httperr.Truncate(v, 40))}
		}
		sec = d.Seconds()
	}
	if math.IsNaN(sec) || sec < 0 || sec > 1e9 {
		return 0, &httperr.FieldError{Field: "t", Msg: fmt.Sprintf("%s is out of range (allowed seconds from 0, such as 80)", httperr.Truncate(v, 40))}
	}
	return int64(math.Round(sec * 1000)), nil
}

// Inputs are the run's inputs: the preset with the address's controls.
func (l LabLink) Inputs() Inputs {
	return Inputs{Preset: l.Preset, Inject: l.Inject}.With(l.Values)
}

// Cursor is the number of frames shown at the link's time: every frame at
// or before it (a time between two sweeps shows the earlier one).
func (l LabLink) Cursor(r *Run) (int, error) {
	end := CursorMs(r, len(r.Frames))
	if l.TMs > end {
		return 0, &httperr.FieldError{Field: "t", Msg: fmt.Sprintf("%s is out of range (allowed 0–%s)", secs(l.TMs), FormatMs(end))}
	}
	return FramesAt(r, l.TMs), nil
}

// FramesAt is the cursor (frames shown) at ms: every frame at or before
// it, as a permalink's t is read.
func FramesAt(r *Run, ms int64) int {
	return sort.Search(len(r.Frames), func(i int) bool { return r.Frames[i].TMs > ms })
}

// LabURL is the permalink of a free-lab tab showing run r up to cursor.
// Only the controls that differ from the preset's own values are written,
// so a link stays short and says what was changed.
func LabURL(r *Run, cursor int) string {
	var b strings.Builder
	b.WriteString("/lab?preset=")
	b.WriteString(url.QueryEscape(r.Preset))
	def := PresetValues(r.Preset)
	for i := range Controls {
		c := &Controls[i]
		v, ok := r.Values[c.Name]
		if d, isDefault := def[c.Name]; !ok || (isDefault && d == v) {
			continue
		}
		b.WriteString("&")
		b.WriteString(c.Name)
		b.WriteString("=")
		b.WriteString(url.QueryEscape(c.EnvoyValue(v)))
	}
	if len(r.Scenario.Injections) > 0 {
		// "@" and "," may stand in a query as they are (RFC 3986), and a
		// link that reads inject=h3@60s says what it does.
		b.WriteString("&inject=")
		b.WriteString(strings.NewReplacer("%40", "@", "%2C", ",").Replace(url.QueryEscape(scenario.FormatInjections(r.Scenario.Injections))))
	}
	if cursor > 0 {
		b.WriteString("&t=")
		b.WriteString(secs(CursorMs(r, cursor)))
	}
	return b.String()
}

// secs writes milliseconds as a number of seconds: "80", "2.5".
func secs(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) }
