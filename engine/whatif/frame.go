package whatif

import (
	"fmt"
	"slices"

	"outlierlab/engine"
	"outlierlab/engine/replay"
	"outlierlab/engine/scenario"
)

// tick runs the detector's interval timer and closes the interval's frame.
func (r *replayer) tick() {
	r.clock.Ms = r.nextTick
	rep := r.d.Tick()
	f := scenario.Frame{
		TMs:         r.nextTick,
		Hosts:       make([]scenario.HostFrame, len(rep.Hosts)),
		External:    rep.External,
		Local:       rep.Local,
		Stats:       r.d.Stats(),
		SuccessRate: scenario.NewRateFrame(rep.External),
		Clients: scenario.ClientFrame{
			Requests: r.cur.requests,
			Failures: r.cur.failures,
		},
	}
	f.Clients.LatencyP50Ms, f.Clients.LatencyP99Ms = percentile(r.cur.durations, 50), percentile(r.cur.durations, 99)
	var attempts uint64
	for _, a := range r.cur.attempts {
		attempts += a
	}
	for i, hs := range rep.Hosts {
		hf := scenario.HostFrame{
			Name: hs.Name, Requests: hs.Requests, Successes: hs.Successes, SuccessRate: hs.SuccessRate,
			LocalRequests: hs.LocalRequests, LocalSuccesses: hs.LocalSuccesses,
			Ejected: hs.Ejected, Degraded: hs.Degraded, Multiplier: hs.Backoff, NumEjections: hs.NumEjections,
			Consecutive5xx: hs.Consecutive5xx, ConsecutiveGateway: hs.ConsecutiveGW, ConsecutiveLocal: hs.ConsecutiveLocal,
			Attempts: r.cur.attempts[i],
		}
		if hs.LocalRequests > 0 {
			hf.LocalRate = hs.LocalRate
		}
		if hs.Ejected {
			hf.ReturnsInMs = max(0, hs.ReturnEligibleMs-r.nextTick)
		} else {
			f.Healthy++
		}
		if attempts > 0 {
			hf.TrafficShare = float64(r.cur.attempts[i]) / float64(attempts)
		}
		f.Hosts[i] = hf
	}
	f.Events = r.d.DrainEvents(nil)
	r.record(f.Events)
	f.PanicAtEnd = r.inPanic()
	f.Panic = r.cur.panic || f.PanicAtEnd
	r.res.Frames = append(r.res.Frames, f)
	clear(r.cur.attempts)
	r.cur = interval{attempts: r.cur.attempts, durations: r.cur.durations[:0], panic: f.PanicAtEnd}
	r.nextTick += r.opts.Config.IntervalMs
}

// record adds the interval's events to the output, in the replay format.
func (r *replayer) record(events []engine.Event) {
	s := &r.res.Summary
	for _, e := range events {
		ev := replay.Event{AtMs: e.AtMs, Host: e.Host, Event: e.Kind.String()}
		if e.Kind != engine.EventUneject && e.Kind != engine.EventUndegrade {
			ev.Detector = e.Detector.String()
		}
		r.res.Events = append(r.res.Events, ev)
		r.res.Raw = append(r.res.Raw, e)
		switch e.Kind {
		case engine.EventEject:
			s.Ejections++
		case engine.EventUneject:
			s.Unejections++
		case engine.EventOverflow:
			s.Overflows++
		case engine.EventDetect:
			s.Detections++
		}
	}
}

// percentile of the durations (nearest rank), 0 with none.
func percentile(ms []int64, p int) float64 {
	if len(ms) == 0 {
		return 0
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return float64(s[max(0, min(i, len(s)-1))])
}

// caveats say, in sentences, what the log could not show.
func caveats(s *Summary, hosts int) []string {
	out := []string{fmt.Sprintf("Hosts are the %d upstream hosts the log names, all in the cluster from the first line; a host that served nothing is missing, and max_ejection_percent counts only these.", hosts)}
	switch {
	case s.AttemptsKnown && s.Retried > 0:
		out = append(out, fmt.Sprintf("%d requests were retried: a log line shows only the last attempt, so their %d earlier attempts, which also reported to the detector (on hosts the log does not name), are not replayed.", s.Retried, s.EarlierAttempts))
	case !s.AttemptsKnown && s.RetriesExhausted > 0:
		out = append(out, fmt.Sprintf("The log has no %%UPSTREAM_REQUEST_ATTEMPT_COUNT%%, and %d lines say retries ran out (URX): each hides earlier attempts this replay cannot see.", s.RetriesExhausted))
	case !s.AttemptsKnown:
		out = append(out, "The log has no %UPSTREAM_REQUEST_ATTEMPT_COUNT%: a retried request's earlier attempts cannot be seen or counted; each line is replayed as one attempt.")
	}
	if s.DroppedWhileEjected > 0 {
		out = append(out, fmt.Sprintf("%s on hosts this config had ejected (outside panic): Envoy would have sent those requests to other hosts, with outcomes the log cannot show, so they are left out.", linesWere(s.DroppedWhileEjected, "were", "was")))
	}
	if s.NotReported > 0 {
		out = append(out, fmt.Sprintf("%s no upstream host or were refused before one (UH, UO, a local reply, or no response): Envoy reports nothing to outlier detection for them.", linesWere(s.NotReported, "reached", "reached")))
	}
	if s.Unparsed > 0 {
		out = append(out, fmt.Sprintf("%s not parse and %s not replayed.", linesWere(s.Unparsed, "did", "did"), map[bool]string{true: "is", false: "are"}[s.Unparsed == 1]))
	}
	return append(out, "Client requests and failures in the frames are the log's own: what happened under the config that ran, not what this one would have changed.")
}

// linesWere counts lines with the verb that follows: "1 line was",
// "3 lines were".
func linesWere(n int, many, one string) string {
	if n == 1 {
		return nLines(n) + " " + one
	}
	return nLines(n) + " " + many
}

// nLines is "1 line" or "n lines".
func nLines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}
