package scenario

import (
	"math"
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
}

// Run simulates the scenario with the given outlier_detection config and
// seed. Same inputs, same frames: nothing here reads a clock or a global
// random source.
func Run(sc Scenario, cfg engine.Config, seed uint64) (Result, error) {
	s, err := sim.New(sc.Cluster, cfg, seed)
	if err != nil {
		return Result{}, err
	}
	res := Result{Scenario: sc.Clone(), Config: cfg, Seed: seed}
	res.Frames = make([]Frame, 0, s.EndMs()/cfg.IntervalMs)
	for {
		iv, ok := s.Next()
		if !ok {
			break
		}
		f := newFrame(iv)
		f.Dialect = sc.Cluster.Dialect
		res.Frames = append(res.Frames, f)
	}
	res.Summary = summarize(&res, s)
	return res, nil
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
		f.Events = append([]engine.Event(nil), iv.Events...)
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
			Consecutive5xx:     hs.Consecutive5xx,
			Attempts:           sh.Attempts,
			ConsecutiveGateway: hs.ConsecutiveGW,
			ConsecutiveLocal:   hs.ConsecutiveLocal,
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

func summarize(res *Result, s *sim.Sim) Summary {
	sc := &res.Scenario
	tot := s.Totals()
	sum := Summary{
		Scenario:          sc.Name,
		Seed:              res.Seed,
		Hosts:             sc.Cluster.Hosts,
		IntervalMs:        res.Config.IntervalMs,
		EndMs:             s.EndMs(),
		Frames:            len(res.Frames),
		Requests:          tot.Requests,
		Failures:          tot.Failures,
		FailurePct:        pct(tot.Failures, tot.Requests),
		Retries:           tot.Retries,
		RetryOverflow:     tot.RetryOverflow,
		NoHealthyUpstream: tot.NoHealthy,
		LatencyP50Ms:      tot.P50Ms,
		LatencyP99Ms:      tot.P99Ms,
		Stats:             s.Detector().Stats(),
		Cluster:           s.ClusterStats(),
		FaultStartMs:      -1,
	}
	sum.LbHealthyPanic = sum.Cluster.LbHealthyPanic
	for _, f := range sc.Cluster.Faults {
		if ms := f.From.Milliseconds(); sum.FaultStartMs < 0 || ms < sum.FaultStartMs {
			sum.FaultStartMs = ms
		}
	}
	if sum.FaultStartMs >= 0 {
		sum.FailurePctSinceFault = Totals(Window(res.Frames, sum.FaultStartMs, math.MaxInt64)).FailurePct()
	}
	for _, f := range res.Frames {
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
	return sum
}

func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
