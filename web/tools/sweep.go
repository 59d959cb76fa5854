package tools

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine/scenario"
	"outlierlab/engine/sweep"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
)

// /sweep?preset=S&param=NAME&from=A&to=B&step=D[&seeds=1-5][&control=v…]:
// one run per value of a lab control and per seed (engine/sweep: the
// runs the CLI's -sweep makes), charted against the value with the seeds
// as a band. Any other parameter is a lab control every run shares, as in
// a permalink. Each value's point links to the lab's run at that value.

const (
	// maxSweepPoints bounds the values of one sweep, and maxSweepSeeds its
	// seeds: at most 1005 runs, a few seconds of both cores at worst (most
	// sweeps run far fewer: runs that must agree run once).
	maxSweepPoints = 201
	maxSweepSeeds  = 5
)

// sweepQuery is what a /sweep address asks for.
type sweepQuery struct {
	preset string
	ctl    *tabstate.Control
	values []float64
	seeds  []uint64
	// base are the other controls every run shares.
	base tabstate.LabLink
	// from, to, step and seeds as given (for the form).
	from, to, step, seedSpec string
}

// sweepKeys are /sweep's own parameters; any other is a lab control.
var sweepKeys = []string{"param", "from", "to", "step", "seeds"}

// parseSweepQuery reads a /sweep address. Every problem is reported, each
// naming its parameter and what is allowed.
func parseSweepQuery(raw string) (sweepQuery, error) {
	var sq sweepQuery
	q, err := tabstate.ParseBoundedQuery(raw)
	if err != nil {
		return sq, err
	}
	var errs []error
	own := map[string]string{}
	for _, k := range sweepKeys {
		if vs, ok := q[k]; ok {
			if len(vs) > 1 {
				errs = append(errs, &httperr.FieldError{Field: k, Msg: fmt.Sprintf("is given %d times (allowed once)", len(vs))})
			}
			own[k] = strings.TrimSpace(vs[0])
			delete(q, k)
		}
	}
	sq.base, err = tabstate.ParseLabQuery(q.Encode())
	if err != nil {
		errs = append(errs, err)
	}
	sq.preset = sq.base.Preset
	sq.ctl, err = sweepParam(own["param"])
	if err != nil {
		return sq, errors.Join(append(errs, err)...)
	}
	// A lab link's own value of the swept setting (the lab's "Sweep a
	// setting" sends the tab's permalink) is what the sweep varies.
	delete(sq.base.Values, sq.ctl.Name)
	if err := sq.readRange(own); err != nil {
		errs = append(errs, err)
	}
	sq.seedSpec = cmpOr(own["seeds"], "1-5")
	if sq.seeds, err = parseSeeds(sq.seedSpec); err != nil {
		errs = append(errs, err)
	}
	return sq, errors.Join(errs...)
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// sweepParam is the control a sweep varies: any lab control with a number
// (not a switch or a menu: a sweep is a chart against the value).
func sweepParam(name string) (*tabstate.Control, error) {
	if name == "" {
		return nil, &httperr.FieldError{Field: "param", Msg: "is missing (allowed " + strings.Join(sweepParamNames(), ", ") + ")"}
	}
	c := tabstate.LookupControl(name)
	if c == nil || c.Kind == tabstate.KindToggle || c.Kind == tabstate.KindChoice {
		return nil, &httperr.FieldError{Field: "param", Msg: fmt.Sprintf("%q is not a setting a sweep can vary (allowed %s)", httperr.Truncate(name, 40), strings.Join(sweepParamNames(), ", "))}
	}
	return c, nil
}

// sweepParams are the controls a sweep can vary, in page order.
func sweepParams() []*tabstate.Control {
	var out []*tabstate.Control
	for i := range tabstate.Controls {
		if c := &tabstate.Controls[i]; c.Kind != tabstate.KindToggle && c.Kind != tabstate.KindChoice {
			out = append(out, c)
		}
	}
	return out
}

func sweepParamNames() []string {
	var out []string
	for _, c := range sweepParams() {
		out = append(out, c.Name)
	}
	return out
}

// readRange reads from, to and step (the control's span and step when
// left out) into the values, at most maxSweepPoints of them, each inside
// the control's span so the lab can open it.
func (sq *sweepQuery) readRange(own map[string]string) error {
	c := sq.ctl
	// Left out, the step is the control's own, or a multiple of it that
	// keeps the span to 101 points.
	defStep := c.Step * math.Max(1, math.Ceil((c.Max-c.Min)/c.Step/100))
	sq.from, sq.to, sq.step = cmpOr(own["from"], httperr.FormatNumber(c.Min)), cmpOr(own["to"], httperr.FormatNumber(c.Max)), cmpOr(own["step"], httperr.FormatNumber(defStep))
	from, errF := sweepNumber(c, "from", sq.from)
	to, errT := sweepNumber(c, "to", sq.to)
	step, errS := sweepNumber(c, "step", sq.step)
	if err := errors.Join(errF, errT, errS); err != nil {
		return err
	}
	var errs []error
	for _, b := range []struct {
		field string
		v     float64
	}{{"from", from}, {"to", to}} {
		if err := c.Check(b.v); err != nil {
			errs = append(errs, &httperr.FieldError{Field: b.field, Msg: strings.TrimPrefix(err.Error(), c.Name+": ") + " for " + c.Name})
		}
	}
	switch {
	case to < from:
		errs = append(errs, &httperr.FieldError{Field: "to", Msg: fmt.Sprintf("%s is below from (%s) (allowed from–%s)", httperr.FormatNumber(to), httperr.FormatNumber(from), httperr.FormatNumber(c.Max))})
	case step <= 0 || (c.Step >= 1 && step != math.Trunc(step)):
		errs = append(errs, &httperr.FieldError{Field: "step", Msg: fmt.Sprintf("%s is not a step of %s (allowed %s and up, a multiple of %s)", httperr.FormatNumber(step), c.Name, httperr.FormatNumber(c.Step), httperr.FormatNumber(min(c.Step, 1)))})
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	n := math.Floor((to-from)/step+1e-9) + 1
	if n > maxSweepPoints {
		return &httperr.FieldError{Field: "step", Msg: fmt.Sprintf("%s–%s by %s is %s points (allowed at most %d: a larger step or a narrower range)", httperr.FormatNumber(from), httperr.FormatNumber(to), httperr.FormatNumber(step), httperr.FormatNumber(n), maxSweepPoints)}
	}
	for i := range int(n) {
		sq.values = append(sq.values, math.Round((from+float64(i)*step)*1e9)/1e9)
	}
	return nil
}

// sweepNumber reads a number of the control's (a duration may carry its
// unit: "30s").
func sweepNumber(c *tabstate.Control, field, v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && c.Kind == tabstate.KindSeconds {
		if d, derr := time.ParseDuration(v); derr == nil {
			f, err = d.Seconds(), nil
		}
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, &httperr.FieldError{Field: field, Msg: fmt.Sprintf("%q is not a number (allowed %s for %s)", httperr.Truncate(v, 40), c.Allowed(), c.Name)}
	}
	return f, nil
}

// parseSeeds reads "1-5", "1,3,7" or "2": at most maxSweepSeeds distinct
// seeds from 1.
func parseSeeds(spec string) ([]uint64, error) {
	bad := &httperr.FieldError{Field: "seeds", Msg: fmt.Sprintf("%q is not a list of seeds (allowed 1 to %d seeds from 1, such as 1-5 or 1,3,7)", httperr.Truncate(spec, 40), maxSweepSeeds)}
	var out []uint64
	for part := range strings.SplitSeq(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.ParseUint(hi, 10, 64)
		}
		if err1 != nil || err2 != nil || a < 1 || b < a || b > maxSeed || b-a >= maxSweepSeeds {
			return nil, bad
		}
		for s := a; s <= b; s++ {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if len(out) > maxSweepSeeds {
		return nil, &httperr.FieldError{Field: "seeds", Msg: fmt.Sprintf("%q is %d seeds (allowed 1–%d seeds)", httperr.Truncate(spec, 40), len(out), maxSweepSeeds)}
	}
	return out, nil
}

// spec is the sweep the engine runs: the base controls and the inject
// list as one settings layer, the swept control's values as Envoy writes
// them.
func (sq sweepQuery) spec(p scenario.Preset) sweep.Spec {
	base := map[string]string{}
	for name, v := range sq.base.Values {
		base[name] = tabstate.ControlByName[name].EnvoyValue(v)
	}
	if sq.base.Inject != "" {
		base["inject"] = sq.base.Inject
	}
	values := make([]string, len(sq.values))
	for i, v := range sq.values {
		values[i] = sq.ctl.EnvoyValue(v)
	}
	return sweep.Spec{Preset: p, Base: base, Param: sq.ctl.Setting, Values: values, Seeds: sq.seeds}
}

// pointURL is the lab permalink of the sweep's run at its i-th value.
func (sq sweepQuery) pointURL(i int) string {
	vals := maps.Clone(sq.base.Values)
	if vals == nil {
		vals = map[string]float64{}
	}
	vals[sq.ctl.Name] = sq.values[i]
	return "/lab?" + linkQuery(sq.preset, vals, sq.base.Inject)
}
