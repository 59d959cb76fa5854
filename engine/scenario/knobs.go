package scenario

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/sim"
)

// KnobKind is the type of a knob's value.
type KnobKind string

const (
	KnobInt      KnobKind = "int"
	KnobFloat    KnobKind = "float"
	KnobDuration KnobKind = "duration" // Go/Envoy style: "30s", "1.5s", "250ms"; Min and Max in seconds
	KnobBool     KnobKind = "bool"
	KnobEnum     KnobKind = "enum" // one of Choices
	KnobList     KnobKind = "list" // comma-separated subset of Choices
	// KnobEvents is a comma-separated list of HOST@TIME user events (the
	// inject knob); hosts and times are checked against the cluster.
	KnobEvents KnobKind = "events"
)

// Knob describes one scenario setting: the simulated cluster, route and
// traffic, which the outlierlab settings catalog (engine/settings) offers
// beside Envoy's outlier_detection fields to the CLI, lessons and the lab.
// Default is the lab's default; a preset may start elsewhere (KnobValue
// reads a scenario's current value).
type Knob struct {
	Name string   `json:"name"`
	Kind KnobKind `json:"kind"`
	Min  float64  `json:"min"`
	Max  float64  `json:"max"`
	Step float64  `json:"step,omitempty"`
	// Default and every value are written as the knob reads them.
	Default string `json:"default"`
	Unit    string `json:"unit,omitempty"`
	Help    string `json:"help"`
	// Choices are an enum's values, or a list's members.
	Choices []string `json:"choices,omitempty"`
	// Menu is what a menu offers for a list knob, whose subsets are too
	// many to offer them all: the combinations people use. Empty: Choices.
	Menu []string `json:"menu,omitempty"`
	// Envoy is where the setting lives in Envoy's cluster or route config,
	// when it is one ("common_lb_config.healthy_panic_threshold"); empty
	// for what only the simulation has (hosts, faults).
	Envoy string `json:"envoy,omitempty"`
	// Alias is the Envoy field's own name when the knob is named
	// otherwise (healthy_panic_threshold for panic_threshold): the
	// settings catalog accepts either.
	Alias string `json:"alias,omitempty"`
}

// Allowed says in words what the knob accepts.
func (k Knob) Allowed() string {
	switch k.Kind {
	case KnobBool:
		return "true or false"
	case KnobEnum:
		return strings.Join(k.Choices, "|")
	case KnobList:
		return "a comma-separated list of " + strings.Join(k.Choices, ",")
	case KnobEvents:
		return fmt.Sprintf("a comma-separated list of HOST@TIME such as h3@60s, hosts h0…h(N-1), times 0s…duration, one entry per host, at most %d", MaxInjections)
	case KnobDuration:
		return fmt.Sprintf("%ss–%ss", num(k.Min), num(k.Max))
	}
	return strings.TrimSpace(fmt.Sprintf("%s–%s %s", num(k.Min), num(k.Max), k.Unit))
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

type knobDef struct {
	Knob
	get func(*Scenario) string
	set func(*Scenario, string) error // receives a value already checked against the range
}

var knobDefs = []knobDef{
	{Knob{Name: "hosts", Kind: KnobInt, Min: 1, Max: 200, Step: 1, Default: "6", Unit: "hosts",
		Help: "Upstream hosts in the cluster, h0…h(N-1)."},
		func(s *Scenario) string { return strconv.Itoa(s.Cluster.Hosts) },
		func(s *Scenario, v string) error { s.Cluster.Hosts = atoi(v); return nil }},
	{Knob{Name: "rps", Kind: KnobFloat, Min: 1, Max: 100000, Step: 1, Default: "600", Unit: "req/s",
		Help: "Mean downstream request rate (Poisson arrivals)."},
		func(s *Scenario) string { return num(s.Cluster.RPS) },
		func(s *Scenario, v string) error { s.Cluster.RPS = atof(v); return nil }},
	{Knob{Name: "duration", Kind: KnobDuration, Min: 10, Max: 3600, Step: 10, Default: "300s", Unit: "s",
		Help: "Length of the run; it ends at the last detector tick within it."},
		func(s *Scenario) string { return dur(s.Cluster.Duration) },
		func(s *Scenario, v string) error { s.Cluster.Duration = pdur(v); return nil }},
	{Knob{Name: "panic_threshold", Kind: KnobInt, Min: 0, Max: 100, Step: 1, Default: "50", Unit: "%",
		Envoy: "common_lb_config.healthy_panic_threshold", Alias: "healthy_panic_threshold",
		Help: "common_lb_config.healthy_panic_threshold: below this share of healthy hosts the LB uses every host, ejected ones included. 0 disables panic."},
		func(s *Scenario) string { return strconv.Itoa(int(s.Cluster.HealthyPanicThreshold)) },
		func(s *Scenario, v string) error { s.Cluster.HealthyPanicThreshold = uint32(atoi(v)); return nil }},
	{Knob{Name: "lb", Kind: KnobEnum, Default: "round_robin", Choices: []string{"round_robin", "least_request", "random"},
		Envoy: "lb_policy", Alias: "lb_policy",
		Help: "lb_policy: round robin, least request (power of two choices) or random."},
		func(s *Scenario) string { return s.Cluster.LB.String() },
		func(s *Scenario, v string) (err error) { s.Cluster.LB, err = sim.ParseLBPolicy(v); return }},
	{Knob{Name: "retries", Kind: KnobInt, Min: 0, Max: 10, Step: 1, Default: "0", Unit: "per request",
		Envoy: "retry_policy.num_retries", Alias: "num_retries",
		Help: "retry_policy.num_retries. 0: the route has no retry policy."},
		func(s *Scenario) string { return strconv.Itoa(int(s.Cluster.Retry.NumRetries)) },
		func(s *Scenario, v string) error { s.Cluster.Retry.NumRetries = uint32(atoi(v)); return nil }},
	{Knob{Name: "retry_on", Kind: KnobList, Default: "5xx", Choices: []string{"5xx", "gateway-error", "connect-failure", "reset"},
		Menu:  []string{"5xx", "gateway-error", "connect-failure", "reset", "connect-failure,reset", "5xx,connect-failure,reset"},
		Envoy: "retry_policy.retry_on",
		Help:  "retry_policy.retry_on: which failures are retried."},
		func(s *Scenario) string { return s.Cluster.Retry.RetryOn.String() },
		func(s *Scenario, v string) (err error) { s.Cluster.Retry.RetryOn, err = sim.ParseRetryOn(v); return }},
	{Knob{Name: "retry_budget_percent", Kind: KnobFloat, Min: 0, Max: 100, Step: 1, Default: "0", Unit: "%",
		Envoy: "circuit_breakers.thresholds.retry_budget.budget_percent",
		Help:  "retry_budget.budget_percent: retries allowed as a share of active requests (at least min_retry_concurrency). 0: no budget, the max_retries circuit breaker applies."},
		func(s *Scenario) string {
			if !s.Cluster.Retry.Budget {
				return "0"
			}
			return num(s.Cluster.Retry.BudgetPercent)
		},
		func(s *Scenario, v string) error {
			p := atof(v)
			s.Cluster.Retry.Budget, s.Cluster.Retry.BudgetPercent = p > 0, p
			if p == 0 {
				s.Cluster.Retry.BudgetPercent = 20
			}
			return nil
		}},
	{Knob{Name: "min_retry_concurrency", Kind: KnobInt, Min: 0, Max: 1000, Step: 1, Default: "3", Unit: "retries",
		Envoy: "circuit_breakers.thresholds.retry_budget.min_retry_concurrency",
		Help:  "retry_budget.min_retry_concurrency: retries always allowed, whatever the budget percent says."},
		func(s *Scenario) string { return strconv.Itoa(int(s.Cluster.Retry.MinRetryConcurrency)) },
		func(s *Scenario, v string) error { s.Cluster.Retry.MinRetryConcurrency = uint32(atoi(v)); return nil }},
	{Knob{Name: "max_retries", Kind: KnobInt, Min: 0, Max: 4294967295, Step: 1, Default: "3", Unit: "retries",
		Envoy: "circuit_breakers.thresholds.max_retries",
		Help:  "circuit_breakers.thresholds.max_retries: concurrent retries allowed in the cluster when there is no retry budget (Envoy's default 3; Istio sets 4294967295). A retry past it is not sent and counts in upstream_rq_retry_overflow."},
		func(s *Scenario) string { return strconv.Itoa(int(s.Cluster.Retry.MaxRetries)) },
		func(s *Scenario, v string) error { s.Cluster.Retry.MaxRetries = uint32(atoi(v)); return nil }},
	{Knob{Name: "previous_hosts", Kind: KnobBool, Default: "false", Envoy: "retry_policy.retry_host_predicate",
		Help: "envoy.retry_host_predicates.previous_hosts: a retry avoids hosts already tried (two picks, the last one wins)."},
		func(s *Scenario) string { return strconv.FormatBool(s.Cluster.Retry.PreviousHosts) },
		func(s *Scenario, v string) error { s.Cluster.Retry.PreviousHosts = v == "true"; return nil }},
	{Knob{Name: "per_try_timeout", Kind: KnobDuration, Min: 0, Max: 60, Step: 0.05, Default: "0s", Unit: "s",
		Envoy: "retry_policy.per_try_timeout",
		Help:  "retry_policy.per_try_timeout: a slower attempt becomes a local-origin timeout (504). 0: none."},
		func(s *Scenario) string { return dur(s.Cluster.Retry.PerTryTimeout) },
		func(s *Scenario, v string) error { s.Cluster.Retry.PerTryTimeout = pdur(v); return nil }},
	{Knob{Name: "route_timeout", Kind: KnobDuration, Min: 0, Max: 300, Step: 0.5, Default: "15s", Unit: "s", Envoy: "route.timeout",
		Help: "The route's timeout for the whole request, retries included (Envoy's default 15s). 0: none."},
		func(s *Scenario) string { return dur(s.Cluster.Retry.RouteTimeout) },
		func(s *Scenario, v string) error { s.Cluster.Retry.RouteTimeout = pdur(v); return nil }},
	{Knob{Name: "latency", Kind: KnobDuration, Min: 0, Max: 10, Step: 0.001, Default: "5ms", Unit: "s",
		Help: "Every host's base response time (an exponential jitter and a 1% tail come on top)."},
		func(s *Scenario) string { return dur(s.Cluster.Latency.Base) },
		func(s *Scenario, v string) error { s.Cluster.Latency.Base = pdur(v); return nil }},
	{Knob{Name: "capacity_rps", Kind: KnobFloat, Min: 0, Max: 100000, Step: 1, Default: "0", Unit: "req/s",
		Help: "What one host serves per second; above it requests queue, and are shed with 503 past a 1 s wait. 0: unlimited."},
		func(s *Scenario) string { return num(s.Cluster.CapacityRPS) },
		func(s *Scenario, v string) error { s.Cluster.CapacityRPS = atof(v); return nil }},
	{Knob{Name: "fault_rate", Kind: KnobFloat, Min: 0, Max: 1, Step: 0.01, Default: "0.333",
		Help: "The faulty hosts' failure share, as a fraction: 0.333 is one request in three (the scenario's primary fault)."},
		primaryGet(func(f *sim.Fault) string { return num(f.Share) }),
		primarySet(func(f *sim.Fault, v string) error { f.Share = atof(v); return nil })},
	{Knob{Name: "fault_kind", Kind: KnobEnum, Default: "503", Choices: sim.FailureKindNames(),
		Help: "How the primary fault's requests fail: an HTTP status, a refused connection, a reset or a hang (timeout); or degraded: a 200 with x-envoy-degraded, which marks the host degraded under detect_degraded_hosts."},
		primaryGet(func(f *sim.Fault) string { return f.Kind.String() }),
		primarySet(func(f *sim.Fault, v string) (err error) { f.Kind, err = sim.ParseFailureKind(v); return })},
	{Knob{Name: "fault_pattern", Kind: KnobEnum, Default: "interleaved", Choices: []string{"interleaved", "random"},
		Help: "interleaved: failures evenly spaced (one in three means every third request); random: each request fails independently."},
		primaryGet(func(f *sim.Fault) string { return f.Pattern.String() }),
		primarySet(func(f *sim.Fault, v string) (err error) { f.Pattern, err = sim.ParsePattern(v); return })},
	{Knob{Name: "fault_start", Kind: KnobDuration, Min: 0, Max: 3600, Step: 1, Default: "30s", Unit: "s",
		Help: "When the primary fault starts (its length is kept; a fault of several windows, as flapping's, moves as a whole)."},
		primaryGet(func(f *sim.Fault) string { return dur(f.From) }),
		setFaultStart},
	{Knob{Name: faultHostKnob, Kind: KnobInt, Min: 0, Max: 199, Step: 1, Default: "5", Unit: "host",
		Help: "Which host the primary fault hits, by number: 2 is h2 (0…hosts−1, checked against the cluster's final size). Set on a fault of several hosts, it moves the whole fault to that one host."},
		faultHostGet, faultHostSet},
	{Knob{Name: "fault_duration", Kind: KnobDuration, Min: 0, Max: 3600, Step: 1, Default: "0s", Unit: "s",
		Help: "How long the primary fault lasts. 0: to the end of the run."},
		primaryGet(func(f *sim.Fault) string {
			if f.Until == 0 {
				return "0s"
			}
			return dur(f.Until - f.From)
		}),
		primarySet(func(f *sim.Fault, v string) error {
			if d := pdur(v); d == 0 {
				f.Until = 0
			} else {
				f.Until = f.From + d
			}
			return nil
		})},
	{Knob{Name: "hc_shares_fault", Kind: KnobBool, Default: "false",
		Help: "Whether the health endpoint shares the primary fault (active checks then fail too)."},
		primaryGet(func(f *sim.Fault) string { return strconv.FormatBool(f.HealthCheckFails) }),
		primarySet(func(f *sim.Fault, v string) error { f.HealthCheckFails = v == "true"; return nil })},
	{Knob{Name: injectKnob, Kind: KnobEvents, Default: "",
		Help: "Live faults: h3@60s makes h3 fail from 60 s to the end of the run the way the scenario's own fault does (fault_rate, fault_kind, fault_pattern, hc_shares_fault as set now; with no fault in the scenario: 1 in 3, 503, interleaved). Empty: none."},
		func(s *Scenario) string { return FormatInjections(s.Injections) },
		setInjections},
	{Knob{Name: "active_hc", Kind: KnobBool, Default: "false", Envoy: "health_checks",
		Help: "An active HTTP health checker on the cluster; with successful_active_health_check_uneject_host a passing check unejects at once."},
		func(s *Scenario) string { return strconv.FormatBool(s.Cluster.HealthCheck.Enabled) },
		func(s *Scenario, v string) error { s.Cluster.HealthCheck.Enabled = v == "true"; return nil }},
	{Knob{Name: "hc_interval", Kind: KnobDuration, Min: 0.1, Max: 60, Step: 0.1, Default: "5s", Unit: "s", Envoy: "health_checks.interval",
		Help: "Active health check interval."},
		func(s *Scenario) string { return dur(s.Cluster.HealthCheck.Interval) },
		func(s *Scenario, v string) error { s.Cluster.HealthCheck.Interval = pdur(v); return nil }},
	{Knob{Name: "hc_unhealthy_threshold", Kind: KnobInt, Min: 1, Max: 10, Step: 1, Default: "3", Unit: "checks",
		Envoy: "health_checks.unhealthy_threshold",
		Help:  "Failed checks in a row that mark a host FAILED_ACTIVE_HC when they fail at the network level (refused, reset, timed out); a check answered with an HTTP error marks it at once."},
		func(s *Scenario) string { return strconv.Itoa(int(s.Cluster.HealthCheck.UnhealthyThreshold)) },
		func(s *Scenario, v string) error {
			s.Cluster.HealthCheck.UnhealthyThreshold = uint32(atoi(v))
			return nil
		}},
	{Knob{Name: "hc_healthy_threshold", Kind: KnobInt, Min: 1, Max: 10, Step: 1, Default: "2", Unit: "checks",
		Envoy: "health_checks.healthy_threshold",
		Help:  "Passed checks in a row that clear FAILED_ACTIVE_HC."},
		func(s *Scenario) string { return strconv.Itoa(int(s.Cluster.HealthCheck.HealthyThreshold)) },
		func(s *Scenario, v string) error {
			s.Cluster.HealthCheck.HealthyThreshold = uint32(atoi(v))
			return nil
		}},
	{Knob{Name: "dialect", Kind: KnobEnum, Default: "envoy", Choices: engine.DialectNames(),
		Help: "Whose detector reads the outlier_detection block: envoy, or grpc (gRFC A50 as grpc-go runs it: the cap counts only hosts already ejected, no consecutive detectors, no panic routing)."},
		func(s *Scenario) string { return s.Cluster.Dialect.String() },
		func(s *Scenario, v string) (err error) { s.Cluster.Dialect, err = engine.ParseDialect(v); return }},
	{Knob{Name: "failover_hosts", Kind: KnobInt, Min: 0, Max: 199, Step: 1, Default: "0", Unit: "hosts",
		Envoy: "load_assignment.endpoints.priority",
		Help:  "Hosts in priority 1, the failover level (the last ones; at most all but one): P0 takes the load while ~71% of its hosts are healthy (overprovisioning 1.4), then spills to P1; ejected hosts count as unhealthy, and the ejection cap counts the whole cluster, not each level. 0: one priority."},
		func(s *Scenario) string { return strconv.Itoa(s.Cluster.FailoverHosts) },
		func(s *Scenario, v string) error { s.Cluster.FailoverHosts = atoi(v); return nil }},
	{Knob{Name: "clients", Kind: KnobInt, Min: 1, Max: sim.MaxClients, Step: 1, Default: "1", Unit: "clients",
		Help: "Client proxies sharing the traffic (a mesh: a sidecar per pod, or proxyless gRPC clients), each with its own load balancer and its own outlier detector over the same hosts and config. 1: one proxy in front of the fleet."},
		func(s *Scenario) string { return strconv.Itoa(s.Cluster.ClientCount()) },
		func(s *Scenario, v string) error {
			// One client is the zero value, as every preset writes it.
			if s.Cluster.Clients = atoi(v); s.Cluster.Clients == 1 {
				s.Cluster.Clients = 0
			}
			return nil
		}},
	{Knob{Name: "client_skew", Kind: KnobFloat, Min: 1, Max: sim.MaxClientSkew, Step: 1, Default: "1", Unit: "×",
		Help: "The first client's traffic as a multiple of each other client's: 1 is even, 10 one hot client (with one client it changes nothing)."},
		func(s *Scenario) string { return num(max(1, s.Cluster.ClientSkew)) },
		func(s *Scenario, v string) error {
			if s.Cluster.ClientSkew = atof(v); s.Cluster.ClientSkew == 1 {
				s.Cluster.ClientSkew = 0 // even is the zero value
			}
			return nil
		}},
}

func primaryGet(get func(*sim.Fault) string) func(*Scenario) string {
	return func(s *Scenario) string {
		for i := range s.Cluster.Faults {
			if s.Cluster.Faults[i].Primary {
				return get(&s.Cluster.Faults[i])
			}
		}
		return ""
	}
}

func primarySet(set func(*sim.Fault, string) error) func(*Scenario, string) error {
	return func(s *Scenario, v string) error {
		found := false
		for i := range s.Cluster.Faults {
			if s.Cluster.Faults[i].Primary {
				found = true
				if err := set(&s.Cluster.Faults[i], v); err != nil {
					return err
				}
			}
		}
		if !found {
			return fmt.Errorf("scenario %q has no primary fault to tune", s.Name)
		}
		return nil
	}
}

// setFaultStart moves the primary fault to start at v: every window of it
// by the same amount, so a fault of several windows keeps its rhythm.
func setFaultStart(s *Scenario, v string) error {
	first := slices.IndexFunc(s.Cluster.Faults, func(f sim.Fault) bool { return f.Primary })
	if first < 0 {
		return fmt.Errorf("scenario %q has no primary fault to tune", s.Name)
	}
	shift := pdur(v) - s.Cluster.Faults[first].From
	return primarySet(func(f *sim.Fault, _ string) error {
		f.From += shift
		if f.Until > 0 {
			f.Until += shift
		}
		return nil
	})(s, v)
}

// faultHostKnob names the primary fault's host; it is set after every
// knob but inject, so it is checked against the cluster's final size.
const faultHostKnob = "fault_host"

// faultHostGet is the primary fault's host when it hits one host (a
// preset's -1, the last host, read at the cluster's size), else "": a
// fault of several hosts has no one host to name.
func faultHostGet(s *Scenario) string {
	return primaryGet(func(f *sim.Fault) string {
		if f.AllHosts || f.HostShare > 0 || len(f.Hosts) != 1 || s.Cluster.Hosts < 1 {
			return ""
		}
		n := s.Cluster.Hosts
		return strconv.Itoa((f.Hosts[0]%n + n) % n)
	})(s)
}

// faultHostSet puts every window of the primary fault on host v. A host
// past the cluster's is refused here, naming the range: the fault's
// indexes otherwise wrap round the cluster (sim.Fault.AppliesTo), which
// would put the fault on another host than the one asked for.
func faultHostSet(s *Scenario, v string) error {
	h := atoi(v)
	if h >= s.Cluster.Hosts {
		return fmt.Errorf("%d is out of range (allowed 0–%d: the cluster's hosts h0…h%d)", h, s.Cluster.Hosts-1, s.Cluster.Hosts-1)
	}
	if faultHostGet(s) == v {
		// Already there: a preset's "last host" stays written as it is,
		// so laying a scenario's own values over it changes nothing.
		return nil
	}
	return primarySet(func(f *sim.Fault, _ string) error {
		f.AllHosts, f.HostShare, f.Hosts = false, 0, []int{h}
		return nil
	})(s, v)
}

// Knobs lists every scenario knob, in display order.
func Knobs() []Knob {
	out := make([]Knob, len(knobDefs))
	for i, d := range knobDefs {
		out[i] = d.Knob
		out[i].Choices = slices.Clone(d.Choices)
	}
	return out
}

// IsKnob reports whether name is a scenario knob.
func IsKnob(name string) bool { return findKnob(name) != nil }

func findKnob(name string) *knobDef {
	for i := range knobDefs {
		if knobDefs[i].Name == name {
			return &knobDefs[i]
		}
	}
	return nil
}

// KnobValue is the scenario's current value of a knob, in the form
// ApplyKnobs accepts ("" for a fault knob when the scenario has no primary
// fault, or an unknown knob).
func KnobValue(sc Scenario, name string) string {
	if d := findKnob(name); d != nil {
		return d.get(&sc)
	}
	return ""
}

// ApplyKnobs returns sc with the knobs set; sc itself is not changed.
// Errors name the knob and what it accepts, e.g.
//
//	hosts: 500 is out of range (allowed 1–200 hosts)
//
// Every value is checked before any is set, and every bad one is reported
// (errors.Join).
func ApplyKnobs(sc Scenario, knobs map[string]string) (Scenario, error) {
	sc = sc.Clone()
	names := make([]string, 0, len(knobs))
	for n := range knobs {
		names = append(names, n)
	}
	// inject goes last, whatever its name: it checks its hosts and times
	// against the cluster's final size and length and copies its final
	// fault.
	// fault_host goes just before it, checking its host against the
	// cluster's final size.
	late := func(n string) int {
		switch n {
		case injectKnob:
			return 2
		case faultHostKnob:
			return 1
		}
		return 0
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := late(a) - late(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	norm := make([]string, len(names))
	var errs []error
	for i, name := range names {
		d := findKnob(name)
		if d == nil {
			errs = append(errs, fmt.Errorf("%s: unknown scenario knob (knobs: %s)", name, strings.Join(knobNames(), ", ")))
			continue
		}
		var err error
		if norm[i], err = d.check(strings.TrimSpace(knobs[name])); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return sc, errors.Join(errs...)
	}
	for i, name := range names {
		d := findKnob(name)
		if err := d.set(&sc, norm[i]); err != nil {
			if d.Kind == KnobEvents {
				return sc, err // already names the knob and the entry
			}
			return sc, fmt.Errorf("%s: %v", name, err)
		}
	}
	if err := sc.Cluster.Validate(); err != nil {
		return sc, err
	}
	return sc, nil
}

func knobNames() []string {
	out := make([]string, len(knobDefs))
	for i, d := range knobDefs {
		out[i] = d.Name
	}
	return out
}

// check parses v for the knob's kind and range and returns it normalised.
func (d *knobDef) check(v string) (string, error) {
	bad := func(reason string) error {
		shown := v
		if shown == "" || strings.ContainsAny(shown, " \t\"") {
			shown = strconv.Quote(v)
		}
		return fmt.Errorf("%s: %s %s (allowed %s)", d.Name, shown, reason, d.Allowed())
	}
	switch d.Kind {
	case KnobInt:
		n, err := strconv.Atoi(v)
		if err != nil {
			return "", bad("is not a whole number")
		}
		if float64(n) < d.Min || float64(n) > d.Max {
			return "", bad("is out of range")
		}
		return strconv.Itoa(n), nil
	case KnobFloat:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			return "", bad("is not a number")
		}
		if f < d.Min || f > d.Max {
			return "", bad("is out of range")
		}
		return num(f), nil
	case KnobDuration:
		t, err := time.ParseDuration(v)
		if err != nil {
			return "", bad("is not a duration like 30s or 250ms")
		}
		if s := t.Seconds(); s < d.Min || s > d.Max {
			return "", bad("is out of range")
		}
		return t.String(), nil
	case KnobBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", bad("is not a boolean")
		}
		return strconv.FormatBool(b), nil
	case KnobEnum:
		if !slices.Contains(d.Choices, v) {
			return "", bad("is not allowed")
		}
		return v, nil
	case KnobList:
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && !slices.Contains(d.Choices, p) {
				return "", bad("is not allowed")
			}
		}
		return v, nil
	case KnobEvents:
		ins, err := ParseInjections(v)
		if err != nil {
			return "", err
		}
		return FormatInjections(ins), nil
	}
	return v, nil
}

func atoi(s string) int           { n, _ := strconv.Atoi(s); return n }
func atof(s string) float64       { f, _ := strconv.ParseFloat(s, 64); return f }
func pdur(s string) time.Duration { d, _ := time.ParseDuration(s); return d }

// dur formats a duration the way the knobs read it ("30s", "250ms", "1.5s").
func dur(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Second && d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return num(d.Seconds()) + "s"
}
