package course

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

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
	// ThinMargin is the author's reason, with the numbers, why a bound
	// may sit closer to the closest seed than the margins' floor
	// (margin.go): the margin is then printed, not failed.
	ThinMargin string `json:"thin_margin,omitempty"`
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
var Kinds = kindNames()

// SuccessRateGates are the values of a success_rate check's Is.
var SuccessRateGates = []string{"ran", "too_few_hosts", "too_few_hosts_with_volume"}

// EventKinds are the values of an event check's Event.
var EventKinds = []string{"eject", "detect", "overflow", "uneject"}

// CheckResult is a check evaluated at a cursor.
type CheckResult struct {
	// Pass is true once the check is decidable and holds.
	Pass bool
	// Detail is what was compared, with the numbers: "h5 ejected at 40 s:
	// yes; clients' failure pct 30 s–end: 0.82% (wanted 0.6–1%)".
	Detail string
	// NeedsCursorMs is how far the learner must step (the time of the last
	// frame the check reads); before that the check is "not yet".
	NeedsCursorMs int64
	// Decided is false while the cursor is before NeedsCursorMs, and
	// while a check that holds is Unwatched.
	Decided bool
	// Unwatched is set on a check that holds but was already on screen
	// when the settings changed: the learner has not yet played or stepped
	// into it (EvaluateWatched).
	Unwatched bool
}

// Validate reports the first problem with a check's shape: an unknown
// kind, a missing or stray parameter, an unknown name. It knows nothing of
// any run, so a host that does not exist is found by Evaluate instead.
func (c *Check) Validate() error { return c.validate("check") }

// ValidateAt is Validate with errors naming the check by path
// ("scenes[2].question.choices[0].check"), for files other than lessons
// that hold checks (workshop plans, engine/plan).
func (c *Check) ValidateAt(path string) error { return c.validate(path) }

func (c *Check) validate(path string) error {
	if c.All != nil || c.Any != nil {
		return c.validateGroup(path)
	}
	if c.Kind == "" {
		return fmt.Errorf("%s: missing kind (one of %s), or all/any", path, strings.Join(Kinds, ", "))
	}
	k, ok := kindOf(c.Kind)
	if !ok {
		return fmt.Errorf("%s: unknown kind %q (want one of %s)", path, c.Kind, strings.Join(Kinds, ", "))
	}
	if err := k.validate(c); err != nil {
		return fmt.Errorf("%s (%s): %w", path, c.Kind, err)
	}
	return nil
}

// validateGroup checks an all or an any: a non-empty list of valid checks,
// with no parameters of its own.
func (c *Check) validateGroup(path string) error {
	if (c.All != nil && c.Any != nil) || c.Kind != "" {
		return fmt.Errorf("%s: use one of all, any or kind", path)
	}
	list, name := c.All, "all"
	if c.Any != nil {
		list, name = c.Any, "any"
	}
	if len(list) == 0 {
		return fmt.Errorf("%s.%s: is empty", path, name)
	}
	for _, f := range checkFields {
		if f.set(c) {
			return fmt.Errorf("%s: %s cannot have parameters of its own; put them in its checks", path, name)
		}
	}
	for i := range list {
		if err := list[i].validate(fmt.Sprintf("%s.%s[%d]", path, name, i)); err != nil {
			return err
		}
	}
	return nil
}

// checkFields are a check's parameters, by the names lesson files use,
// in the order errors mention them.
var checkFields = []struct {
	name string
	set  func(c *Check) bool
	// str is the value of a string parameter (nil for times and numbers).
	str func(c *Check) string
}{
	{"host", func(c *Check) bool { return c.Host != "" }, func(c *Check) string { return c.Host }},
	{"at", func(c *Check) bool { return c.At != 0 }, nil},
	{"from", func(c *Check) bool { return c.From != 0 }, nil},
	{"to", func(c *Check) bool { return c.To != 0 }, nil},
	{"event", func(c *Check) bool { return c.Event != "" }, func(c *Check) string { return c.Event }},
	{"detector", func(c *Check) bool { return c.Detector != "" }, func(c *Check) string { return c.Detector }},
	{"name", func(c *Check) bool { return c.Name != "" }, func(c *Check) string { return c.Name }},
	{"is", func(c *Check) bool { return c.Is != "" }, func(c *Check) string { return c.Is }},
	{"min", func(c *Check) bool { return c.Min != nil }, nil},
	{"max", func(c *Check) bool { return c.Max != nil }, nil},
	{"thin_margin", func(c *Check) bool { return c.ThinMargin != "" }, func(c *Check) string { return c.ThinMargin }},
}

// fieldValue is a string parameter's value ("" when unset).
func fieldValue(c *Check, name string) string {
	for _, f := range checkFields {
		if f.name == name && f.str != nil {
			return f.str(c)
		}
	}
	return ""
}

// validateTime checks at and from/to against the kind's time rule.
func validateTime(c *Check, rule timeRule) error {
	hasAt, hasWindow := c.At != 0, c.From != 0 || c.To != 0
	switch {
	case rule == timeNone:
		return nil // the stray-parameter check refuses any time
	case hasAt && hasWindow:
		return errors.New("use at or from/to, not both")
	case rule == timeAt && hasWindow:
		return errors.New("takes at, not from/to")
	case rule == timeAt && !hasAt:
		return errors.New("needs at")
	case c.From != 0 && c.To != 0 && c.To < c.From:
		return fmt.Errorf("to %s is before from %s", c.To, c.From)
	case c.At == End:
		return errors.New("at cannot be end; use from/to")
	case rule == timeAtOrWindow && !hasAt && !hasWindow:
		return errors.New("needs at or from/to")
	}
	return nil
}

// validateBand checks min and max: present if required, and in order.
func validateBand(c *Check, required bool) error {
	if required && c.Min == nil && c.Max == nil {
		return errors.New("needs min or max")
	}
	if c.Min != nil && c.Max != nil && *c.Max < *c.Min {
		return fmt.Errorf("max %g is below min %g", *c.Max, *c.Min)
	}
	if c.ThinMargin != "" && c.Min == nil && c.Max == nil {
		return errors.New("thin_margin needs min or max: it is about a bound")
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
//
// Evaluate counts every frame up to the cursor as watched, however the
// cursor got there; a lesson page asks EvaluateWatched, which knows.
func Evaluate(c Check, run *scenario.Result, cursorMs int64) CheckResult {
	return EvaluateWatched(c, run, Watch{FromMs: -1, ToMs: cursorMs})
}

// Watch is what a learner has watched of a run: the frames after FromMs up
// to ToMs. FromMs is the earliest the cursor has stood since the run's
// settings last changed (where it stood at the change, or earlier if the
// learner stepped back since); ToMs is where it stands now. Changing a
// setting with the cursor at the end of the run shows the new run's end at
// once; nothing was watched (issue 38: "play to 70 s" ticked on the
// setting change itself, with the cursor already past 70 s).
type Watch struct {
	FromMs, ToMs int64
}

// EvaluateWatched is Evaluate for a learner who has watched w: a check
// that reads frames holds only once the last frame it reads came into view
// after the settings changed (w.FromMs < NeedsCursorMs ≤ w.ToMs): the
// learner played or stepped into it. A check that held when the settings
// changed is "not yet" (Unwatched), and its Detail says to step back and
// play through. A check that reads no frame (settings alone) is decided at
// once; a failing check fails as soon as it is decided, watched or not:
// only a tick waits for the learner.
func EvaluateWatched(c Check, run *scenario.Result, w Watch) CheckResult {
	e := evaluator{run: run, frames: run.Frames}
	needs := e.needs(&c)
	res := CheckResult{NeedsCursorMs: needs}
	if w.ToMs < needs {
		// A part already shown may settle it: one failed part of an all
		// (a setting not made, an ejection that did not happen) fails it,
		// one passed part of an any, watched, passes it.
		if ok, pass, detail := e.early(&c, w); ok {
			res.Pass, res.Detail, res.Decided = pass, detail, true
			return res
		}
		res.Detail = "not yet: step to " + fmtSeconds(needs)
		return res
	}
	res.Pass, res.Detail = e.eval(&c)
	res.Decided = true
	if res.Pass && !watched(needs, w) {
		res.Pass, res.Decided, res.Unwatched = false, false, true
		res.Detail = "not yet: it was already on screen when the settings changed; step back before " + fmtSeconds(needs) + " and play through it"
	}
	return res
}

// watched reports whether a check whose last frame is at needs came into
// view within w (a check that reads no frame always has).
func watched(needs int64, w Watch) bool { return needs == 0 || w.FromMs < needs }

// early decides a check from the parts the cursor has reached, if they
// settle it; it reads no frame past the cursor, and a part passes early
// only if the learner watched it (EvaluateWatched).
func (e *evaluator) early(c *Check, w Watch) (decided, pass bool, detail string) {
	if n := e.needs(c); n <= w.ToMs {
		pass, detail = e.eval(c)
		if pass && !watched(n, w) {
			return false, false, ""
		}
		return true, pass, detail
	}
	for i := range c.All {
		if ok, p, d := e.early(&c.All[i], w); ok && !p {
			return true, false, d
		}
	}
	for i := range c.Any {
		if ok, p, d := e.early(&c.Any[i], w); ok && p {
			return true, true, d
		}
	}
	return false, false, ""
}

type evaluator struct {
	run    *scenario.Result
	frames []scenario.Frame
	// note, if set, is told every number a check compares with its band
	// (Bands).
	note func(c *Check, v float64)
}

// seen reports v, the number c compares with its band, to e.note.
func (e *evaluator) seen(c *Check, v float64) {
	if e.note != nil {
		e.note(c, v)
	}
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
	if k, ok := kindOf(c.Kind); !ok || k.time == timeNone {
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
	if k, ok := kindOf(c.Kind); ok {
		return k.eval(e, c)
	}
	return false, fmt.Sprintf("unknown check kind %q", c.Kind)
}

// lastMs is the time of the last frame (0 with no frames).
func lastMs(frames []scenario.Frame) int64 {
	if len(frames) == 0 {
		return 0
	}
	return frames[len(frames)-1].TMs
}

// tickAtOrAfter is the first frame time ≥ t; past the run's end, the last
// frame (the check will then report that the run is too short).
func (e *evaluator) tickAtOrAfter(t Ms) int64 {
	if t != End {
		for _, f := range e.frames {
			if f.TMs >= int64(t) {
				return f.TMs
			}
		}
	}
	return lastMs(e.frames)
}

// frameIndex is the index of the frame that closes at t, or -1.
func frameIndex(frames []scenario.Frame, t Ms) int {
	for i := range frames {
		if frames[i].TMs == int64(t) {
			return i
		}
	}
	return -1
}

// frameAt is the frame that closes at t, or nil.
func (e *evaluator) frameAt(t Ms) *scenario.Frame {
	if i := frameIndex(e.frames, t); i >= 0 {
		return &e.frames[i]
	}
	return nil
}

// noFrame explains a time that is not a tick of this run.
func (e *evaluator) noFrame(t Ms) string {
	if len(e.frames) == 0 {
		return "the run has no frames"
	}
	if int64(t) > lastMs(e.frames) {
		return fmt.Sprintf("the run ends at %s, before %s", fmtSeconds(lastMs(e.frames)), t)
	}
	step := e.frames[0].TMs
	return fmt.Sprintf("no tick at %s (ticks every %s)", t, fmtSeconds(step))
}

// hostIn is the named host's part of a frame, or nil.
func hostIn(f *scenario.Frame, name string) *scenario.HostFrame {
	for i := range f.Hosts {
		if f.Hosts[i].Name == name {
			return &f.Hosts[i]
		}
	}
	return nil
}

func (e *evaluator) hostAt(name string, t Ms) (*scenario.Frame, *scenario.HostFrame, string) {
	f := e.frameAt(t)
	if f == nil {
		return nil, nil, e.noFrame(t)
	}
	if h := hostIn(f, name); h != nil {
		return f, h, ""
	}
	return nil, nil, fmt.Sprintf("no host %s in this run (%d hosts)", name, len(f.Hosts))
}

// window resolves [From, To] with To "end" (or unset) as the last frame,
// and labels it the way the Detail reads: "30–300 s", "30 s–end".
func (e *evaluator) window(c *Check) (from, to int64, label string) {
	from, to = int64(c.From), int64(c.To)
	f := strconv.FormatFloat(float64(from)/1000, 'f', -1, 64)
	if c.To == 0 || c.To == End {
		return from, lastMs(e.frames), f + " s–end"
	}
	return from, to, f + "–" + fmtSeconds(to)
}

// intervalsFor is the intervals a totals check reads: the one ending at
// c.At, or every whole interval of its window (scenario.Window).
func (e *evaluator) intervalsFor(c *Check) (frames []scenario.Frame, label, fail string) {
	if c.At != 0 {
		i := frameIndex(e.frames, c.At)
		if i < 0 {
			return nil, "", e.noFrame(c.At)
		}
		return e.frames[i : i+1], "interval to " + c.At.String(), ""
	}
	from, to, label := e.window(c)
	frames = scenario.Window(e.frames, from, to)
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
	for i := range e.frames {
		if t := e.frames[i].TMs; t >= from && t <= to {
			frames = append(frames, &e.frames[i])
		}
	}
	if len(frames) == 0 {
		return nil, "", "no tick in " + label
	}
	return frames, windowPrefix + label, ""
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
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
