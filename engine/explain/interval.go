package explain

import "outlierlab/engine"

// Interval is what the explainer reads of one detector interval: its
// events, the tick's rate passes, and how many requests each host served
// (success rate leaves out the hosts below its volume).
type Interval struct {
	// TMs is the tick that closes the interval: the time of the sentences
	// about its rate passes.
	TMs      int64
	Events   []engine.Event
	External engine.RatePass
	Local    engine.RatePass
	Hosts    []HostVolume
	// Dialect is whose detector decided: Envoy's, or grpc-go's (gRFC A50),
	// whose rules some sentences word differently (dialect.go).
	Dialect engine.Dialect
}

// HostVolume is one host's external-origin request count in the interval.
type HostVolume struct {
	Name     string
	Requests uint64
	Ejected  bool
}

// Decisions is every decision of one interval, oldest first: the events in
// the order the detector made them, then what the tick's rate passes
// decided without an event.
func Decisions(iv *Interval, cfg engine.Config) []Sentence {
	return append(Events(iv, cfg), Passes(iv, cfg)...)
}

// Events are the interval's events as sentences, a run of identical ones
// told once with its count (see groupRepeats). Under the gRPC dialect the
// first interval opens with what grpc-go leaves out of the config
// (dialectNote), said once a run.
func Events(iv *Interval, cfg engine.Config) []Sentence {
	var out []Sentence
	if iv.Dialect == engine.DialectGRPC && iv.TMs == cfg.IntervalMs {
		out = append(out, dialectNote(iv.TMs, cfg))
	}
	for _, g := range groupRepeats(iv.Events) {
		s := Event(g.first, iv, cfg)
		if g.count > 1 {
			b := &builder{spans: s.Spans}
			b.text(" The same, ").count(uint64(g.count)).text(" times in all, until ").secs(g.lastMs).text(".")
			s.Spans = b.spans
		}
		out = append(out, s)
	}
	return out
}

// repeat is one event and how many identical ones followed it.
type repeat struct {
	first  *engine.Event
	count  int
	lastMs int64
}

// groupRepeats folds the decisions that repeat within an interval into one
// sentence: a host failing hard trips consecutive_5xx every five requests,
// and with the cap full each trip is the same refusal, thousands of times.
// Two events are the same when they differ only in time: same host,
// detector, outcome and cap arithmetic.
func groupRepeats(events []engine.Event) []repeat {
	type key struct {
		host      string
		kind      engine.EventKind
		det       engine.EjectionType
		active    uint64
		hosts     int
		enforcing uint32
	}
	var out []repeat
	at := map[key]int{}
	for i := range events {
		e := &events[i]
		repeatable := (e.Kind == engine.EventOverflow || e.Kind == engine.EventDetect) &&
			(e.Detector == engine.Consecutive5xx || e.Detector == engine.ConsecutiveGatewayFailure || e.Detector == engine.ConsecutiveLocalOriginFailure)
		if !repeatable {
			out = append(out, repeat{first: e, count: 1, lastMs: e.AtMs})
			continue
		}
		k := key{e.Host, e.Kind, e.Detector, e.Cap.Active, e.Cap.Hosts, e.Enforcing}
		if j, ok := at[k]; ok {
			out[j].count++
			out[j].lastMs = e.AtMs
			continue
		}
		at[k] = len(out)
		out = append(out, repeat{first: e, count: 1, lastMs: e.AtMs})
	}
	return out
}
