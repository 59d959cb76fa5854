package challenge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"outlierlab/engine/course"
	"outlierlab/engine/scenario"
)

// The goal kinds: a small closed set, each measured on one run's frames.
const (
	// KindEjectedWithin: Host is ejected within Within of After (the
	// fault's start), i.e. an eject event for it in [After, After+Within].
	// Its value is the seconds from After to the first such ejection.
	KindEjectedWithin = "ejected_within"
	// KindFailuresAtMost: the clients' failed requests are at most Max %
	// of their requests over the intervals inside [From, To].
	KindFailuresAtMost = "failures_at_most"
	// KindMaxOut: at every tick in [From, To] at most Max hosts are
	// ejected. Its value is the most ejected at once.
	KindMaxOut = "max_out"
	// KindNotEjected: no host of Hosts (every host when empty, less
	// Except) is ejected at any tick in [From, To]. Its value is how many
	// ejections there were.
	KindNotEjected = "not_ejected"
	// KindNoPanic: the load balancer never panics (Envoy's
	// healthy_panic_threshold) in the intervals closing in [From, To].
	KindNoPanic = "no_panic"
)

// Kinds lists the goal kinds, for messages.
var Kinds = []string{KindEjectedWithin, KindFailuresAtMost, KindMaxOut, KindNotEjected, KindNoPanic}

// Goal is one thing a submission must achieve on a scenario's runs.
type Goal struct {
	// ID is unique within its scenario (the kind, unless the author
	// names it): "scenario/goal" names it in the challenge.
	ID   string
	Kind string
	// Host (ejected_within), Hosts and Except (not_ejected).
	Host   string
	Hosts  []string
	Except []string
	// After and Within (ejected_within).
	After, Within course.Ms
	// From and To bound the window (To course.End: the last frame).
	From, To course.Ms
	// Max is failures_at_most's percent, max_out's hosts.
	Max float64
}

// Outcome is a goal measured on one run.
type Outcome struct {
	Pass bool
	// Value is the goal's number (seconds to eject, failure %, hosts out
	// at once, ejections, panicking intervals); +Inf for a host never
	// ejected in time.
	Value float64
	// AtMs is the moment that decided a failure (the tick of the first
	// ejection too many, the deadline missed, the worst interval); 0 on
	// a pass.
	AtMs int64
	// Detail says what the run did, in the words of the goal.
	Detail string
}

// Bound is the value a run's Value may reach and still pass (seconds for
// ejected_within, percent for failures_at_most, hosts for max_out, 0 for
// the ejections and panics the others allow).
func (g *Goal) Bound() float64 {
	switch g.Kind {
	case KindEjectedWithin:
		return float64(g.Within) / 1000
	case KindFailuresAtMost, KindMaxOut:
		return g.Max
	}
	return 0
}

// Words is the goal as the learner reads it.
func (g *Goal) Words() string {
	win := g.window()
	switch g.Kind {
	case KindEjectedWithin:
		return fmt.Sprintf("%s ejected within %s of %s", g.Host, g.Within, g.After)
	case KindFailuresAtMost:
		return fmt.Sprintf("clients' failures ≤ %s%% %s", fmtNum(g.Max), win)
	case KindMaxOut:
		return fmt.Sprintf("never more than %s ejected at once %s", hostsWord(int(g.Max)), win)
	case KindNotEjected:
		who := "no host"
		switch {
		case len(g.Hosts) > 0:
			who = "none of " + strings.Join(g.Hosts, ", ")
		case len(g.Except) > 0:
			who = "no host but " + strings.Join(g.Except, ", ")
		}
		return fmt.Sprintf("%s ejected %s", who, win)
	case KindNoPanic:
		return "no panic " + win
	}
	return g.Kind
}

func (g *Goal) window() string {
	if g.From == 0 && g.To == course.End {
		return "over the whole run"
	}
	if g.To == course.End {
		return "from " + g.From.String() + " to the end"
	}
	return "from " + g.From.String() + " to " + g.To.String()
}

func hostsWord(n int) string {
	if n == 1 {
		return "1 host"
	}
	return fmt.Sprintf("%d hosts", n)
}

// inWindow is whether a tick at t lies in [From, To].
func (g *Goal) inWindow(t int64) bool {
	return t >= int64(g.From) && (g.To == course.End || t <= int64(g.To))
}

// Measure decides the goal on a run.
func (g *Goal) Measure(run *scenario.Result) Outcome {
	switch g.Kind {
	case KindEjectedWithin:
		return g.ejectedWithin(run)
	case KindFailuresAtMost:
		return g.failures(run)
	case KindMaxOut:
		return g.maxOut(run)
	case KindNotEjected:
		return g.notEjected(run)
	case KindNoPanic:
		return g.noPanic(run)
	}
	return Outcome{Detail: "unknown goal kind " + g.Kind}
}

func (g *Goal) ejectedWithin(run *scenario.Result) Outcome {
	deadline := int64(g.After + g.Within)
	for i := range run.Frames {
		for _, ev := range run.Frames[i].Events {
			if ev.Host != g.Host || ev.Kind.String() != "eject" || ev.AtMs < int64(g.After) {
				continue
			}
			s := float64(ev.AtMs-int64(g.After)) / 1000
			if ev.AtMs > deadline {
				return Outcome{Value: s, AtMs: deadlineTick(run, deadline),
					Detail: fmt.Sprintf("%s first ejected at %s, %s after %s: later than %s", g.Host, fmtMs(ev.AtMs), fmtSec(s), g.After, g.Within)}
			}
			return Outcome{Pass: true, Value: s, Detail: fmt.Sprintf("%s ejected at %s, %s after %s", g.Host, fmtMs(ev.AtMs), fmtSec(s), g.After)}
		}
	}
	return Outcome{Value: math.Inf(1), AtMs: deadlineTick(run, deadline),
		Detail: fmt.Sprintf("%s never ejected after %s", g.Host, g.After)}
}

// deadlineTick is the first tick at or after t (the last frame if none):
// where the lab opens to show a deadline missed.
func deadlineTick(run *scenario.Result, t int64) int64 {
	for _, f := range run.Frames {
		if f.TMs >= t {
			return f.TMs
		}
	}
	if n := len(run.Frames); n > 0 {
		return run.Frames[n-1].TMs
	}
	return 0
}

func (g *Goal) failures(run *scenario.Result) Outcome {
	iv := run.Summary.IntervalMs
	var req, fail uint64
	worst, worstAt := -1.0, int64(0)
	for _, f := range run.Frames {
		// The intervals inside the window, as course's clients checks count.
		if f.TMs-iv < int64(g.From) || !g.inWindow(f.TMs) {
			continue
		}
		req += f.Clients.Requests
		fail += f.Clients.Failures
		if p := f.Clients.FailurePct(); p > worst {
			worst, worstAt = p, f.TMs
		}
	}
	if req == 0 {
		return Outcome{Detail: "no requests " + g.window()}
	}
	pct := 100 * float64(fail) / float64(req)
	o := Outcome{Pass: pct <= g.Max, Value: pct,
		Detail: fmt.Sprintf("clients' failures %s: %s%% (%d of %d)", g.window(), fmtNum(pct), fail, req)}
	if !o.Pass {
		o.AtMs = worstAt
		o.Detail += fmt.Sprintf("; the worst interval ends at %s (%s%%)", fmtMs(worstAt), fmtNum(worst))
	}
	return o
}

func (g *Goal) maxOut(run *scenario.Result) Outcome {
	most, firstOver := 0, int64(-1)
	var names []string
	for _, f := range run.Frames {
		if !g.inWindow(f.TMs) {
			continue
		}
		var out []string
		for _, h := range f.Hosts {
			if h.Ejected {
				out = append(out, h.Name)
			}
		}
		if len(out) > most {
			most = len(out)
		}
		if float64(len(out)) > g.Max && firstOver < 0 {
			firstOver, names = f.TMs, out
		}
	}
	if firstOver >= 0 {
		return Outcome{Value: float64(most), AtMs: firstOver,
			Detail: fmt.Sprintf("%d ejected at %s (%s); at most %d at once %s", len(names), fmtMs(firstOver), strings.Join(names, " "), most, g.window())}
	}
	return Outcome{Pass: true, Value: float64(most), Detail: fmt.Sprintf("at most %s ejected at once %s", hostsWord(most), g.window())}
}

func (g *Goal) notEjected(run *scenario.Result) Outcome {
	counts := func(host string) bool {
		if len(g.Hosts) > 0 {
			return slices.Contains(g.Hosts, host)
		}
		return !slices.Contains(g.Except, host)
	}
	n, first, firstHost := 0, int64(-1), ""
	for _, f := range run.Frames {
		if !g.inWindow(f.TMs) {
			continue
		}
		for _, ev := range f.Events {
			if ev.Kind.String() == "eject" && counts(ev.Host) {
				n++
				if first < 0 {
					first, firstHost = f.TMs, ev.Host
				}
			}
		}
		// A host ejected before the window and still out counts too.
		for _, h := range f.Hosts {
			if h.Ejected && counts(h.Name) && first < 0 {
				first, firstHost = f.TMs, h.Name
			}
		}
	}
	if first >= 0 {
		return Outcome{Value: float64(n), AtMs: first,
			Detail: fmt.Sprintf("%s ejected at %s; %d ejections %s", firstHost, fmtMs(first), n, g.window())}
	}
	return Outcome{Pass: true, Detail: "nothing ejected " + g.window()}
}

func (g *Goal) noPanic(run *scenario.Result) Outcome {
	n, first := 0, int64(-1)
	for _, f := range run.Frames {
		if g.inWindow(f.TMs) && f.Panic {
			n++
			if first < 0 {
				first = f.TMs
			}
		}
	}
	if first >= 0 {
		return Outcome{Value: float64(n), AtMs: first,
			Detail: fmt.Sprintf("the load balancer panicked in the interval to %s (%d intervals %s)", fmtMs(first), n, g.window())}
	}
	return Outcome{Pass: true, Detail: "no panic " + g.window()}
}

func fmtMs(ms int64) string { return course.Ms(ms).String() }

func fmtSec(s float64) string { return fmtNum(s) + " s" }

// fmtNum writes a number with at most two decimals, no trailing zeros.
func fmtNum(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func joinComma(ss []string) string { return strings.Join(ss, ", ") }
