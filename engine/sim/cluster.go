// Package sim is outlierlab's synthetic traffic: Poisson request arrivals,
// Envoy's load balancer (round robin, least request, random, with the
// healthy-panic threshold, and degraded hosts taking only the load the
// healthy ones cannot: one priority, equal weights, no localities),
// upstream hosts whose faults change over time (failing, slow, or
// answering degraded),
// the router's retries and timeouts, and optional active health checks.
// Every upstream attempt is reported to the engine's detector exactly the
// way Envoy's router reports it (envoy-semantics.md §3.4).
//
// The package is pure: no goroutines, no I/O, no wall clock, no global
// randomness. A run is a function of (Cluster, engine.Config, seed); the
// same inputs give the same intervals, bit for bit.
//
// Time is kept in integer microseconds so that several requests can share
// a millisecond at high rates; the detector's clock reads the time truncated
// to whole milliseconds, as Envoy's detector does. Its interval timer fires
// at t = interval, 2·interval, … At the same microsecond, attempt
// completions come first, then retries leaving backoff, active health
// checks, the detector's tick and new arrivals (see eventClass): Envoy
// promises no order there (envoy-semantics.md §15), so outlierlab fixes one.
package sim

import (
	"fmt"
	"math"
	"strings"
	"time"

	"outlierlab/engine"
)

// Cluster is everything about the traffic and the cluster that is not the
// outlier_detection block: hosts, load, load balancing, retries, active
// health checks and the faults injected into hosts over time.
type Cluster struct {
	// Hosts is the number of upstream hosts, named h0…h(N-1), all in one
	// priority with equal weights.
	Hosts int
	// RPS is the mean downstream request rate; arrivals are Poisson.
	RPS float64
	// Duration of the run. The run ends at the last detector tick at or
	// before Duration, so every frame covers a whole interval.
	Duration time.Duration
	LB       LBPolicy
	// HealthyPanicThreshold is common_lb_config.healthy_panic_threshold in
	// percent (Envoy's default 50; 0 disables panic).
	HealthyPanicThreshold uint32
	Latency               Latency
	// CapacityRPS is what one host can serve per second (0: unlimited).
	// Above it requests queue; a request that would wait longer than
	// QueueLimit is shed with a 503, and a long wait can also run into the
	// router's timeouts.
	CapacityRPS float64
	QueueLimit  time.Duration
	Retry       RetryPolicy
	HealthCheck HealthCheck
	// Faults are per-host and fleet-wide fault windows.
	Faults []Fault
	// Dialect is whose detector reads the outlier_detection block: Envoy's,
	// or grpc-go's (gRFC A50), which also has no panic routing.
	Dialect engine.Dialect
	// Clients is how many client proxies share the downstream traffic,
	// each with its own load balancer and detector (a mesh: mesh.go);
	// 0 and 1 are the one proxy of every run before them.
	Clients int
	// ClientSkew is the first client's traffic as a multiple of each
	// other client's (1–MaxClientSkew; 0 and 1: even).
	ClientSkew float64
	// FailoverHosts are the last hosts, in a second priority level (P1):
	// a failover locality, as Istio's locality failover writes the next
	// zone's endpoints; at most Hosts−1 of them (P0 keeps at least one,
	// so fewer hosts than a preset's still run). 0: every host in P0
	// (priority.go).
	FailoverHosts int
}

// LevelSizes are the hosts in each priority level, P0 first.
func (c *Cluster) LevelSizes() []int {
	if f := min(c.FailoverHosts, c.Hosts-1); f > 0 {
		return []int{c.Hosts - f, f}
	}
	return []int{c.Hosts}
}

// Latency is a host's response time when nothing is wrong: a fixed part, an
// exponentially distributed part with mean Jitter, and a tail: a share of
// requests that take Tail longer.
type Latency struct {
	Base      time.Duration
	Jitter    time.Duration
	TailShare float64
	Tail      time.Duration
}

// LBPolicy is the cluster's lb_policy.
type LBPolicy uint8

const (
	// RoundRobin is Envoy's default policy. With equal weights Envoy skips
	// its EDF scheduler and walks the host list with one index per host
	// source (healthy hosts, or all hosts in panic).
	RoundRobin LBPolicy = iota
	// LeastRequest with equal weights is power of two choices: two random
	// hosts, the one with fewer active requests wins, ties go to the first.
	LeastRequest
	// Random picks uniformly among the source's hosts.
	Random
)

var lbNames = [...]string{"round_robin", "least_request", "random"}

func (p LBPolicy) String() string {
	if int(p) < len(lbNames) {
		return lbNames[p]
	}
	return "unknown"
}

// ParseLBPolicy reads round_robin, least_request or random.
func ParseLBPolicy(s string) (LBPolicy, error) {
	for i, n := range lbNames {
		if n == s {
			return LBPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", s, strings.Join(lbNames[:], "|"))
}

// FailureKind is how a failing request fails.
type FailureKind uint8

const (
	HTTP500 FailureKind = iota
	HTTP502
	HTTP503
	HTTP504
	// ConnectFailure: the connection is refused; the pool fails before a
	// stream attaches (router: onPoolFailure → LocalOriginConnectFailed).
	ConnectFailure
	// Reset: the stream attaches, then the upstream resets it.
	Reset
	// Timeout: the host never answers; the router's per-try or route
	// timeout ends the attempt (LocalOriginTimeout with 504).
	Timeout
	// Degraded: the host answers 200 with the x-envoy-degraded header.
	// The client gets its answer; the router reports
	// ExtOriginRequestDegraded with the 200 (Filter::onUpstreamHeaders),
	// which marks the host degraded when detect_degraded_hosts is on and
	// is a success for every other detector. A health check that shares
	// the fault passes, degraded: DEGRADED_ACTIVE_HC (the HTTP health
	// checker's Degraded result, handleSuccess(true)).
	Degraded
)

var kindNames = [...]string{"500", "502", "503", "504", "connect_failure", "reset", "timeout", "degraded"}

func (k FailureKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// ParseFailureKind reads 500, 502, 503, 504, connect_failure, reset,
// timeout or degraded.
func ParseFailureKind(s string) (FailureKind, error) {
	for i, n := range kindNames {
		if n == s {
			return FailureKind(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", s, strings.Join(kindNames[:], "|"))
}

// FailureKindNames lists every failure kind's name.
func FailureKindNames() []string { return append([]string(nil), kindNames[:]...) }

// httpCode is the status of an HTTP failure kind, 0 for the others.
func (k FailureKind) httpCode() int {
	switch k {
	case HTTP500:
		return 500
	case HTTP502:
		return 502
	case HTTP503:
		return 503
	case HTTP504:
		return 504
	}
	return 0
}

// Pattern is how a failing share is spread over a host's requests.
type Pattern uint8

const (
	// Interleaved spreads failures evenly and deterministically: with a
	// share of 1/3 exactly every third request the host serves fails, so a
	// streak of two failures never happens.
	Interleaved Pattern = iota
	// Bernoulli fails each request independently with the share as
	// probability.
	Bernoulli
)

var patternNames = [...]string{"interleaved", "random"}

func (p Pattern) String() string {
	if int(p) < len(patternNames) {
		return patternNames[p]
	}
	return "unknown"
}

// ParsePattern reads interleaved or random.
func ParsePattern(s string) (Pattern, error) {
	for i, n := range patternNames {
		if n == s {
			return Pattern(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not one of %s", s, strings.Join(patternNames[:], "|"))
}

// Fault is one fault window on a set of hosts. Overlapping windows on one
// host combine: the first failing window in list order decides failures,
// added latencies add up, the lowest capacity wins, and the health endpoint
// fails if any window says it shares the fault.
type Fault struct {
	// Label says what the fault stands for ("cache lost", "bad deploy").
	Label string
	// Which hosts: AllHosts, or the first ⌈HostShare·N⌉ hosts, or the
	// listed indexes, taken modulo N: -1 is the last host, so a preset's
	// faulty host follows the host-count knob, and an index past the end
	// wraps round rather than silently dropping the fault.
	AllHosts  bool
	HostShare float64
	Hosts     []int
	// From and Until bound the window [From, Until); Until 0 means to the
	// end of the run.
	From, Until time.Duration
	// Share of the host's requests that fail (0–1), how they are spread,
	// and how they fail.
	Share   float64
	Pattern Pattern
	Kind    FailureKind
	// AddedLatency is added to every response (slow host).
	AddedLatency time.Duration
	// CapacityRPS lowers the host's capacity during the window (0: unchanged).
	CapacityRPS float64
	// HealthCheckFails: the health endpoint shares the fault, so active
	// health checks fail with the same share.
	HealthCheckFails bool
	// Primary marks the fault the scenario knobs (fault_rate, fault_kind,
	// fault_pattern, fault_start) tune.
	Primary bool
}

// AppliesTo reports whether the fault covers host i of n.
func (f *Fault) AppliesTo(i, n int) bool {
	if f.AllHosts {
		return true
	}
	if f.HostShare > 0 && float64(i) < math.Ceil(f.HostShare*float64(n)-1e-9) {
		return true
	}
	for _, h := range f.Hosts {
		if (h%n+n)%n == i {
			return true
		}
	}
	return false
}

// RetryOn is the route's retry_on set, as a bit mask.
type RetryOn uint8

const (
	// RetryOn5xx: any 5xx response, resets, connect failures and per-try
	// timeouts.
	RetryOn5xx RetryOn = 1 << iota
	// RetryOnGatewayError: 502/503/504 responses, resets, connect failures
	// and per-try timeouts.
	RetryOnGatewayError
	// RetryOnConnectFailure: connection failures only.
	RetryOnConnectFailure
	// RetryOnReset: any reset, connection failures and per-try timeouts
	// included (Envoy resets the stream on a per-try timeout and asks
	// wouldRetryFromReset).
	RetryOnReset
)

var retryOnNames = [...]string{"5xx", "gateway-error", "connect-failure", "reset"}

func (r RetryOn) String() string {
	var parts []string
	for i, n := range retryOnNames {
		if r&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, ",")
}

// ParseRetryOn reads Envoy's comma-separated retry_on list (the subset the
// simulator models). An empty string is the empty set.
func ParseRetryOn(s string) (RetryOn, error) {
	var r RetryOn
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		found := false
		for i, n := range retryOnNames {
			if n == part {
				r |= 1 << i
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("%q is not one of %s", part, strings.Join(retryOnNames[:], ","))
		}
	}
	return r, nil
}

// RetryPolicy is the route's retry_policy plus the cluster's retry circuit
// breaker or retry budget (envoy-semantics.md §12).
type RetryPolicy struct {
	NumRetries uint32
	RetryOn    RetryOn
	// PerTryTimeout bounds each attempt (0: none).
	PerTryTimeout time.Duration
	// RouteTimeout bounds the whole request, retries and backoff included
	// (Envoy's route default is 15 s; 0: none).
	RouteTimeout time.Duration
	// PreviousHosts enables envoy.retry_host_predicates.previous_hosts.
	PreviousHosts bool
	// HostSelectionRetryMaxAttempts is host_selection_retry_max_attempts
	// (Envoy's default 1: two picks per retry).
	HostSelectionRetryMaxAttempts uint32
	// Budget enables retry_budget; without it the max_retries circuit
	// breaker caps the cluster's concurrent retries.
	Budget              bool
	BudgetPercent       float64
	MinRetryConcurrency uint32
	MaxRetries          uint32
	// BackoffBase is the base retry interval (Envoy: 25 ms); the n-th retry
	// waits random % (base·2^(n-1)) ms, capped at BackoffMax (10·base).
	BackoffBase time.Duration
	BackoffMax  time.Duration
}

// HealthCheck is an active HTTP health checker on the cluster.
type HealthCheck struct {
	Enabled            bool
	Interval           time.Duration
	UnhealthyThreshold uint32
	HealthyThreshold   uint32
}

// DefaultCluster is a six-host cluster at 600 requests/s with Envoy's
// defaults where Envoy has them: round robin, panic threshold 50, no
// retries, a 15 s route timeout, the max_retries breaker of 3, a 25 ms retry
// backoff base, no active health checks.
func DefaultCluster() Cluster {
	return Cluster{
		Hosts:                 6,
		RPS:                   600,
		Duration:              300 * time.Second,
		LB:                    RoundRobin,
		HealthyPanicThreshold: 50,
		Latency:               Latency{Base: 5 * time.Millisecond, Jitter: 5 * time.Millisecond, TailShare: 0.01, Tail: 100 * time.Millisecond},
		QueueLimit:            time.Second,
		Retry: RetryPolicy{
			RetryOn:                       RetryOn5xx,
			RouteTimeout:                  15 * time.Second,
			HostSelectionRetryMaxAttempts: 1,
			BudgetPercent:                 20,
			MinRetryConcurrency:           3,
			MaxRetries:                    3,
			BackoffBase:                   25 * time.Millisecond,
			BackoffMax:                    250 * time.Millisecond,
		},
		HealthCheck: HealthCheck{Interval: 5 * time.Second, UnhealthyThreshold: 3, HealthyThreshold: 2},
	}
}

// Validate checks the cluster; errors name the setting and its range.
func (c *Cluster) Validate() error {
	switch {
	case c.Hosts < 1 || c.Hosts > 200:
		return fmt.Errorf("hosts: %d is out of range 1–200", c.Hosts)
	case !(c.RPS > 0) || c.RPS > 1e6:
		return fmt.Errorf("rps: %g is out of range (0, 1000000]", c.RPS)
	case c.Duration <= 0:
		return fmt.Errorf("duration: %v must be positive", c.Duration)
	case c.HealthyPanicThreshold > 100:
		return fmt.Errorf("panic_threshold: %d is out of range 0–100", c.HealthyPanicThreshold)
	case int(c.LB) >= len(lbNames):
		return fmt.Errorf("lb: unknown policy %d", c.LB)
	case c.CapacityRPS < 0:
		return fmt.Errorf("capacity_rps: %g must not be negative", c.CapacityRPS)
	case c.Retry.NumRetries > maxRetriesPerRequest:
		return fmt.Errorf("retries: %d is out of range 0–%d", c.Retry.NumRetries, maxRetriesPerRequest)
	case c.Retry.BudgetPercent < 0 || c.Retry.BudgetPercent > 100:
		return fmt.Errorf("retry_budget_percent: %g is out of range 0–100", c.Retry.BudgetPercent)
	case c.Retry.BackoffBase <= 0 || c.Retry.BackoffMax < c.Retry.BackoffBase:
		return fmt.Errorf("retry backoff: base %v must be positive and at most max %v", c.Retry.BackoffBase, c.Retry.BackoffMax)
	case c.HealthCheck.Enabled && c.HealthCheck.Interval <= 0:
		return fmt.Errorf("hc_interval: %v must be positive", c.HealthCheck.Interval)
	case c.HealthCheck.Enabled && (c.HealthCheck.UnhealthyThreshold == 0 || c.HealthCheck.HealthyThreshold == 0):
		return fmt.Errorf("health check thresholds must be at least 1")
	case c.FailoverHosts < 0 || c.FailoverHosts > 199:
		return fmt.Errorf("failover_hosts: %d is out of range 0–199", c.FailoverHosts)
	case c.Clients < 0 || c.Clients > MaxClients:
		return fmt.Errorf("clients: %d is out of range 1–%d", c.Clients, MaxClients)
	case c.ClientSkew != 0 && !(c.ClientSkew >= 1 && c.ClientSkew <= MaxClientSkew):
		return fmt.Errorf("client_skew: %g is out of range 1–%d", c.ClientSkew, MaxClientSkew)
	}
	for i, f := range c.Faults {
		if f.Share < 0 || f.Share > 1 {
			return fmt.Errorf("fault %d (%s): share %g is out of range 0–1", i, f.Label, f.Share)
		}
		if f.Until != 0 && f.Until <= f.From {
			return fmt.Errorf("fault %d (%s): window [%v, %v) is empty", i, f.Label, f.From, f.Until)
		}
		if f.CapacityRPS < 0 || f.AddedLatency < 0 || f.From < 0 {
			return fmt.Errorf("fault %d (%s): negative value", i, f.Label)
		}
	}
	return nil
}

// Clone returns a copy that shares no slices with c.
func (c Cluster) Clone() Cluster {
	c.Faults = append([]Fault(nil), c.Faults...)
	for i := range c.Faults {
		c.Faults[i].Hosts = append([]int(nil), c.Faults[i].Hosts...)
	}
	return c
}
