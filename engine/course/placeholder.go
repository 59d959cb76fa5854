package course

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
)

// A Placeholder is a live number in a lesson's prose, resolved against the
// learner's current run:
//
//	{{name}}              at the cursor (or over the run so far)
//	{{name:arg}}          with an argument: a host, a stat, a setting
//	{{name@40s}}          at the tick at 40 s
//	{{name:h5@40s}}
//	{{name@30s-300s}}     over a window ("30s-end" runs to the last frame,
//	                      "30s-now" to the cursor)
//
// The names are the metrics (metric.go), each with its unit: settings
// (hosts, interval, k, cap_pct, cap_first, cap_admits, sr_bound,
// sr_needed:N, setting:NAME), a tick's state (threshold, mean, stdev,
// gate, hosts_with_volume, ejected, ejected_count, cap_next, panic,
// healthy, healthy_pct, stat:NAME), one host at a tick (success_rate:HOST,
// requests:HOST, multiplier:HOST, returns_in_s:HOST, ...), the clients over
// a window (failure_pct, retry_pct, requests, failures, p99_ms, ...) and
// share:HOST.
//
// A placeholder with a fixed time shows that time's value once the cursor
// has reached it (prose may quote "the threshold at 40 s") and Dash before;
// one without a time follows the cursor, so the number moves as the
// learner steps.
type Placeholder struct {
	// Raw is the text between the braces, trimmed.
	Raw  string
	Name string
	Arg  string
	// At is a tick, or for a window placeholder one interval (0: the
	// cursor). From/To is a window when Window is set (To may be End);
	// ToCursor ("@30s-now") ends it at the cursor instead.
	At       Ms
	From, To Ms
	Window   bool
	ToCursor bool
}

var placeholderRE = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// Placeholders returns the inside of every {{...}} in text, trimmed, in
// order: what ParsePlaceholder reads. Workshop plans (engine/plan) find the
// live numbers of their notes with it.
func Placeholders(text string) []string { return findPlaceholders(text) }

// findPlaceholders returns the inside of every {{...}} in text.
func findPlaceholders(text string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

var hostNameRE = regexp.MustCompile(`^h[0-9]+$`)

// ParsePlaceholder reads the text between the braces.
func ParsePlaceholder(raw string) (Placeholder, error) {
	p := Placeholder{Raw: strings.TrimSpace(raw)}
	s := p.Raw
	if s == "" {
		return p, errors.New("empty")
	}
	var when string
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s, when = s[:i], s[i+1:]
	}
	p.Name, p.Arg, _ = strings.Cut(s, ":")
	m, ok := placeholderMetric(p.Name, p.Arg)
	if !ok {
		return p, fmt.Errorf("unknown name %q (known: %s)", p.Name, strings.Join(PlaceholderNames(), ", "))
	}
	if err := m.arg.check(p.Name, p.Arg); err != nil {
		return p, err
	}
	if when == "" {
		return p, nil
	}
	switch m.subject.when() {
	case whenNone:
		return p, fmt.Errorf("%s does not depend on time; drop @%s", p.Name, when)
	case whenTick:
		t, err := ParseMs(when)
		if err != nil || t == 0 || t == End {
			return p, fmt.Errorf("%s needs a tick time like @40s", p.Name)
		}
		p.At = t
		return p, nil
	}
	return p, p.parseWindow(when)
}

// check reads a placeholder's argument (name is the placeholder's name,
// for the message).
func (a argKind) check(name, arg string) error {
	switch a {
	case argNone:
		if arg != "" {
			return fmt.Errorf("%s takes no argument", name)
		}
	case argHost:
		if !hostNameRE.MatchString(arg) {
			return fmt.Errorf("%s needs a host like %s:h5", name, name)
		}
	case argStat:
		if !slices.Contains(StatNames(), arg) {
			return fmt.Errorf("stat needs a stat name, like stat:ejections_overflow (got %q)", arg)
		}
	case argSetting:
		if !isSetting(arg) {
			return fmt.Errorf("setting needs an outlier_detection field or scenario knob (got %q)", arg)
		}
	case argNumber:
		if n, err := strconv.Atoi(arg); err != nil || n < 1 {
			return fmt.Errorf("%s needs a whole number ≥ 1, like %s:2", name, name)
		}
	}
	return nil
}

// parseWindow reads a window placeholder's time: one interval ("40s"), or
// a window ("30s-300s", "30s-end", "30s-now").
func (p *Placeholder) parseWindow(when string) error {
	a, b, isWindow := strings.Cut(when, "-")
	from, err := ParseMs(a)
	if err != nil || from == End {
		return fmt.Errorf("%s needs a window like @30s-300s or @30s-end, or one interval like @40s", p.Name)
	}
	if !isWindow {
		if from == 0 {
			return fmt.Errorf("%s@0s is not an interval", p.Name)
		}
		p.At = from
		return nil
	}
	if b == "now" {
		p.From, p.Window, p.ToCursor = from, true, true
		return nil
	}
	to, err := ParseMs(b)
	if err != nil || to <= from {
		return fmt.Errorf("%s needs a window like @30s-300s, @30s-end or @30s-now", p.Name)
	}
	p.From, p.To, p.Window = from, to, true
	return nil
}

// Dash is what an unresolvable placeholder shows: before the first tick,
// a host that the learner's host count removed, success rate not run.
const Dash = "—"

// errNotYet: the placeholder reads a time after the cursor.
var errNotYet = errors.New("not yet: after the cursor")

// Expand replaces every placeholder in text with its value in res at the
// cursor; one that cannot be resolved becomes Dash. A nil res resolves
// everything to Dash.
func Expand(text string, res *scenario.Result, cursorMs int64) string {
	return ExpandFunc(text, func(p Placeholder) string {
		v, err := p.Resolve(res, cursorMs)
		if err != nil {
			return Dash
		}
		return v
	})
}

// ExpandFunc replaces every placeholder with f's result, so the web layer
// can wrap each value (a span it updates as the learner steps). A
// placeholder that does not parse is left as written (Load refuses such
// files, so this only happens with hand-made text).
func ExpandFunc(text string, f func(Placeholder) string) string {
	return placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		p, err := ParsePlaceholder(placeholderRE.FindStringSubmatch(m)[1])
		if err != nil {
			return m
		}
		return f(p)
	})
}

// ExpandRaw replaces every {{...}} in text with f of its inside (trimmed),
// parsed or not: for files that extend the placeholder syntax (a workshop
// plan's stated numbers, engine/plan) and parse the inside themselves.
func ExpandRaw(text string, f func(raw string) string) string {
	return placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		return f(placeholderRE.FindStringSubmatch(m)[1])
	})
}

// Body is the lesson's markdown with its placeholders resolved against res
// at the cursor.
func Body(l Lesson, res *scenario.Result, cursorMs int64) string {
	return Expand(l.Markdown, res, cursorMs)
}

// Resolve computes the placeholder's value in res as the learner sees it
// at cursorMs (WholeRun: the whole run).
func (p Placeholder) Resolve(res *scenario.Result, cursorMs int64) (string, error) {
	if res == nil {
		return "", errors.New("no run")
	}
	m, ok := placeholderMetric(p.Name, p.Arg)
	if !ok {
		return "", fmt.Errorf("unknown placeholder %q", p.Name)
	}
	r := reading{run: res, arg: p.Arg}
	switch m.subject.when() {
	case whenTick:
		if p.At != 0 && int64(p.At) > cursorMs {
			return "", errNotYet
		}
		f, err := p.tick(res, cursorMs)
		if err != nil {
			return "", err
		}
		r.frame = f
		if m.arg == argHost {
			if r.host = hostIn(f, p.Arg); r.host == nil {
				return "", fmt.Errorf("no host %s", p.Arg)
			}
		}
	case whenWindow:
		frames, err := p.window(res, cursorMs)
		if err != nil {
			return "", err
		}
		r.frames = frames
	}
	return m.text(&r)
}

// tick finds the frame the placeholder reads: its At, or the last frame at
// or before the cursor.
func (p Placeholder) tick(res *scenario.Result, cursorMs int64) (*scenario.Frame, error) {
	if p.At != 0 {
		if i := frameIndex(res.Frames, p.At); i >= 0 {
			return &res.Frames[i], nil
		}
		return nil, fmt.Errorf("no tick at %s", p.At)
	}
	var last *scenario.Frame
	for i := range res.Frames {
		if res.Frames[i].TMs > cursorMs {
			break
		}
		last = &res.Frames[i]
	}
	if last == nil {
		return nil, errors.New("before the first tick")
	}
	return last, nil
}

// window finds the intervals a window placeholder adds up: the one closing
// at its At, the intervals of its window, or (without a time) the run so
// far. A fixed interval or window reads the same frames whatever the
// cursor, like a fixed tick, but only once the cursor has reached its end:
// before that it would give the answer away ahead of the predict-then-
// reveal moment. Without a fixed end the sum grows as the learner steps.
func (p Placeholder) window(res *scenario.Result, cursorMs int64) ([]scenario.Frame, error) {
	var frames []scenario.Frame
	switch {
	case p.At != 0:
		if int64(p.At) > cursorMs {
			return nil, errNotYet
		}
		i := frameIndex(res.Frames, p.At)
		if i < 0 {
			return nil, fmt.Errorf("no tick at %s", p.At)
		}
		frames = res.Frames[i : i+1]
	case p.Window && !p.ToCursor:
		to := int64(p.To)
		if p.To == End {
			to = lastMs(res.Frames)
		}
		if to > cursorMs {
			return nil, errNotYet
		}
		frames = scenario.Window(res.Frames, int64(p.From), to)
	default: // to the cursor, from the window's start or from 0 s
		frames = scenario.Window(res.Frames, int64(p.From), cursorMs)
	}
	if len(frames) == 0 {
		return nil, errors.New("no whole interval")
	}
	return frames, nil
}

// settingValue is a setting's effective value in the form a lesson writes
// it: outlier_detection fields as Envoy YAML reads them ("34", "30s",
// "true"), knobs as scenario.ApplyKnobs reads them.
func settingValue(res *scenario.Result, name string) (string, error) {
	if scenario.IsKnob(name) {
		return scenario.KnobValue(res.Scenario, name), nil
	}
	// ClusterYAML writes every field explicitly, one "  name: value" line
	// each, in exactly the form Envoy reads: the one source of that form.
	y := envoyconf.ClusterYAML(res.Config, "lesson", float64(res.Scenario.Cluster.HealthyPanicThreshold), res.Scenario.Cluster.Retry.MaxRetries)
	for line := range strings.SplitSeq(y, "\n") {
		if v, ok := strings.CutPrefix(line, "  "+name+": "); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown setting %q", name)
}

// fmtDec writes v with at most `places` decimals, trailing zeros dropped.
func fmtDec(v float64, places int) string {
	s := strconv.FormatFloat(v, 'f', places, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
