package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine/sim"
)

// Live fault injection is a user event, and user events are inputs of the
// pure function (design.md): the inject knob lists them, each one adds a
// fault window to the cluster, and the same list gives the same frames. An
// instructor's "fail h3 now" is the knob with one more entry, re-run from
// t = 0, which is why it can be stepped through, linked and replayed.

// MaxInjections bounds the inject knob's entries: a room needs a handful,
// and every entry is another fault window on a host's timeline.
const MaxInjections = 20

// injectKnob is the inject knob's name, in error messages and maps.
const injectKnob = "inject"

// Injection is one entry of the inject knob: from At to the end of the run
// host Host fails the way Fault says (the window added to the cluster).
type Injection struct {
	Host  int
	At    time.Duration
	Fault sim.Fault
}

// String is the entry as the knob writes it: "h3@60s".
func (in Injection) String() string { return fmt.Sprintf("h%d@%s", in.Host, dur(in.At)) }

// Describe says how the injected host fails, for a log line: "503, 1 in 3",
// "reset, 40% at random", "timeout, +400ms".
func (in Injection) Describe() string {
	f := &in.Fault
	parts := []string{f.Kind.String()}
	if f.Share > 0 {
		parts = append(parts, shareWords(f.Share, f.Pattern))
	}
	if f.AddedLatency > 0 {
		parts = append(parts, "+"+dur(f.AddedLatency))
	}
	return strings.Join(parts, ", ")
}

// shareWords is a failure share as a person says it: "1 in 3" for an
// interleaved 1/k, "every request" for 1, else a percentage.
func shareWords(p float64, pat sim.Pattern) string {
	if p >= 1 {
		return "every request"
	}
	if k := math.Round(1 / p); pat == sim.Interleaved && k >= 2 && math.Abs(1/k-p) < 1e-6 {
		return fmt.Sprintf("1 in %d", int(k))
	}
	s := strconv.FormatFloat(100*p, 'f', -1, 64)
	if len(s) > 4 {
		s = strconv.FormatFloat(100*p, 'f', 1, 64)
	}
	if pat == sim.Bernoulli {
		return s + "% at random"
	}
	return s + "%"
}

// defaultInjectedFault is what an injected host does when the scenario has
// no primary fault to copy: the opening story's lost cache.
var defaultInjectedFault = sim.Fault{Share: 1.0 / 3, Pattern: sim.Interleaved, Kind: sim.HTTP503}

// ParseInjections reads the inject knob's syntax, "h3@60s,h1@120s" (a time
// may also be bare seconds, "60"), without a cluster to check it against:
// ApplyKnobs checks hosts and times. Errors name the knob and the entry.
// The result is sorted by time, then host, so equal lists compare equal.
func ParseInjections(v string) ([]Injection, error) {
	var out []Injection
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if len(out) == MaxInjections {
			return nil, fmt.Errorf("%s: more than %d entries (allowed at most %d)", injectKnob, MaxInjections, MaxInjections)
		}
		host, at, ok := strings.Cut(e, "@")
		n, err := strconv.Atoi(strings.TrimPrefix(host, "h"))
		if !ok || !strings.HasPrefix(host, "h") || err != nil || n < 0 || strings.ContainsAny(host[1:], "+-") {
			return nil, fmt.Errorf("%s: %q is not HOST@TIME (allowed like h3@60s)", injectKnob, truncate(e, 40))
		}
		t, err := time.ParseDuration(at)
		if err != nil {
			sec, ferr := strconv.ParseFloat(at, 64)
			if ferr != nil || math.IsNaN(sec) || math.IsInf(sec, 0) {
				return nil, fmt.Errorf("%s: %s: %q is not a time (allowed like 60s or 90)", injectKnob, truncate(e, 40), truncate(at, 20))
			}
			t = time.Duration(math.Round(sec * float64(time.Second)))
		}
		out = append(out, Injection{Host: n, At: t})
	}
	slices.SortStableFunc(out, func(a, b Injection) int {
		if a.At != b.At {
			return cmpDur(a.At, b.At)
		}
		return a.Host - b.Host
	})
	return out, nil
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FormatInjections writes entries the way the knob reads them.
func FormatInjections(ins []Injection) string {
	parts := make([]string, len(ins))
	for i, in := range ins {
		parts[i] = in.String()
	}
	return strings.Join(parts, ",")
}

// setInjections replaces the scenario's injections with v's: it drops the
// windows earlier injections added, checks every entry against the
// cluster (host within h0…h(N-1), time within 0…duration, one entry per
// host) and adds one fault window per entry. It runs after every other
// knob (ApplyKnobs), so it sees the cluster's final size, length and fault.
func setInjections(sc *Scenario, v string) error {
	ins, err := ParseInjections(v)
	if err != nil {
		return err
	}
	c := &sc.Cluster
	c.Faults = slices.DeleteFunc(c.Faults, func(f sim.Fault) bool { return f.Label == injectedLabel })
	sc.Injections = nil
	proto := defaultInjectedFault
	for _, f := range c.Faults {
		if f.Primary {
			// The scenario's own fault, as its knobs have it: how often and
			// how its hosts fail, and what the health endpoint sees.
			proto = sim.Fault{Share: f.Share, Pattern: f.Pattern, Kind: f.Kind,
				AddedLatency: f.AddedLatency, HealthCheckFails: f.HealthCheckFails}
			break
		}
	}
	seen := map[int]Injection{}
	for _, in := range ins {
		switch prev, dup := seen[in.Host]; {
		case in.Host >= c.Hosts:
			// Unlike a preset's host index, which wraps so that it follows
			// the hosts knob, a name the user typed must be a host: h9 in
			// a six-host cluster is a mistake, not h3.
			return fmt.Errorf("%s: %s: h%d is not a host of this cluster (allowed h0–h%d)", injectKnob, in, in.Host, c.Hosts-1)
		case in.At < 0 || in.At > c.Duration:
			return fmt.Errorf("%s: %s: %s is out of range (allowed 0s–%s, the run's duration)", injectKnob, in, dur(in.At), dur(c.Duration))
		case dup:
			// A host's injected fault lasts to the end of the run, so a
			// second entry for it would change nothing: it is refused
			// rather than silently kept.
			return fmt.Errorf("%s: %s: h%d already fails from %s (allowed one entry per host)", injectKnob, in, in.Host, dur(prev.At))
		}
		seen[in.Host] = in
		f := proto
		f.Label, f.Hosts, f.From = injectedLabel, []int{in.Host}, in.At
		in.Fault = f
		// Appended after the scenario's own windows: on a host that already
		// fails, the first failing window decides (sim.Fault), so the
		// scenario's fault keeps its interleaving there.
		c.Faults = append(c.Faults, f)
		sc.Injections = append(sc.Injections, in)
	}
	return nil
}

// injectedLabel marks the fault windows the inject knob added.
const injectedLabel = "injected"

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
