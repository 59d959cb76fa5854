package course

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
)

// Check is one machine-checkable claim about a run, written as data in a
// lesson's front matter. Either All or Any combines other checks, or Kind
// names a single test and the other fields are its parameters.
//
// Three notions of "when" are used, each the one a learner would mean:
//
//   - At is a tick: state checks (ejected, host, success_rate, panic, stat)
//     read the frame that closes at At; event checks count events whose
//     time is exactly At (tick decisions happen at tick times).
//   - From/To bound a window. State checks look at every tick in
//     [From, To]; event checks count events with From ≤ time ≤ To (so a
//     consecutive-5xx ejection at 31.2 s is inside 30 s–40 s); traffic
//     checks (clients, share) add up the intervals that lie inside the
//     window (start ≥ From, end ≤ To), so "30 s–end" is the traffic since
//     a fault that starts at 30 s.
//   - To "end" (or omitted, where a window is allowed) is the last frame.
//
// Min and Max bound a number, inclusively; either may be left out.
type Check struct {
	All []Check `json:"all,omitempty"`
	Any []Check `json:"any,omitempty"`

	// Kind is one of the Kind* constants.
	Kind string `json:"kind,omitempty"`
	// Host is a host name as the frames name it ("h5").
	Host string `json:"host,omitempty"`
	At   Ms     `json:"at,omitempty"`
	From Ms     `json:"from,omitempty"`
	To   Ms     `json:"to,omitempty"`
	// Event is eject, detect, overflow or uneject (KindEvent).
	Event string `json:"event,omitempty"`
	// Detector narrows an event check to one ejection type, by Envoy's
	// name in lower case (success_rate, consecutive_5xx, ...).
	Detector string `json:"detector,omitempty"`
	// Name is the quantity: a stat (KindStat), a client metric
	// (KindClients), a success-rate figure (KindSuccessRate), a host
	// figure (KindHost) or a setting (KindSetting).
	Name string `json:"name,omitempty"`
	// Is is the success-rate gate the pass must have stopped at (or
	// "ran"), or the value a setting check wants ("true", "random").
	Is  string   `json:"is,omitempty"`
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// The kinds of check.
const (
	// KindEjected: Host is ejected after the tick at At.
	KindEjected = "ejected"
	// KindNotEjected: Host (any host, if Host is empty) is not ejected
	// after the tick at At, or after any tick in [From, To].
	KindNotEjected = "not_ejected"
	// KindEjectedHosts: how many hosts are ejected after the tick at At
	// (Min/Max).
	KindEjectedHosts = "ejected_hosts"
	// KindEvent: how many events match Event (and Host, Detector) at At or
	// within [From, To]. Without Min and Max it means "at least one".
	KindEvent = "event"
	// KindStat: a cumulative stat at the tick At, or its increase from the
	// tick at From to the tick at To. Name is an outlier_detection stat
	// (ejections_overflow, ...) or a cluster stat (lb_healthy_panic,
	// upstream_rq_retry, ...).
	KindStat = "stat"
	// KindClients: what downstream clients saw over the intervals inside
	// [From, To] (or the one interval closing at At). Name is one of
	// ClientMetrics.
	KindClients = "clients"
	// KindSuccessRate: the external-origin success-rate pass at the tick
	// At (or at every tick in [From, To]): either Is (the gate) or Name
	// (mean, threshold, stdev, hosts_with_volume) within Min/Max.
	KindSuccessRate = "success_rate"
	// KindHost: one host's figure (Name, one of HostMetrics) at the tick At.
	KindHost = "host"
	// KindShare: Host's share of all attempts, in percent, over the
	// intervals inside [From, To] (or the interval closing at At).
	KindShare = "share"
	// KindPanic / KindNoPanic: the cluster was (was not) in panic during
	// the interval closing at At, or during any interval closing in
	// [From, To].
	KindPanic   = "panic"
	KindNoPanic = "no_panic"
	// KindSetting: a setting in effect in the run, by the name lessons
	// use in start and settings (an outlier_detection field or a scenario
	// knob): a number within Min/Max (durations in seconds), or any other
	// value equal to Is. It reads no frame, so it is decided at once: it
	// is how a step asks for the learner's own action ("set the cap to
	// 17"), which the run's outcome alone may not tell apart from another
	// step's.
	KindSetting = "setting"
)

// Kinds lists every check kind, for error messages and documentation.
var Kinds = []string{KindEjected, KindNotEjected, KindEjectedHosts, KindEvent, KindStat, KindClients, KindSuccessRate, KindHost, KindShare, KindPanic, KindNoPanic, KindSetting}

// ClientMetrics are the names a clients check reads: failure_pct
// (failures / requests), retry_pct (retries sent / requests), the sums
// requests, failures, retries, retry_overflow (budget or breaker refusals)
// and no_healthy (503 no healthy upstream), and the worst interval's
// p99_ms / p50_ms.
var ClientMetrics = []string{"failure_pct", "retry_pct", "requests", "failures", "retries", "retry_overflow", "no_healthy", "p99_ms", "p50_ms"}

// HostMetrics are the names a host check reads from the host's frame.
var HostMetrics = []string{"success_rate", "requests", "multiplier", "num_ejections", "returns_in_s", "consecutive_5xx", "attempts", "local_success_rate", "local_requests"}

// SuccessRateFigures are the numbers a success_rate check can bound.
var SuccessRateFigures = []string{"mean", "threshold", "stdev", "hosts_with_volume"}

// SuccessRateGates are the values of a success_rate check's Is.
var SuccessRateGates = []string{"ran", "too_few_hosts", "too_few_hosts_with_volume"}

// EventKinds are the values of an event check's Event.
var EventKinds = []string{"eject", "detect", "overflow", "uneject"}

// clusterStats are the router/LB counters a stat check can read, by the
// name Envoy gives them under cluster.<name>.
var clusterStats = map[string]func(f *scenario.Frame) uint64{
	"lb_healthy_panic":                 func(f *scenario.Frame) uint64 { return f.Cluster.LbHealthyPanic },
	"upstream_cx_none_healthy":         func(f *scenario.Frame) uint64 { return f.Cluster.UpstreamCxNoneHealthy },
	"upstream_rq_total":                func(f *scenario.Frame) uint64 { return f.Cluster.UpstreamRq },
	"upstream_rq_retry":                func(f *scenario.Frame) uint64 { return f.Cluster.RetrySent },
	"upstream_rq_retry_overflow":       func(f *scenario.Frame) uint64 { return f.Cluster.RetryOverflow },
	"upstream_rq_retry_limit_exceeded": func(f *scenario.Frame) uint64 { return f.Cluster.RetryLimitExceeded },
	"upstream_rq_retry_success":        func(f *scenario.Frame) uint64 { return f.Cluster.RetrySuccess },
	"upstream_rq_per_try_timeout":      func(f *scenario.Frame) uint64 { return f.Cluster.PerTryTimeout },
	"upstream_rq_timeout":              func(f *scenario.Frame) uint64 { return f.Cluster.RouteTimeout },
}

// StatNames lists every name a stat check accepts.
func StatNames() []string {
	var out []string
	for s := engine.Stat(0); s < engine.NumStats; s++ {
		out = append(out, s.Name())
	}
	return append(out, slices.Sorted(maps.Keys(clusterStats))...)
}

// statValue reads a stat by name from a frame.
func statValue(f *scenario.Frame, name string) (uint64, bool) {
	if s, ok := engine.LookupStat(name); ok {
		return f.Stats[s], true
	}
	if g := clusterStats[name]; g != nil {
		return g(f), true
	}
	return 0, false
}

// CheckResult is a check evaluated at a cursor.
type CheckResult struct {
	// Pass is true once the check is decidable and holds.
	Pass bool
	// Detail is what was compared, with the numbers: "h5 ejected at 40 s:
	// yes; clients' failure % 30 s–end: 0.82 (wanted 0.6–1)".
	Detail string
	// NeedsCursorMs is how far the learner must step (the time of the last
	// frame the check reads); before that the check is "not yet".
	NeedsCursorMs int64
	// Decided is false while the cursor is before NeedsCursorMs.
	Decided bool
}

// Validate reports the first problem with a check's shape: an unknown
// kind, a missing or stray parameter, an unknown name. It knows nothing of
// any run, so a host that does not exist is found by Evaluate instead.
func (c *Check) Validate() error { return c.validate("check") }

func (c *Check) validate(path string) error {
	nGroups := 0
	if c.All != nil {
		nGroups++
	}
	if c.Any != nil {
		nGroups++
	}
	if nGroups > 0 {
		if nGroups > 1 || c.Kind != "" {
			return fmt.Errorf("%s: use one of all, any or kind", path)
		}
		list, name := c.All, "all"
		if c.Any != nil {
			list, name = c.Any, "any"
		}
		if len(list) == 0 {
			return fmt.Errorf("%s.%s: is empty", path, name)
		}
		if c.Host != "" || c.At != 0 || c.From != 0 || c.To != 0 || c.Event != "" || c.Detector != "" || c.Name != "" || c.Is != "" || c.Min != nil || c.Max != nil {
			return fmt.Errorf("%s: %s cannot have parameters of its own; put them in its checks", path, name)
		}
		for i := range list {
			if err := list[i].validate(fmt.Sprintf("%s.%s[%d]", path, name, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if c.Kind == "" {
		return fmt.Errorf("%s: missing kind (one of %s), or all/any", path, strings.Join(Kinds, ", "))
	}
	if !slices.Contains(Kinds, c.Kind) {
		return fmt.Errorf("%s: unknown kind %q (want one of %s)", path, c.Kind, strings.Join(Kinds, ", "))
	}
	p := path + " (" + c.Kind + ")"
	// allowed lists the parameters this kind reads; anything else set is an
	// author's mistake (a check that silently ignores "host" would pass
	// for the wrong reason).
	var allowed []string
	need := func(field string, ok bool) error {
		if !ok {
			return fmt.Errorf("%s: needs %s", p, field)
		}
		return nil
	}
	var err error
	hasAt, hasWindow := c.At != 0, c.From != 0 || c.To != 0
	when := func(atOnly bool) error {
		switch {
		case hasAt && hasWindow:
			return fmt.Errorf("%s: use at or from/to, not both", p)
		case atOnly && hasWindow:
			return fmt.Errorf("%s: takes at, not from/to", p)
		case atOnly && !hasAt:
			return fmt.Errorf("%s: needs at", p)
		case c.From != 0 && c.To != 0 && c.To < c.From:
			return fmt.Errorf("%s: to %s is before from %s", p, c.To, c.From)
		case c.At == End:
			return fmt.Errorf("%s: at cannot be end; use from/to", p)
		}
		return nil
	}
	band := func() error {
		if c.Min == nil && c.Max == nil {
			return fmt.Errorf("%s: needs min or max", p)
		}
		if c.Min != nil && c.Max != nil && *c.Max < *c.Min {
			return fmt.Errorf("%s: max %g is below min %g", p, *c.Max, *c.Min)
		}
		return nil
	}
	oneOf := func(field, v string, list []string) error {
		if !slices.Contains(list, v) {
			return fmt.Errorf("%s: %s %q is not one of %s", p, field, v, strings.Join(list, ", "))
		}
		return nil
	}
	switch c.Kind {
	case KindEjected:
		allowed = []string{"host", "at"}
		if err = need("host", c.Host != ""); err == nil {
			err = when(true)
		}
	case KindNotEjected:
		allowed = []string{"host", "at", "from", "to"}
		if err = when(false); err == nil {
			err = need("at or from/to", hasAt || hasWindow)
		}
	case KindEjectedHosts:
		allowed = []string{"at", "min", "max"}
		if err = when(true); err == nil {
			err = band()
		}
	case KindEvent:
		allowed = []string{"event", "host", "detector", "at", "from", "to", "min", "max"}
		if err = need("event", c.Event != ""); err == nil {
			err = oneOf("event", c.Event, EventKinds)
		}
		if err == nil && c.Detector != "" {
			if _, ok := engine.ParseEjectionType(c.Detector); !ok {
				err = fmt.Errorf("%s: unknown detector %q", p, c.Detector)
			} else if c.Event == "uneject" {
				err = fmt.Errorf("%s: an uneject has no detector (Envoy logs every uneject as consecutive_5xx)", p)
			}
		}
		if err == nil {
			if err = when(false); err == nil {
				err = need("at or from/to", hasAt || hasWindow)
			}
		}
		if err == nil && c.Min != nil && c.Max != nil && *c.Max < *c.Min {
			err = fmt.Errorf("%s: max %g is below min %g", p, *c.Max, *c.Min)
		}
	case KindStat:
		allowed = []string{"name", "at", "from", "to", "min", "max"}
		if err = need("name", c.Name != ""); err == nil {
			err = oneOf("name", c.Name, StatNames())
		}
		if err == nil {
			if err = when(false); err == nil {
				err = need("at or from/to", hasAt || hasWindow)
			}
		}
		if err == nil {
			err = band()
		}
	case KindClients:
		allowed = []string{"name", "at", "from", "to", "min", "max"}
		if err = need("name", c.Name != ""); err == nil {
			err = oneOf("name", c.Name, ClientMetrics)
		}
		if err == nil {
			err = when(false)
		}
		if err == nil {
			err = band()
		}
	case KindSuccessRate:
		allowed = []string{"name", "is", "at", "from", "to", "min", "max"}
		switch {
		case c.Is != "" && (c.Name != "" || c.Min != nil || c.Max != nil):
			err = fmt.Errorf("%s: use is (a gate) or name with min/max, not both", p)
		case c.Is != "":
			err = oneOf("is", c.Is, SuccessRateGates)
		case c.Name == "":
			err = fmt.Errorf("%s: needs is (one of %s) or name (one of %s)", p, strings.Join(SuccessRateGates, ", "), strings.Join(SuccessRateFigures, ", "))
		default:
			if err = oneOf("name", c.Name, SuccessRateFigures); err == nil {
				err = band()
			}
		}
		if err == nil {
			if err = when(false); err == nil {
				err = need("at or from/to", hasAt || hasWindow)
			}
		}
	case KindHost:
		allowed = []string{"host", "name", "at", "min", "max"}
		if err = need("host", c.Host != ""); err == nil {
			err = need("name", c.Name != "")
		}
		if err == nil {
			err = oneOf("name", c.Name, HostMetrics)
		}
		if err == nil {
			err = when(true)
		}
		if err == nil {
			err = band()
		}
	case KindShare:
		allowed = []string{"host", "at", "from", "to", "min", "max"}
		if err = need("host", c.Host != ""); err == nil {
			err = when(false)
		}
		if err == nil {
			err = band()
		}
	case KindPanic, KindNoPanic:
		allowed = []string{"at", "from", "to"}
		if err = when(false); err == nil {
			err = need("at or from/to", hasAt || hasWindow)
		}
	case KindSetting:
		allowed = []string{"name", "is", "min", "max"}
		err = c.validateSetting(p, band)
	}
	if err != nil {
		return err
	}
	set := map[string]bool{
		"host": c.Host != "", "at": c.At != 0, "from": c.From != 0, "to": c.To != 0,
		"event": c.Event != "", "detector": c.Detector != "", "name": c.Name != "",
		"is": c.Is != "", "min": c.Min != nil, "max": c.Max != nil,
	}
	for _, f := range []string{"host", "at", "from", "to", "event", "detector", "name", "is", "min", "max"} {
		if set[f] && !slices.Contains(allowed, f) {
			return fmt.Errorf("%s: does not take %s", p, f)
		}
	}
	return nil
}

// Evaluate decides a check against a run as far as the learner has stepped
// (cursorMs: the time of the last frame shown; WholeRun for all). The run
// is the learner's own: its Scenario and Config are the settings in effect
// (what setting checks read), its Frames what happened. Frames after the
// cursor are never read, so the page cannot give away what has not
// happened yet. A check that reads a frame beyond the cursor is "not yet":
// Pass false, Decided false, and NeedsCursorMs says where to step.
func Evaluate(c Check, run *scenario.Result, cursorMs int64) CheckResult {
	e := evaluator{run: run, frames: run.Frames}
	needs := e.needs(&c)
	res := CheckResult{NeedsCursorMs: needs}
	if cursorMs < needs {
		// A part already shown may settle it: one failed part of an all
		// (a setting not made, an ejection that did not happen) fails it,
		// one passed part of an any passes it.
		if ok, pass, detail := e.early(&c, cursorMs); ok {
			res.Pass, res.Detail, res.Decided = pass, detail, true
			return res
		}
		res.Detail = "not yet: step to " + fmtSeconds(needs)
		return res
	}
	res.Pass, res.Detail = e.eval(&c)
	res.Decided = true
	return res
}

// early decides a check from the parts the cursor has reached, if they
// settle it; it reads no frame past the cursor.
func (e *evaluator) early(c *Check, cursorMs int64) (decided, pass bool, detail string) {
	if e.needs(c) <= cursorMs {
		pass, detail = e.eval(c)
		return true, pass, detail
	}
	for i := range c.All {
		if ok, p, d := e.early(&c.All[i], cursorMs); ok && !p {
			return true, false, d
		}
	}
	for i := range c.Any {
		if ok, p, d := e.early(&c.Any[i], cursorMs); ok && p {
			return true, true, d
		}
	}
	return false, false, ""
}

type evaluator struct {
	run    *scenario.Result
	frames []scenario.Frame
}

// lastMs is the time of the run's last frame (0 with no frames).
func (e *evaluator) lastMs() int64 {
	if len(e.frames) == 0 {
		return 0
	}
	return e.frames[len(e.frames)-1].TMs
}

// tickAtOrAfter is the first frame time ≥ t; past the run's end, the last
// frame (the check will then report that the run is too short).
func (e *evaluator) tickAtOrAfter(t Ms) int64 {
	if t == End {
		return e.lastMs()
	}
	for _, f := range e.frames {
		if f.TMs >= int64(t) {
			return f.TMs
		}
	}
	return e.lastMs()
}

// needs is the time of the last frame the check reads.
func (e *evaluator) needs(c *Check) int64 {
	var n int64
	for i := range c.All {
		n = max(n, e.needs(&c.All[i]))
	}
	for i := range c.Any {
		n = max(n, e.needs(&c.Any[i]))
	}
	if c.Kind == "" || c.Kind == KindSetting {
		return n
	}
	if c.At != 0 {
		return e.tickAtOrAfter(c.At)
	}
	to := c.To
	if to == 0 {
		to = End
	}
	return e.tickAtOrAfter(to)
}

func (e *evaluator) eval(c *Check) (bool, string) {
	switch {
	case c.All != nil:
		pass := true
		var parts []string
		for i := range c.All {
			ok, d := e.eval(&c.All[i])
			pass = pass && ok
			parts = append(parts, d)
		}
		return pass, strings.Join(parts, "; ")
	case c.Any != nil:
		pass := false
		var parts []string
		for i := range c.Any {
			ok, d := e.eval(&c.Any[i])
			pass = pass || ok
			parts = append(parts, d)
		}
		return pass, "(" + strings.Join(parts, " | ") + ")"
	}
	switch c.Kind {
	case KindEjected:
		_, h, err := e.hostAt(c.Host, c.At)
		if err != "" {
			return false, err
		}
		return h.Ejected, fmt.Sprintf("%s ejected at %s: %s", c.Host, c.At, yesNo(h.Ejected))
	case KindNotEjected:
		return e.notEjected(c)
	case KindEjectedHosts:
		f := e.frameAt(c.At)
		if f == nil {
			return false, e.noFrame(c.At)
		}
		var names []string
		for _, h := range f.Hosts {
			if h.Ejected {
				names = append(names, h.Name)
			}
		}
		n := float64(len(names))
		list := "none"
		if len(names) > 0 {
			list = strings.Join(names, " ")
		}
		return inBand(n, c.Min, c.Max), fmt.Sprintf("hosts ejected at %s: %d (%s)%s", c.At, len(names), list, want(c.Min, c.Max, ""))
	case KindEvent:
		return e.event(c)
	case KindStat:
		return e.stat(c)
	case KindClients:
		return e.clients(c)
	case KindSuccessRate:
		return e.successRate(c)
	case KindHost:
		return e.host(c)
	case KindShare:
		return e.share(c)
	case KindPanic, KindNoPanic:
		return e.panic(c)
	case KindSetting:
		return e.setting(c)
	}
	return false, fmt.Sprintf("unknown check kind %q", c.Kind)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// frameAt is the frame that closes at t, or nil.
func (e *evaluator) frameAt(t Ms) *scenario.Frame {
	for i := range e.frames {
		if e.frames[i].TMs == int64(t) {
			return &e.frames[i]
		}
	}
	return nil
}

// noFrame explains a time that is not a tick of this run.
func (e *evaluator) noFrame(t Ms) string {
	if len(e.frames) == 0 {
		return "the run has no frames"
	}
	if int64(t) > e.lastMs() {
		return fmt.Sprintf("the run ends at %s, before %s", fmtSeconds(e.lastMs()), t)
	}
	step := e.frames[0].TMs
	return fmt.Sprintf("no tick at %s (ticks every %s)", t, fmtSeconds(step))
}

func (e *evaluator) hostAt(name string, t Ms) (*scenario.Frame, *scenario.HostFrame, string) {
	f := e.frameAt(t)
	if f == nil {
		return nil, nil, e.noFrame(t)
	}
	for i := range f.Hosts {
		if f.Hosts[i].Name == name {
			return f, &f.Hosts[i], ""
		}
	}
	return nil, nil, fmt.Sprintf("no host %s in this run (%d hosts)", name, len(f.Hosts))
}

// window resolves [From, To] with To "end" (or unset) as the last frame,
// and labels it the way the Detail reads: "30–300 s", "30 s–end".
func (e *evaluator) window(c *Check) (from, to int64, label string) {
	from, to = int64(c.From), int64(c.To)
	f := strconv.FormatFloat(float64(from)/1000, 'f', -1, 64)
	if c.To == 0 || c.To == End {
		return from, e.lastMs(), f + " s–end"
	}
	return from, to, f + "–" + fmtSeconds(to)
}

// ticks are the frames whose tick falls in [from, to].
// intervalsFor is the intervals a totals check reads: the one ending at
// c.At, or every whole interval of its window.
func (e *evaluator) intervalsFor(c *Check) (frames []*scenario.Frame, label, fail string) {
	if c.At != 0 {
		f := e.frameAt(c.At)
		if f == nil {
			return nil, "", e.noFrame(c.At)
		}
		return []*scenario.Frame{f}, "interval to " + c.At.String(), ""
	}
	from, to, label := e.window(c)
	frames = e.intervals(from, to)
	if len(frames) == 0 {
		return nil, "", "no whole interval in " + label
	}
	return frames, label, ""
}

// framesFor is the frames a check reads: the one at c.At, or every tick of
// its window; when describes them with the given prefixes, and fail is set
// when there is nothing to read yet.
func (e *evaluator) framesFor(c *Check, atPrefix, windowPrefix string) (frames []*scenario.Frame, when, fail string) {
	if c.At != 0 {
		f := e.frameAt(c.At)
		if f == nil {
			return nil, "", e.noFrame(c.At)
		}
		return []*scenario.Frame{f}, atPrefix + c.At.String(), ""
	}
	from, to, label := e.window(c)
	frames = e.ticks(from, to)
	if len(frames) == 0 {
		return nil, "", "no tick in " + label
	}
	return frames, windowPrefix + label, ""
}

func (e *evaluator) ticks(from, to int64) []*scenario.Frame {
	var out []*scenario.Frame
	for i := range e.frames {
		if t := e.frames[i].TMs; t >= from && t <= to {
			out = append(out, &e.frames[i])
		}
	}
	return out
}

// intervals are the frames whose whole interval lies in [from, to].
func (e *evaluator) intervals(from, to int64) []*scenario.Frame {
	var out []*scenario.Frame
	start := int64(0)
	for i := range e.frames {
		f := &e.frames[i]
		if start >= from && f.TMs <= to {
			out = append(out, f)
		}
		start = f.TMs
	}
	return out
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
	var det engine.EjectionType
	if c.Detector != "" {
		det, _ = engine.ParseEjectionType(c.Detector)
	}
	n := 0
	var times []string
	for i := range e.frames {
		for _, ev := range e.frames[i].Events {
			if ev.AtMs < from || ev.AtMs > to || ev.Kind.String() != c.Event {
				continue
			}
			if c.Host != "" && ev.Host != c.Host {
				continue
			}
			if c.Detector != "" && ev.Detector != det {
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
	return inBand(float64(n), lo, hi), fmt.Sprintf("%s %s: %d%s%s", what, when, n, list, want(lo, hi, ""))
}

func (e *evaluator) stat(c *Check) (bool, string) {
	if c.At != 0 {
		f := e.frameAt(c.At)
		if f == nil {
			return false, e.noFrame(c.At)
		}
		v, _ := statValue(f, c.Name)
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
	return inBand(float64(d), c.Min, c.Max), fmt.Sprintf("%s increase %s: %d%s", c.Name, label, d, want(c.Min, c.Max, ""))
}

func (e *evaluator) clients(c *Check) (bool, string) {
	frames, label, none := e.intervalsFor(c)
	if none != "" {
		return false, none
	}
	var req, fail, retries, overflow, noHealthy uint64
	var p99, p50 float64
	for _, f := range frames {
		req += f.Clients.Requests
		fail += f.Clients.Failures
		retries += f.Clients.RetriesSent
		overflow += f.Clients.BudgetRefusals
		noHealthy += f.Clients.NoHealthy
		p99 = max(p99, f.Clients.LatencyP99Ms)
		p50 = max(p50, f.Clients.LatencyP50Ms)
	}
	var v float64
	unit := ""
	switch c.Name {
	case "failure_pct":
		v, unit = pct(fail, req), "%"
	case "retry_pct":
		v, unit = pct(retries, req), "%"
	case "requests":
		v = float64(req)
	case "failures":
		v = float64(fail)
	case "retries":
		v = float64(retries)
	case "retry_overflow":
		v = float64(overflow)
	case "no_healthy":
		v = float64(noHealthy)
	case "p99_ms":
		v, unit = p99, " ms"
	case "p50_ms":
		v, unit = p50, " ms"
	}
	return inBand(v, c.Min, c.Max), fmt.Sprintf("clients' %s %s: %s%s%s", strings.ReplaceAll(c.Name, "_", " "), label, fmtNum(v), unit, want(c.Min, c.Max, unit))
}

func (e *evaluator) successRate(c *Check) (bool, string) {
	frames, when, fail := e.framesFor(c, "at ", "at every tick ")
	if fail != "" {
		return false, fail
	}
	for _, f := range frames {
		sr := f.SuccessRate
		if c.Is != "" {
			if sr.Gate != c.Is {
				return false, fmt.Sprintf("success rate %s: %s at %s (wanted %s)", when, gateWords(sr), fmtSeconds(f.TMs), c.Is)
			}
			continue
		}
		var v float64
		switch c.Name {
		case "hosts_with_volume":
			v = float64(sr.HostsWithVolume)
		default:
			if sr.Gate != "ran" {
				return false, fmt.Sprintf("success rate %s %s: did not run at %s (%s)", c.Name, when, fmtSeconds(f.TMs), gateWords(sr))
			}
			switch c.Name {
			case "mean":
				v = sr.Mean
			case "threshold":
				v = sr.Threshold
			case "stdev":
				v = sr.StdDev
			}
		}
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
	_, h, err := e.hostAt(c.Host, c.At)
	if err != "" {
		return false, err
	}
	var v float64
	switch c.Name {
	case "success_rate":
		v = h.SuccessRate
	case "requests":
		v = float64(h.Requests)
	case "multiplier":
		v = float64(h.Multiplier)
	case "num_ejections":
		v = float64(h.NumEjections)
	case "returns_in_s":
		v = float64(h.ReturnsInMs) / 1000
	case "consecutive_5xx":
		v = float64(h.Consecutive5xx)
	case "attempts":
		v = float64(h.Attempts)
	case "local_success_rate":
		v = h.LocalRate
		if h.LocalRequests == 0 {
			v = -1
		}
	case "local_requests":
		v = float64(h.LocalRequests)
	}
	return inBand(v, c.Min, c.Max), fmt.Sprintf("%s %s at %s: %s%s", c.Host, strings.ReplaceAll(c.Name, "_", " "), c.At, fmtNum(v), want(c.Min, c.Max, ""))
}

func (e *evaluator) share(c *Check) (bool, string) {
	frames, label, none := e.intervalsFor(c)
	if none != "" {
		return false, none
	}
	var mine, all uint64
	found := false
	for _, f := range frames {
		for _, h := range f.Hosts {
			all += h.Attempts
			if h.Name == c.Host {
				mine += h.Attempts
				found = true
			}
		}
	}
	if !found {
		return false, fmt.Sprintf("no host %s in this run", c.Host)
	}
	v := pct(mine, all)
	return inBand(v, c.Min, c.Max), fmt.Sprintf("%s's share of attempts %s: %s%%%s", c.Host, label, fmtNum(v), want(c.Min, c.Max, "%"))
}

func (e *evaluator) panic(c *Check) (bool, string) {
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
	wantPanic := c.Kind == KindPanic
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

func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func inBand(v float64, lo, hi *float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if lo != nil && v < *lo {
		return false
	}
	if hi != nil && v > *hi {
		return false
	}
	return true
}

// want writes the band: " (wanted 0.6–1%)", " (wanted ≥ 1)", " (wanted 0)".
func want(lo, hi *float64, unit string) string {
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		return " (wanted " + fmtNum(*lo) + unit + ")"
	case lo != nil && hi != nil:
		return " (wanted " + fmtNum(*lo) + "–" + fmtNum(*hi) + unit + ")"
	case lo != nil:
		return " (wanted ≥ " + fmtNum(*lo) + unit + ")"
	case hi != nil:
		return " (wanted ≤ " + fmtNum(*hi) + unit + ")"
	}
	return ""
}

// fmtNum writes a number with at most two decimals and no trailing zeros.
func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
