package scenario

import (
	"outlierlab/engine"
	"outlierlab/engine/sim"
)

// Frame is one detector interval of a run: what happened between the
// previous tick and the tick at TMs, and the state right after that tick.
// Frames are data; the web layer and the lessons turn them into charts,
// sentences and checks.
type Frame struct {
	// TMs is the time of the tick that closes the interval; the first frame
	// has TMs == interval.
	TMs   int64       `json:"t_ms"`
	Hosts []HostFrame `json:"hosts"`
	// External and Local are the detector's success-rate and
	// failure-percentage passes at this tick (mean, threshold, or the gate
	// that stopped them).
	External engine.RatePass `json:"-"`
	Local    engine.RatePass `json:"-"`
	// Events are every detector decision in the interval, tick included,
	// in order (consecutive detections between ticks, then the tick's).
	Events []engine.Event `json:"-"`
	Stats  engine.Stats   `json:"-"`
	// Panic is true if the cluster was in panic at any point of the
	// interval; PanicAtEnd is its state after the tick.
	Panic      bool `json:"panic"`
	PanicAtEnd bool `json:"panic_at_end"`
	// LbHealthyPanic is cluster.<name>.lb_healthy_panic, cumulative.
	LbHealthyPanic uint64      `json:"lb_healthy_panic"`
	Clients        ClientFrame `json:"clients"`
	Healthy        int         `json:"healthy_hosts"`
	// SuccessRate is the external-origin success-rate pass in short: the
	// mean and threshold it compared with, or the gate that stopped it.
	SuccessRate RateFrame `json:"success_rate"`
	// Cluster holds the router and LB counters (cumulative).
	Cluster sim.ClusterStats `json:"cluster"`
	// Dialect is whose detector made the events (the decision log words
	// some of gRPC's decisions by its own rules).
	Dialect engine.Dialect `json:"-"`
	// Mesh is every client of a mesh run (clients > 1; the frame's own
	// fields are client 0's); nil for one client (mesh.go).
	Mesh *MeshFrame `json:"mesh,omitempty"`
}

// RateFrame is one success-rate pass: Gate is "ran", "too_few_hosts",
// "too_few_hosts_with_volume", or "not_configured" (the gRPC dialect with
// success rate off); Mean, StdDev and Threshold are -1 unless it ran.
type RateFrame struct {
	Gate            string  `json:"gate"`
	HostsWithVolume int     `json:"hosts_with_volume"`
	MinimumHosts    uint32  `json:"minimum_hosts"`
	Mean            float64 `json:"mean"`
	StdDev          float64 `json:"stdev"`
	Threshold       float64 `json:"threshold"`
}

// HostFrame is one host in one interval.
type HostFrame struct {
	Name string `json:"name"`
	// Requests and Successes are the attempts the host served in the
	// interval as the detector counted them (its external-origin bucket).
	Requests  uint64 `json:"requests"`
	Successes uint64 `json:"successes"`
	// SuccessRate is 100·successes/requests, or -1 with no requests.
	SuccessRate float64 `json:"success_rate"`
	// LocalRequests/LocalSuccesses: the local-origin bucket (split mode).
	LocalRequests  uint64  `json:"local_requests,omitempty"`
	LocalSuccesses uint64  `json:"local_successes,omitempty"`
	LocalRate      float64 `json:"local_success_rate,omitempty"`
	Ejected        bool    `json:"ejected"`
	Degraded       bool    `json:"degraded,omitempty"`
	// Multiplier is the ejection backoff counter after the tick.
	Multiplier   uint32 `json:"multiplier"`
	NumEjections uint32 `json:"num_ejections"`
	// ReturnsInMs: when ejected, time from this tick until the ejection
	// time has elapsed (the host returns at the first tick at or after).
	ReturnsInMs int64 `json:"returns_in_ms,omitempty"`
	// TrafficShare is the host's share of all attempts in the interval (0–1).
	TrafficShare float64 `json:"traffic_share"`
	// FailedActiveHC: the active health checker currently marks the host.
	FailedActiveHC bool `json:"failed_active_hc,omitempty"`
	// DegradedActiveHC: the active health checker marks the host degraded
	// (its health endpoint answered x-envoy-degraded).
	DegradedActiveHC bool   `json:"degraded_active_hc,omitempty"`
	Consecutive5xx   uint32 `json:"consecutive_5xx"`
	// ConsecutiveGateway and ConsecutiveLocal are the other two consecutive
	// counters after the tick.
	ConsecutiveGateway uint32 `json:"consecutive_gateway_failure,omitempty"`
	ConsecutiveLocal   uint32 `json:"consecutive_local_origin_failure,omitempty"`
	// Peak5xx is the highest the consecutive 5xx counter stood in the
	// interval (engine.HostSample.Peak5xx): a streak that reached the
	// threshold and was reset by the ejection shows here, not above.
	Peak5xx uint32 `json:"peak_5xx,omitempty"`
	// Attempts is how many attempts the load balancer sent the host in the
	// interval (TrafficShare's numerator); Requests counts the completed
	// ones the detector recorded.
	Attempts uint64 `json:"attempts"`
}

// ClientFrame is what the cluster's downstream clients saw in the interval.
type ClientFrame struct {
	Requests uint64 `json:"requests"`
	// Failures are requests that failed after retries (including 503 no
	// healthy upstream).
	Failures    uint64 `json:"failures"`
	RetriesSent uint64 `json:"retries"`
	// BudgetRefusals are the interval's upstream_rq_retry_overflow: retries
	// not sent because the max_retries circuit breaker, or the retry budget
	// that replaces it, refused them (RetryStateImpl::shouldRetry). The
	// name is kept for its readers; it counts both.
	BudgetRefusals uint64  `json:"retry_overflow"`
	LatencyP50Ms   float64 `json:"latency_p50_ms"`
	LatencyP99Ms   float64 `json:"latency_p99_ms"`
	// NoHealthy: requests Envoy answered itself with 503 no healthy
	// upstream (never reported to outlier detection).
	NoHealthy uint64 `json:"no_healthy_upstream"`
}

// FailurePct is the clients' failure share in percent (0 with no requests).
func (c ClientFrame) FailurePct() float64 {
	if c.Requests == 0 {
		return 0
	}
	return 100 * float64(c.Failures) / float64(c.Requests)
}
