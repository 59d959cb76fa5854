package course

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
)

// A placeholder is a live number in a lesson's prose, resolved against the
// learner's current run:
//
//	{{name}}              at the cursor (or over the run so far)
//	{{name:arg}}          with an argument: a host, a stat, a setting
//	{{name@40s}}          at the tick at 40 s
//	{{name:h5@40s}}
//	{{name@30s-300s}}     over a window ("30s-end" runs to the last frame,
//	                      "30s-now" to the cursor)
//
// Names (see placeholderDefs): hosts, interval, k, cap_pct, cap_first,
// cap_admits, sr_bound, sr_needed:N, setting:NAME; at a tick: threshold,
// mean, stdev, gate, hosts_with_volume, ejected, ejected_count, cap_next,
// panic, healthy, healthy_pct, stat:NAME, rate:HOST, requests:HOST,
// multiplier:HOST, returns_in:HOST; over a window: failures, retry_pct,
// p99, share:HOST.
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

type argKind uint8

const (
	argNone argKind = iota
	argHost
	argStat
	argSetting
	argNumber
)

type whenKind uint8

const (
	whenNone   whenKind = iota // a property of the settings
	whenTick                   // a tick's state
	whenWindow                 // a sum over intervals
)

type placeholderDef struct {
	arg  argKind
	when whenKind
}

var placeholderDefs = map[string]placeholderDef{
	"hosts":             {argNone, whenNone},
	"interval":          {argNone, whenNone},
	"k":                 {argNone, whenNone},
	"cap_pct":           {argNone, whenNone},
	"cap_first":         {argNone, whenNone},
	"cap_admits":        {argNone, whenNone},
	"sr_bound":          {argNone, whenNone},
	"sr_needed":         {argNumber, whenNone},
	"setting":           {argSetting, whenNone},
	"threshold":         {argNone, whenTick},
	"mean":              {argNone, whenTick},
	"stdev":             {argNone, whenTick},
	"gate":              {argNone, whenTick},
	"hosts_with_volume": {argNone, whenTick},
	"ejected":           {argNone, whenTick},
	"ejected_count":     {argNone, whenTick},
	"cap_next":          {argNone, whenTick},
	"panic":             {argNone, whenTick},
	"healthy":           {argNone, whenTick},
	"healthy_pct":       {argNone, whenTick},
	"stat":              {argStat, whenTick},
	"rate":              {argHost, whenTick},
	"requests":          {argHost, whenTick},
	"multiplier":        {argHost, whenTick},
	"returns_in":        {argHost, whenTick},
	"failures":          {argNone, whenWindow},
	"retry_pct":         {argNone, whenWindow},
	"p99":               {argNone, whenWindow},
	"share":             {argHost, whenWindow},
}

// PlaceholderNames lists the placeholder names, sorted.
func PlaceholderNames() []string {
	var out []string
	for n := range placeholderDefs {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

var placeholderRE = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

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
	def, ok := placeholderDefs[p.Name]
	if !ok {
		return p, fmt.Errorf("unknown name %q (known: %s)", p.Name, strings.Join(PlaceholderNames(), ", "))
	}
	switch def.arg {
	case argNone:
		if p.Arg != "" {
			return p, fmt.Errorf("%s takes no argument", p.Name)
		}
	case argHost:
		if !hostNameRE.MatchString(p.Arg) {
			return p, fmt.Errorf("%s needs a host like %s:h5", p.Name, p.Name)
		}
	case argStat:
		if !slices.Contains(StatNames(), p.Arg) {
			return p, fmt.Errorf("stat needs a stat name, like stat:ejections_overflow (got %q)", p.Arg)
		}
	case argSetting:
		if !isSetting(p.Arg) {
			return p, fmt.Errorf("setting needs an outlier_detection field or scenario knob (got %q)", p.Arg)
		}
	case argNumber:
		if n, err := strconv.Atoi(p.Arg); err != nil || n < 1 {
			return p, fmt.Errorf("%s needs a whole number ≥ 1, like %s:2", p.Name, p.Name)
		}
	}
	if when == "" {
		return p, nil
	}
	switch def.when {
	case whenNone:
		return p, fmt.Errorf("%s does not depend on time; drop @%s", p.Name, when)
	case whenTick:
		t, err := ParseMs(when)
		if err != nil || t == 0 || t == End {
			return p, fmt.Errorf("%s needs a tick time like @40s", p.Name)
		}
		p.At = t
	case whenWindow:
		a, b, isWindow := strings.Cut(when, "-")
		from, err := ParseMs(a)
		if err != nil || from == End {
			return p, fmt.Errorf("%s needs a window like @30s-300s or @30s-end, or one interval like @40s", p.Name)
		}
		if !isWindow {
			if from == 0 {
				return p, fmt.Errorf("%s@0s is not an interval", p.Name)
			}
			p.At = from
			return p, nil
		}
		if b == "now" {
			p.From, p.Window, p.ToCursor = from, true, true
			return p, nil
		}
		to, err := ParseMs(b)
		if err != nil || to <= from {
			return p, fmt.Errorf("%s needs a window like @30s-300s, @30s-end or @30s-now", p.Name)
		}
		p.From, p.To, p.Window = from, to, true
	}
	return p, nil
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
	def, ok := placeholderDefs[p.Name]
	if !ok {
		return "", fmt.Errorf("unknown placeholder %q", p.Name)
	}
	cfg := res.Config
	n := res.Scenario.Cluster.Hosts
	switch def.when {
	case whenNone:
		switch p.Name {
		case "hosts":
			return strconv.Itoa(n), nil
		case "interval":
			return fmtSeconds(cfg.IntervalMs), nil
		case "k":
			return fmtDec(cfg.StdevFactor(), 3), nil
		case "cap_pct":
			return strconv.Itoa(int(cfg.MaxEjectionPercent)), nil
		case "cap_first":
			return fmtDec(capPercent(0, n), 1), nil
		case "cap_admits":
			return strconv.Itoa(capAdmits(cfg, n)), nil
		case "sr_bound":
			k := cfg.StdevFactor()
			return fmtDec(1+k*k, 2), nil
		case "sr_needed":
			bad, _ := strconv.Atoi(p.Arg)
			return strconv.Itoa(srNeeded(cfg, bad)), nil
		case "setting":
			return settingValue(res, p.Arg)
		}
	case whenTick:
		if p.At != 0 && int64(p.At) > cursorMs {
			return "", errNotYet
		}
		f, err := p.tick(res, cursorMs)
		if err != nil {
			return "", err
		}
		return p.resolveTick(res, f)
	case whenWindow:
		return p.resolveWindow(res, cursorMs)
	}
	return "", fmt.Errorf("unknown placeholder %q", p.Name)
}

// tick finds the frame the placeholder reads: its At, or the last frame at
// or before the cursor.
func (p Placeholder) tick(res *scenario.Result, cursorMs int64) (*scenario.Frame, error) {
	if p.At != 0 {
		for i := range res.Frames {
			if res.Frames[i].TMs == int64(p.At) {
				return &res.Frames[i], nil
			}
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

func (p Placeholder) resolveTick(res *scenario.Result, f *scenario.Frame) (string, error) {
	sr := f.SuccessRate
	host := func() (*scenario.HostFrame, error) {
		for i := range f.Hosts {
			if f.Hosts[i].Name == p.Arg {
				return &f.Hosts[i], nil
			}
		}
		return nil, fmt.Errorf("no host %s", p.Arg)
	}
	switch p.Name {
	case "threshold", "mean", "stdev":
		if sr.Gate != "ran" {
			return "", fmt.Errorf("success rate did not run (%s)", sr.Gate)
		}
		switch p.Name {
		case "threshold":
			return fmtDec(sr.Threshold, 1), nil
		case "mean":
			return fmtDec(sr.Mean, 1), nil
		default:
			return fmtDec(sr.StdDev, 2), nil
		}
	case "gate":
		if sr.Gate == "ran" {
			return "ran", nil
		}
		return fmt.Sprintf("skipped: %d hosts with enough requests, %d needed", sr.HostsWithVolume, sr.MinimumHosts), nil
	case "hosts_with_volume":
		return strconv.Itoa(sr.HostsWithVolume), nil
	case "ejected", "ejected_count":
		var names []string
		for _, h := range f.Hosts {
			if h.Ejected {
				names = append(names, h.Name)
			}
		}
		if p.Name == "ejected_count" {
			return strconv.Itoa(len(names)), nil
		}
		if len(names) == 0 {
			return "none", nil
		}
		return strings.Join(names, ", "), nil
	case "cap_next":
		active := f.Stats[engine.StatEjectionsActive]
		return fmtDec(capPercent(int(active), res.Scenario.Cluster.Hosts), 1), nil
	case "panic":
		return yesNo(f.Panic), nil
	case "healthy":
		return strconv.Itoa(f.Healthy), nil
	case "healthy_pct":
		if len(f.Hosts) == 0 {
			return "", errors.New("no hosts")
		}
		return fmtDec(100*float64(f.Healthy)/float64(len(f.Hosts)), 1), nil
	case "stat":
		v, _ := statValue(f, p.Arg)
		return strconv.FormatUint(v, 10), nil
	case "rate":
		h, err := host()
		if err != nil {
			return "", err
		}
		if h.SuccessRate < 0 {
			return "", errors.New("no requests")
		}
		return fmtDec(h.SuccessRate, 1), nil
	case "requests":
		h, err := host()
		if err != nil {
			return "", err
		}
		return strconv.FormatUint(h.Requests, 10), nil
	case "multiplier":
		h, err := host()
		if err != nil {
			return "", err
		}
		return strconv.Itoa(int(h.Multiplier)), nil
	case "returns_in":
		h, err := host()
		if err != nil {
			return "", err
		}
		return fmtSeconds(h.ReturnsInMs), nil
	}
	return "", fmt.Errorf("unknown placeholder %q", p.Name)
}

func (p Placeholder) resolveWindow(res *scenario.Result, cursorMs int64) (string, error) {
	e := evaluator{frames: res.Frames}
	// A fixed interval or window reads the same frames whatever the
	// cursor, like a fixed tick; without a time the sum covers the run so
	// far and grows as the learner steps.
	// A fixed time the learner has not reached yet would give the answer
	// away before the predict-then-reveal moment: show it once the cursor
	// gets there.
	switch {
	case p.At != 0 && int64(p.At) > cursorMs:
		return "", errNotYet
	case p.Window && !p.ToCursor:
		if _, to, _ := e.window(&Check{From: p.From, To: p.To}); to > cursorMs {
			return "", errNotYet
		}
	}
	var frames []*scenario.Frame
	switch {
	case p.At != 0:
		f := e.frameAt(p.At)
		if f == nil {
			return "", fmt.Errorf("no tick at %s", p.At)
		}
		frames = []*scenario.Frame{f}
	case p.ToCursor:
		frames = e.intervals(int64(p.From), min(e.lastMs(), cursorMs))
	case p.Window:
		from, to, _ := e.window(&Check{From: p.From, To: p.To})
		frames = e.intervals(from, to)
	default:
		frames = e.intervals(0, min(e.lastMs(), cursorMs))
	}
	if len(frames) == 0 {
		return "", errors.New("no whole interval")
	}
	var req, fail, retries, mine, all uint64
	var p99 float64
	found := false
	for _, f := range frames {
		p99 = max(p99, f.Clients.LatencyP99Ms)
		req += f.Clients.Requests
		fail += f.Clients.Failures
		retries += f.Clients.RetriesSent
		for _, h := range f.Hosts {
			all += h.Attempts
			if h.Name == p.Arg {
				mine += h.Attempts
				found = true
			}
		}
	}
	switch p.Name {
	case "failures":
		return fmtDec(pct(fail, req), 2), nil
	case "retry_pct":
		return fmtDec(pct(retries, req), 1), nil
	case "p99":
		return fmtDec(p99, 0), nil
	case "share":
		if !found {
			return "", fmt.Errorf("no host %s", p.Arg)
		}
		return fmtDec(pct(mine, all), 1), nil
	}
	return "", fmt.Errorf("unknown placeholder %q", p.Name)
}

// capPercent is the share the next ejection would make: 100·(active+1)/N,
// the number Envoy (≥ 1.28) compares with max_ejection_percent.
func capPercent(active, hosts int) float64 {
	if hosts <= 0 {
		return math.Inf(1)
	}
	return 100 * float64(active+1) / float64(hosts)
}

// capAdmits is how many hosts can be ejected at once: the largest k with
// 100·k/N ≤ max_ejection_percent, at least 1 with always_eject_one_host.
func capAdmits(cfg engine.Config, hosts int) int {
	k := 0
	for k < hosts && capPercent(k, hosts) <= float64(min(cfg.MaxEjectionPercent, 100)) {
		k++
	}
	if k == 0 && cfg.AlwaysEjectOneHost && hosts > 0 {
		k = 1
	}
	return k
}

// srNeeded is the fewest valid hosts among which `bad` equally bad hosts
// can all be success-rate outliers: N > bad·(1 + k²) (envoy-semantics.md
// §14.3). With k = 1.9 that is 5 for one bad host, 10 for two.
func srNeeded(cfg engine.Config, bad int) int {
	k := cfg.StdevFactor()
	bound := float64(bad) * (1 + k*k)
	return int(math.Floor(bound)) + 1
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
