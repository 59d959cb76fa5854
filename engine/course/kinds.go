package course

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
)

// kind is one check kind: the parameters it takes, how they are checked,
// when in the run it reads, and how it is decided. Adding a kind is adding
// an entry to kinds; registry_test.go then asks for an example of it and
// its signature, and doc.go lists it for authors.
type kind struct {
	name string
	// params are the kind's own parameters, besides its times (time) and
	// min/max (band). Any other parameter set is an author's mistake: a
	// check that silently ignored "host" would pass for the wrong reason.
	params []param
	time   timeRule
	band   bandRule
	// check is what the rules above do not say (nil: nothing more).
	check func(c *Check) error
	// eval decides the check on the frames (Check.Evaluate's cursor
	// already applied) and says what it compared.
	eval func(e *evaluator, c *Check) (bool, string)
}

// param is a string parameter of a kind.
type param struct {
	name     string
	required bool
	// what says what the value is, in "needs NAME (WHAT)".
	what string
	// choices, if set, lists the values it may take.
	choices func() []string
}

// timeRule is where in the run a kind reads.
type timeRule uint8

const (
	// timeNone: no frame at all (the run's settings); decided at once.
	timeNone timeRule = iota
	// timeAt: the tick at `at`.
	timeAt
	// timeAtOrWindow: the tick at `at`, or from/to.
	timeAtOrWindow
	// timeOptional: at, from/to, or neither for the whole run.
	timeOptional
)

// bandRule is whether a kind takes min/max.
type bandRule uint8

const (
	bandNone bandRule = iota
	bandOptional
	bandRequired
)

// kinds is the table of check kinds, in the order errors list them.
var kinds = []kind{
	{name: KindEjected, params: []param{hostParam(true)}, time: timeAt,
		eval: (*evaluator).ejected},
	{name: KindNotEjected, params: []param{hostParam(false)}, time: timeAtOrWindow,
		eval: (*evaluator).notEjected},
	{name: KindEjectedHosts, time: timeAt, band: bandRequired,
		eval: (*evaluator).ejectedHosts},
	{name: KindEvent, time: timeAtOrWindow, band: bandOptional,
		params: []param{
			{name: "event", required: true, choices: func() []string { return EventKinds }},
			hostParam(false),
			{name: "detector", choices: detectorNames},
		},
		check: checkEvent, eval: (*evaluator).event},
	{name: KindStat, time: timeAtOrWindow, band: bandRequired,
		params: []param{{name: "name", required: true, what: "a stat", choices: StatNames}},
		eval:   (*evaluator).stat},
	{name: KindClients, time: timeOptional, band: bandRequired,
		params: []param{{name: "name", required: true, what: "a clients metric", choices: metricNames(subjectClients)}},
		eval:   (*evaluator).clients},
	{name: KindSuccessRate, time: timeAtOrWindow, band: bandOptional,
		params: []param{
			{name: "is", choices: func() []string { return SuccessRateGates }},
			{name: "name", choices: metricNames(subjectPass)},
		},
		check: checkSuccessRate, eval: (*evaluator).successRate},
	{name: KindHost, time: timeAt, band: bandRequired,
		params: []param{hostParam(true), {name: "name", required: true, what: "a host metric", choices: metricNames(subjectHost)}},
		eval:   (*evaluator).host},
	{name: KindShare, params: []param{hostParam(true)}, time: timeOptional, band: bandRequired,
		eval: (*evaluator).share},
	{name: KindPanic, time: timeAtOrWindow,
		eval: func(e *evaluator, c *Check) (bool, string) { return e.panic(c, true) }},
	{name: KindNoPanic, time: timeAtOrWindow,
		eval: func(e *evaluator, c *Check) (bool, string) { return e.panic(c, false) }},
	{name: KindSetting, time: timeNone, band: bandOptional,
		params: []param{
			{name: "name", required: true, what: "a setting: an outlier_detection field by its Envoy name, or a scenario knob"},
			{name: "is"},
		},
		check: (*Check).validateSetting, eval: (*evaluator).setting},
}

func hostParam(required bool) param {
	return param{name: "host", required: required, what: `a host as the frames name it, like "h5"`}
}

func kindOf(name string) (*kind, bool) {
	for i := range kinds {
		if kinds[i].name == name {
			return &kinds[i], true
		}
	}
	return nil, false
}

func kindNames() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return out
}

// detectorNames are Envoy's ejection types in lower case.
func detectorNames() []string {
	var out []string
	for t := engine.EjectionType(0); t.String() != "unknown"; t++ {
		out = append(out, t.String())
	}
	return out
}

// takes lists every parameter the kind reads.
func (k *kind) takes() []string {
	var out []string
	for _, p := range k.params {
		out = append(out, p.name)
	}
	switch k.time {
	case timeAt:
		out = append(out, "at")
	case timeAtOrWindow, timeOptional:
		out = append(out, "at", "from", "to")
	}
	if k.band != bandNone {
		out = append(out, "min", "max", "thin_margin")
	}
	return out
}

// validate checks a check of this kind: its parameters present and among
// their choices, the kind's own rule, its times and band, and nothing it
// does not take. Errors name the parameter; the caller adds the path.
func (k *kind) validate(c *Check) error {
	for _, p := range k.params {
		v := fieldValue(c, p.name)
		switch {
		case v == "" && p.required && p.what != "":
			return fmt.Errorf("needs %s (%s)", p.name, p.what)
		case v == "" && p.required:
			return fmt.Errorf("needs %s", p.name)
		case v != "" && p.choices != nil && !slices.Contains(p.choices(), v):
			return fmt.Errorf("%s %q is not one of %s", p.name, v, strings.Join(p.choices(), ", "))
		}
	}
	if k.check != nil {
		if err := k.check(c); err != nil {
			return err
		}
	}
	if err := validateTime(c, k.time); err != nil {
		return err
	}
	if k.band != bandNone {
		if err := validateBand(c, k.band == bandRequired); err != nil {
			return err
		}
	}
	takes := k.takes()
	for _, f := range checkFields {
		if f.set(c) && !slices.Contains(takes, f.name) {
			return fmt.Errorf("does not take %s", f.name)
		}
	}
	return nil
}

func checkEvent(c *Check) error {
	if c.Detector != "" && c.Event == "uneject" {
		return errors.New("an uneject has no detector (Envoy logs every uneject as consecutive_5xx)")
	}
	return nil
}

func checkSuccessRate(c *Check) error {
	switch {
	case c.Is != "" && (c.Name != "" || c.Min != nil || c.Max != nil):
		return errors.New("use is (a gate) or name with min/max, not both")
	case c.Is == "" && c.Name == "":
		return fmt.Errorf("needs is (one of %s) or name (one of %s)", strings.Join(SuccessRateGates, ", "), strings.Join(metricNames(subjectPass)(), ", "))
	case c.Name != "":
		return validateBand(c, true)
	}
	return nil
}

// ---- evaluation, kind by kind ----------------------------------------------

func (e *evaluator) ejected(c *Check) (bool, string) {
	_, h, err := e.hostAt(c.Host, c.At)
	if err != "" {
		return false, err
	}
	return h.Ejected, fmt.Sprintf("%s ejected at %s: %s", c.Host, c.At, yesNo(h.Ejected))
}

func (e *evaluator) notEjected(c *Check) (bool, string) {
	who := c.Host
	if who == "" {
		who = "no host"
	}
	frames, when, fail := e.framesFor(c, "at ", "at any tick ")
	if fail != "" {
		return false, fail
	}
	for _, f := range frames {
		found := c.Host == ""
		for _, h := range f.Hosts {
			if c.Host != "" && h.Name != c.Host {
				continue
			}
			found = true
			if h.Ejected {
				return false, fmt.Sprintf("%s ejected %s: %s was ejected at %s", who, when, h.Name, fmtSeconds(f.TMs))
			}
		}
		if !found {
			return false, fmt.Sprintf("no host %s in this run", c.Host)
		}
	}
	if c.Host == "" {
		return true, fmt.Sprintf("hosts ejected %s: none", when)
	}
	return true, fmt.Sprintf("%s ejected %s: no", c.Host, when)
}

func (e *evaluator) ejectedHosts(c *Check) (bool, string) {
	f := e.frameAt(c.At)
	if f == nil {
		return false, e.noFrame(c.At)
	}
	m, _ := metricOf(subjectCluster, "ejected_count")
	n, _ := m.value(&reading{run: e.run, frame: f})
	list := "none"
	if names := ejectedNames(f); len(names) > 0 {
		list = strings.Join(names, " ")
	}
	e.seen(c, n)
	return inBand(n, c.Min, c.Max), fmt.Sprintf("hosts ejected at %s: %s (%s)%s", c.At, fmtNum(n), list, want(c.Min, c.Max, ""))
}

func (e *evaluator) event(c *Check) (bool, string) {
	var from, to int64
	var when string
	if c.At != 0 {
		if e.frameAt(c.At) == nil {
			return false, e.noFrame(c.At)
		}
		from, to, when = int64(c.At), int64(c.At), "at "+c.At.String()
	} else {
		var label string
		from, to, label = e.window(c)
		when = "in " + label
	}
	n, times := e.countEvents(c, from, to)
	lo, hi := c.Min, c.Max
	if lo == nil && hi == nil {
		one := 1.0
		lo = &one
	}
	what := c.Event
	if c.Detector != "" {
		what += " (" + c.Detector + ")"
	}
	if c.Host != "" {
		what = c.Host + " " + what
	}
	list := ""
	if len(times) > 0 {
		list = " [" + strings.Join(times, ", ")
		if n > len(times) {
			list += ", …"
		}
		list += "]"
	}
	e.seen(c, float64(n))
	return inBand(float64(n), lo, hi), fmt.Sprintf("%s %s: %d%s%s", what, when, n, list, want(lo, hi, ""))
}

// countEvents counts the events an event check matches with from ≤ time ≤
// to, and lists the first eight.
func (e *evaluator) countEvents(c *Check, from, to int64) (n int, times []string) {
	det, _ := engine.ParseEjectionType(c.Detector)
	for i := range e.frames {
		for _, ev := range e.frames[i].Events {
			switch {
			case ev.AtMs < from || ev.AtMs > to || ev.Kind.String() != c.Event,
				c.Host != "" && ev.Host != c.Host,
				c.Detector != "" && ev.Detector != det:
				continue
			}
			n++
			if len(times) < 8 {
				t := fmtSeconds(ev.AtMs)
				if c.Host == "" {
					t = ev.Host + " " + t
				}
				times = append(times, t)
			}
		}
	}
	return n, times
}

func (e *evaluator) stat(c *Check) (bool, string) {
	if c.At != 0 {
		f := e.frameAt(c.At)
		if f == nil {
			return false, e.noFrame(c.At)
		}
		v, _ := statValue(f, c.Name)
		e.seen(c, float64(v))
		return inBand(float64(v), c.Min, c.Max), fmt.Sprintf("%s at %s: %d%s", c.Name, c.At, v, want(c.Min, c.Max, ""))
	}
	from, to, label := e.window(c)
	// The increase over the window is the value at its last tick minus the
	// value at the last tick before it starts (0 before the first).
	var before, after uint64
	var seen bool
	for i := range e.frames {
		f := &e.frames[i]
		v, _ := statValue(f, c.Name)
		if f.TMs < from {
			before = v
		}
		if f.TMs <= to {
			after, seen = v, true
		}
	}
	if !seen {
		return false, "no tick in " + label
	}
	d := after - before
	e.seen(c, float64(d))
	return inBand(float64(d), c.Min, c.Max), fmt.Sprintf("%s increase %s: %d%s", c.Name, label, d, want(c.Min, c.Max, ""))
}

func (e *evaluator) clients(c *Check) (bool, string) {
	frames, label, none := e.intervalsFor(c)
	if none != "" {
		return false, none
	}
	m, _ := metricOf(subjectClients, c.Name)
	v, _ := m.value(&reading{run: e.run, frames: frames})
	u := m.suffix()
	e.seen(c, v)
	return inBand(v, c.Min, c.Max), fmt.Sprintf("clients' %s %s: %s%s%s", words(c.Name), label, fmtNum(v), u, want(c.Min, c.Max, u))
}

func (e *evaluator) successRate(c *Check) (bool, string) {
	frames, when, fail := e.framesFor(c, "at ", "at every tick ")
	if fail != "" {
		return false, fail
	}
	m, _ := metricOf(subjectPass, c.Name)
	for _, f := range frames {
		sr := f.SuccessRate
		if c.Is != "" {
			if sr.Gate != c.Is {
				return false, fmt.Sprintf("success rate %s: %s at %s (wanted %s)", when, gateWords(sr), fmtSeconds(f.TMs), c.Is)
			}
			continue
		}
		if m.ran && sr.Gate != "ran" {
			return false, fmt.Sprintf("success rate %s %s: did not run at %s (%s)", c.Name, when, fmtSeconds(f.TMs), gateWords(sr))
		}
		v, _ := m.value(&reading{run: e.run, frame: f})
		e.seen(c, v)
		if !inBand(v, c.Min, c.Max) {
			return false, fmt.Sprintf("success rate %s at %s: %s%s", c.Name, fmtSeconds(f.TMs), fmtNum(v), want(c.Min, c.Max, ""))
		}
		if len(frames) == 1 {
			return true, fmt.Sprintf("success rate %s %s: %s%s", c.Name, when, fmtNum(v), want(c.Min, c.Max, ""))
		}
	}
	if c.Is != "" {
		return true, fmt.Sprintf("success rate %s: %s", when, c.Is)
	}
	return true, fmt.Sprintf("success rate %s %s: within%s", c.Name, when, want(c.Min, c.Max, ""))
}

// gateWords says why a success-rate pass stopped, with its numbers.
func gateWords(sr scenario.RateFrame) string {
	switch sr.Gate {
	case "ran":
		return "ran"
	case "too_few_hosts":
		return fmt.Sprintf("too_few_hosts (fewer hosts than success_rate_minimum_hosts %d)", sr.MinimumHosts)
	case "too_few_hosts_with_volume":
		return fmt.Sprintf("too_few_hosts_with_volume (%d with volume, %d needed)", sr.HostsWithVolume, sr.MinimumHosts)
	}
	return sr.Gate
}

func (e *evaluator) host(c *Check) (bool, string) {
	f, h, err := e.hostAt(c.Host, c.At)
	if err != "" {
		return false, err
	}
	m, _ := metricOf(subjectHost, c.Name)
	v, _ := m.value(&reading{run: e.run, frame: f, host: h, arg: c.Host})
	e.seen(c, v)
	return inBand(v, c.Min, c.Max), fmt.Sprintf("%s %s at %s: %s%s", c.Host, words(c.Name), c.At, fmtNum(v), want(c.Min, c.Max, ""))
}

func (e *evaluator) share(c *Check) (bool, string) {
	frames, label, none := e.intervalsFor(c)
	if none != "" {
		return false, none
	}
	m, _ := metricOf(subjectShare, "share")
	v, err := m.value(&reading{run: e.run, frames: frames, arg: c.Host})
	if err != nil {
		return false, err.Error() + " in this run"
	}
	e.seen(c, v)
	return inBand(v, c.Min, c.Max), fmt.Sprintf("%s's share of attempts %s: %s%%%s", c.Host, label, fmtNum(v), want(c.Min, c.Max, "%"))
}

func (e *evaluator) panic(c *Check, wantPanic bool) (bool, string) {
	frames, when, fail := e.framesFor(c, "in the interval to ", "in intervals to ")
	if fail != "" {
		return false, fail
	}
	var at []string
	for _, f := range frames {
		if f.Panic {
			at = append(at, fmtSeconds(f.TMs))
		}
	}
	got := len(at) > 0
	d := fmt.Sprintf("panic %s: %s", when, yesNo(got))
	if got {
		if len(at) > 6 {
			at = append(at[:6], "…")
		}
		d += " (" + strings.Join(at, ", ") + ")"
	}
	if !wantPanic {
		d += " (wanted no)"
	}
	return got == wantPanic, d
}

// words writes a metric's name as a detail reads it: "failure pct".
func words(name string) string { return strings.ReplaceAll(name, "_", " ") }
