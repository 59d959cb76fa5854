package scenario

import "outlierlab/engine"

// A frame's interval runs from the previous frame's tick (0 s for the first
// frame) to its own tick. Traffic is counted per interval, so a sum over a
// span of time adds up the intervals that lie wholly inside it: "from
// 30 s" is the traffic since a fault that starts at 30 s, with nothing
// from before it mixed in. The run's summary, the lessons' checks and live
// numbers, and the lab's status line all sum through here.

// Window is the frames whose whole interval lies in [fromMs, toMs]. Frames
// are in tick order, so it is a sub-slice of frames (empty when no whole
// interval fits).
func Window(frames []Frame, fromMs, toMs int64) []Frame {
	i, start := 0, int64(0)
	for i < len(frames) && start < fromMs {
		start = frames[i].TMs
		i++
	}
	j := i
	for j < len(frames) && frames[j].TMs <= toMs {
		j++
	}
	return frames[i:j]
}

// ClientTotals is what downstream clients saw over some intervals: sums of
// the frames' ClientFrame counters, and the worst interval's latencies.
type ClientTotals struct {
	Intervals      int
	Requests       uint64
	Failures       uint64
	RetriesSent    uint64
	BudgetRefusals uint64
	NoHealthy      uint64
	LatencyP50Ms   float64
	LatencyP99Ms   float64
}

// Totals adds up the clients' counters of frames (see Window).
func Totals(frames []Frame) ClientTotals {
	t := ClientTotals{Intervals: len(frames)}
	for i := range frames {
		c := &frames[i].Clients
		t.Requests += c.Requests
		t.Failures += c.Failures
		t.RetriesSent += c.RetriesSent
		t.BudgetRefusals += c.BudgetRefusals
		t.NoHealthy += c.NoHealthy
		t.LatencyP50Ms = max(t.LatencyP50Ms, c.LatencyP50Ms)
		t.LatencyP99Ms = max(t.LatencyP99Ms, c.LatencyP99Ms)
	}
	return t
}

// FailurePct is failures per request, in percent (0 with no requests).
func (t ClientTotals) FailurePct() float64 { return pct(t.Failures, t.Requests) }

// RetryPct is retries sent per request, in percent (0 with no requests).
func (t ClientTotals) RetryPct() float64 { return pct(t.RetriesSent, t.Requests) }

// HostAttempts is how many attempts the load balancer sent to host over
// frames, and to every host; found is false if no frame names the host.
func HostAttempts(frames []Frame, host string) (mine, all uint64, found bool) {
	for i := range frames {
		for _, h := range frames[i].Hosts {
			all += h.Attempts
			if h.Name == host {
				mine += h.Attempts
				found = true
			}
		}
	}
	return mine, all, found
}

// CountEvents is how many events of kind frames hold.
func CountEvents(frames []Frame, kind engine.EventKind) int {
	n := 0
	for i := range frames {
		for _, e := range frames[i].Events {
			if e.Kind == kind {
				n++
			}
		}
	}
	return n
}
