package scenario

import (
	"slices"

	"outlierlab/engine"
	"outlierlab/engine/sim"
)

// Scenario is a cluster, its traffic and faults, and the outlier_detection
// block it starts with. A run is a pure function of (Scenario, Config, seed).
type Scenario struct {
	Name        string
	Description string
	Cluster     sim.Cluster
	// Outlier is the scenario's starting outlier_detection config; callers
	// change it (sliders, -set) and pass the result to Run.
	Outlier engine.Config
	// Injections are the faults the inject knob added (a user's live
	// events), oldest first; their windows are in Cluster.Faults.
	Injections []Injection
}

// Clone returns a copy sharing no slices with sc.
func (sc Scenario) Clone() Scenario {
	sc.Cluster = sc.Cluster.Clone()
	sc.Injections = slices.Clone(sc.Injections)
	for i := range sc.Injections {
		sc.Injections[i].Fault.Hosts = slices.Clone(sc.Injections[i].Fault.Hosts)
	}
	return sc
}

// Result is a whole run: one frame per detector interval and a summary.
type Result struct {
	Scenario Scenario
	Config   engine.Config
	Seed     uint64
	Frames   []Frame
	Summary  Summary
}

// Summary is a run in a few numbers.
type Summary struct {
	Scenario   string `json:"scenario"`
	Seed       uint64 `json:"seed"`
	Hosts      int    `json:"hosts"`
	IntervalMs int64  `json:"interval_ms"`
	EndMs      int64  `json:"end_ms"`
	Frames     int    `json:"frames"`

	Requests   uint64  `json:"requests"`
	Failures   uint64  `json:"failures"`
	FailurePct float64 `json:"failure_pct"`
	// FaultStartMs is when the first fault window opens (-1: none);
	// FailurePctSinceFault counts the requests that ended in the intervals
	// from there on (the intervals that start at or after the fault).
	FaultStartMs         int64   `json:"fault_start_ms"`
	FailurePctSinceFault float64 `json:"failure_pct_since_fault"`
	Retries              uint64  `json:"retries"`
	RetryOverflow        uint64  `json:"retry_overflow"`
	NoHealthyUpstream    uint64  `json:"no_healthy_upstream"`
	LatencyP50Ms         float64 `json:"latency_p50_ms"`
	LatencyP99Ms         float64 `json:"latency_p99_ms"`

	// Event counts by kind, the most hosts ejected at once (after a
	// tick), and how many intervals saw panic.
	Ejections      int    `json:"ejections"`
	Unejections    int    `json:"unejections"`
	Overflows      int    `json:"overflows"`
	Detections     int    `json:"detections_not_enforced"`
	MaxEjected     int    `json:"max_ejected"`
	PanicFrames    int    `json:"panic_frames"`
	LbHealthyPanic uint64 `json:"lb_healthy_panic"`

	Stats   engine.Stats     `json:"-"`
	Cluster sim.ClusterStats `json:"cluster"`
	// Work is what the run did (sim.Work): what sim.Weigh estimated
	// (every client's, in a mesh).
	Work sim.Work `json:"-"`
	// Mesh is a mesh run's every client and its fleet's sums (the
	// fields above are client 0's); nil for one client.
	Mesh *MeshSummary `json:"mesh,omitempty"`
}

// Run simulates the scenario with the given outlier_detection config and
// seed. Same inputs, same frames: nothing here reads a clock or a global
// random source.
func Run(sc Scenario, cfg engine.Config, seed uint64) (Result, error) {
	var k keepFrames
	if _, err := Stream(sc, cfg, seed, &k); err != nil {
		return Result{}, err
	}
	return k.res, nil
}

// keepFrames is the FrameWriter that keeps the whole run: Run.
type keepFrames struct{ res Result }

func (k *keepFrames) Begin(res *Result) error { k.res = *res; return nil }
func (k *keepFrames) Frame(f *Frame) error {
	kept := *f
	kept.Events = slices.Clone(f.Events)
	k.res.Frames = append(k.res.Frames, kept)
	return nil
}
func (k *keepFrames) End(res *Result) error {
	k.res.Summary = res.Summary
	if k.res.Frames == nil {
		k.res.Frames = []Frame{} // a run of no frames is [], as it always was
	}
	return nil
}

func newFrame(iv *sim.Interval) Frame {
	rep := iv.Tick
	f := Frame{
		TMs:            iv.EndMs,
		Hosts:          make([]HostFrame, len(rep.Hosts)),
		External:       rep.External,
		Local:          rep.Local,
		Stats:          iv.Stats,
		Panic:          iv.Panic,
		PanicAtEnd:     iv.PanicAtEnd,
		LbHealthyPanic: iv.Cluster.LbHealthyPanic,
		Healthy:        iv.Healthy,
		Clients: ClientFrame{
			Requests:       iv.Clients.Requests,
			Failures:       iv.Clients.Failures,
			RetriesSent:    iv.Clients.Retries,
			BudgetRefusals: iv.Clients.RetryOverflow,
			LatencyP50Ms:   iv.Clients.P50Ms,
			LatencyP99Ms:   iv.Clients.P99Ms,
			NoHealthy:      iv.Clients.NoHealthy,
		},
		SuccessRate: newRateFrame(rep.External),
		Cluster:     iv.Cluster,
	}
	if len(iv.Events) > 0 {
		// The simulator's own slice, valid until its next interval: a
		// streamed frame is written before that, and Run keeps a copy.
		f.Events = iv.Events
	}
	var attempts uint64
	for _, h := range iv.Hosts {
		attempts += h.Attempts
	}
	for i, hs := range rep.Hosts {
		sh := iv.Hosts[i]
		hf := HostFrame{
			Name:               hs.Name,
			Requests:           hs.Requests,
			Successes:          hs.Successes,
			SuccessRate:        hs.SuccessRate,
			LocalRequests:      hs.LocalRequests,
			LocalSuccesses:     hs.LocalSuccesses,
			Ejected:            hs.Ejected,
			Degraded:           hs.Degraded,
			Multiplier:         hs.Backoff,
			NumEjections:       hs.NumEjections,
			FailedActiveHC:     sh.FailedActiveHC,
			DegradedActiveHC:   sh.DegradedActiveHC,
			Consecutive5xx:     hs.Consecutive5xx,
			Attempts:           sh.Attempts,
			ConsecutiveGateway: hs.ConsecutiveGW,
			ConsecutiveLocal:   hs.ConsecutiveLocal,
			Peak5xx:            hs.Peak5xx,
		}
		if hs.LocalRequests > 0 {
			hf.LocalRate = hs.LocalRate
		}
		if hs.Ejected {
			hf.ReturnsInMs = max(0, hs.ReturnEligibleMs-iv.EndMs)
		}
		if attempts > 0 {
			hf.TrafficShare = float64(sh.Attempts) / float64(attempts)
		}
		f.Hosts[i] = hf
	}
	return f
}

func newRateFrame(p engine.RatePass) RateFrame {
	r := RateFrame{Gate: gateNames[p.SRGate], HostsWithVolume: p.SRHostsVolume, MinimumHosts: p.SRMinimumHosts, Mean: -1, Threshold: -1}
	if p.SRGate == engine.GateRan {
		r.Mean, r.StdDev, r.Threshold = p.Mean, p.StdDev, p.Threshold
	}
	return r
}

var gateNames = [...]string{
	engine.GateRan:                   "ran",
	engine.GateTooFewHosts:           "too_few_hosts",
	engine.GateTooFewHostsWithVolume: "too_few_hosts_with_volume",
	// The gRPC dialect with enforcing_success_rate 0: grpc-go builds no
	// success-rate config, so the pass is not there at all.
	engine.GateNotConfigured: "not_configured",
}

// summaryAcc adds up a run's summary one frame at a time, so a run that
// keeps no frames (Stream) summarizes exactly as one that keeps them all.
type summaryAcc struct {
	sum Summary
	// The clients' counters of the intervals that start at or after the
	// first fault (Window(frames, FaultStartMs, ∞)): a frame's interval
	// starts at the previous frame's tick, 0 s for the first.
	sinceFault ClientTotals
	prevTMs    int64
}

func newSummary(res *Result) *summaryAcc {
	sc := &res.Scenario
	a := &summaryAcc{sum: Summary{
		Scenario:     sc.Name,
		Seed:         res.Seed,
		Hosts:        sc.Cluster.Hosts,
		IntervalMs:   res.Config.IntervalMs,
		FaultStartMs: -1,
	}}
	for _, f := range sc.Cluster.Faults {
		if ms := f.From.Milliseconds(); a.sum.FaultStartMs < 0 || ms < a.sum.FaultStartMs {
			a.sum.FaultStartMs = ms
		}
	}
	return a
}

func (a *summaryAcc) add(f *Frame) {
	sum := &a.sum
	sum.Frames++
	if sum.FaultStartMs >= 0 && a.prevTMs >= sum.FaultStartMs {
		a.sinceFault.Requests += f.Clients.Requests
		a.sinceFault.Failures += f.Clients.Failures
	}
	a.prevTMs = f.TMs
	for _, e := range f.Events {
		switch e.Kind {
		case engine.EventEject:
			sum.Ejections++
		case engine.EventUneject:
			sum.Unejections++
		case engine.EventOverflow:
			sum.Overflows++
		case engine.EventDetect:
			sum.Detections++
		}
	}
	ej := 0
	for _, h := range f.Hosts {
		if h.Ejected {
			ej++
		}
	}
	sum.MaxEjected = max(sum.MaxEjected, ej)
	if f.Panic {
		sum.PanicFrames++
	}
}

// finish adds the simulator's run totals once the last frame is in.
func (a *summaryAcc) finish(s *sim.Sim) Summary {
	sum := a.sum
	tot := s.Totals()
	sum.EndMs = s.EndMs()
	sum.Requests, sum.Failures = tot.Requests, tot.Failures
	sum.FailurePct = pct(tot.Failures, tot.Requests)
	sum.Retries, sum.RetryOverflow, sum.NoHealthyUpstream = tot.Retries, tot.RetryOverflow, tot.NoHealthy
	sum.LatencyP50Ms, sum.LatencyP99Ms = tot.P50Ms, tot.P99Ms
	sum.Stats = s.Detector().Stats()
	sum.Cluster = s.ClusterStats()
	sum.LbHealthyPanic = sum.Cluster.LbHealthyPanic
	sum.Work = s.Work()
	if sum.FaultStartMs >= 0 {
		sum.FailurePctSinceFault = a.sinceFault.FailurePct()
	}
	return sum
}

func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
