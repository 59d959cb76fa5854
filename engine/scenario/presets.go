package scenario

import (
	"time"

	"outlierlab/engine"
	"outlierlab/engine/sim"
)

// Preset is a named scenario from the source articles (design.md, "Scenario
// presets"). Use Scenario() to get a copy to change.
type Preset Scenario

// Scenario returns a copy of the preset that shares nothing with it.
func (p Preset) Scenario() Scenario { return Scenario(p).Clone() }

// SearchCache is the article's opening example: six hosts behind Envoy at
// 600 requests/s; at 30 s h5 loses its cache and fails one request in
// three (evenly interleaved, HTTP 503, so consecutive_5xx never fires);
// its health endpoint keeps passing. With defaults success rate detects h5
// at every tick and the 10% cap refuses it (overflow); with
// max_ejection_percent 34 it is ejected at 40 s for 30, 60, then 90 s.
var SearchCache = Preset{
	Name:        "search-cache",
	Description: "six hosts, one loses its cache at 30 s and fails every third request (evenly spaced, as in the article); the 10% cap refuses the ejection",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 6, 600, 300*time.Second
		c.Faults = []sim.Fault{{
			Label: "cache lost", Hosts: []int{-1}, From: 30 * time.Second,
			Share: 1.0 / 3, Pattern: sim.Interleaved, Kind: sim.HTTP503, Primary: true,
		}}
	}),
	Outlier: engine.DefaultConfig(),
}

// DeadHost is the preset where a host dies outright (connections refused) at 20 s among ten;
// consecutive_5xx ejects it at its fifth failure in a row (five failed
// requests, or up to ten when a request it accepted before 20 s succeeds
// mid-streak and resets the count), and again, for longer, each time it
// returns.
var DeadHost = Preset{
	Name:        "dead-host",
	Description: "one of ten hosts dies at 20 s (every connection refused); consecutive_5xx ejects it at its fifth failure in a row, for longer each time it returns",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 10, 500, 300*time.Second
		c.Faults = []sim.Fault{{
			Label: "host down", Hosts: []int{3}, From: 20 * time.Second,
			Share: 1, Kind: sim.ConnectFailure, HealthCheckFails: true, Primary: true,
		}}
	}),
	Outlier: engine.DefaultConfig(),
}

// SharedDependency is the preset where every host loses a shared dependency for two minutes
// and fails one request in three, each request independently (a real
// outage is not evenly spaced). Nobody is an outlier, but at about 1000
// requests per host and interval the success rates scatter by a point or
// two, so success rate flags whichever host is noisiest now and then; the
// default cap refuses every flag on six hosts, a generous one does not.
var SharedDependency = Preset{
	Name:        "shared-dependency",
	Description: "every host fails a third of its requests at random for two minutes; nobody is an outlier, yet noise flags hosts and only the cap keeps them in",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 6, 600, 240*time.Second
		c.Faults = []sim.Fault{{
			Label: "dependency outage", AllHosts: true, From: 30 * time.Second, Until: 150 * time.Second,
			Share: 1.0 / 3, Pattern: sim.Bernoulli, Kind: sim.HTTP503, Primary: true,
		}}
	}),
	Outlier: engine.DefaultConfig(),
}

// TwoBadHosts is the preset where two of five hosts at 80% mask each other (seeds/000): the
// mean drops to 91.9, the deviation rises to 9.75, the threshold falls to
// 73.4 and neither is ejected, although the cap would allow both.
var TwoBadHosts = Preset{
	Name:        "two-bad-hosts",
	Description: "two of five hosts fail every fifth request (evenly spaced, the article's arithmetic) and mask each other: the success-rate threshold falls below them",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 5, 600, 180*time.Second
		c.Faults = []sim.Fault{
			{Label: "bad hosts", Hosts: []int{-2, -1}, From: 30 * time.Second,
				Share: 0.2, Pattern: sim.Interleaved, Kind: sim.HTTP503, Primary: true},
			{Label: "background errors", AllHosts: true, Share: 0.001, Pattern: sim.Interleaved, Kind: sim.HTTP500},
		}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 40 }),
}

// Burst is the preset where a ten-second dependency blip makes every host fail 30% of its
// requests at random. With a generous cap (80%) consecutive_5xx ejects
// most of the pool one host after another; the survivors take the load
// beyond their capacity (1.3× their share) and queue; once fewer than half
// are healthy the LB panics and sends traffic to the ejected hosts again.
var Burst = Preset{
	Name:        "burst",
	Description: "ten seconds of cluster-wide 5xx at random (30% of requests) with an 80% cap eject most of the pool; survivors saturate; panic",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 10, 1000, 180*time.Second
		c.CapacityRPS = 130
		c.Faults = []sim.Fault{{
			Label: "dependency blip", AllHosts: true, From: 30 * time.Second, Until: 40 * time.Second,
			Share: 0.3, Pattern: sim.Bernoulli, Kind: sim.HTTP503, Primary: true,
		}}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 80 }),
}

// AppErrors is the preset where one endpoint, three requests in ten, returns 500 on every host
// (seeds/003). At 8 requests/s per host success rate never has volume, and
// consecutive_5xx ejects healthy hosts in turn; counting gateway failures
// only (consecutive_5xx 0, enforcing_consecutive_gateway_failure 100)
// ignores the 500s.
var AppErrors = Preset{
	Name:        "app-errors",
	Description: "a buggy endpoint returns 500 on every host for 30% of requests, at random, at 80 requests a second across ten hosts",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 10, 80, 300*time.Second
		c.Faults = []sim.Fault{{
			Label: "buggy endpoint", AllHosts: true, From: 30 * time.Second,
			Share: 0.3, Pattern: sim.Bernoulli, Kind: sim.HTTP500, Primary: true,
		}}
	}),
	Outlier: engine.DefaultConfig(),
}

// ActiveHCUndo is search-cache with max_ejection_percent 34 and an active
// health check whose endpoint skips the cache: every ejection is undone at
// the next passing check (successful_active_health_check_uneject_host).
var ActiveHCUndo = Preset{
	Name:        "active-hc-undo",
	Description: "search-cache (every third request fails, evenly spaced) with active health checks that skip the cache: every ejection is undone within one check interval",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 6, 600, 300*time.Second
		c.HealthCheck.Enabled = true
		c.Faults = []sim.Fault{{
			Label: "cache lost", Hosts: []int{-1}, From: 30 * time.Second,
			Share: 1.0 / 3, Pattern: sim.Interleaved, Kind: sim.HTTP503, Primary: true,
		}}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 34 }),
}

// BadDeploy is the interview question (seeds/004): half of ten hosts fail
// 40% at random after a deploy, three retries on any 5xx, a 50% cap, no
// health checks. Envoy's default max_retries circuit breaker (3 concurrent
// retries per cluster, circuit_breaker.proto) bounds the retries; lifting it
// (max_retries=4294967295, as Istio's generated clusters do) lets them
// amplify the load. consecutive_5xx ejects up to the cap.
var BadDeploy = Preset{
	Name:        "bad-deploy",
	Description: "half the fleet fails 40% at random, three retries on any 5xx under Envoy's default max_retries breaker (3 concurrent), 50% cap: ejection up to the cap; lift the breaker to see the retry storm",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 10, 1000, 240*time.Second
		c.CapacityRPS = 150
		c.Retry.NumRetries, c.Retry.RetryOn = 3, sim.RetryOn5xx
		c.Faults = []sim.Fault{{
			Label: "bad deploy", HostShare: 0.5, From: 30 * time.Second,
			Share: 0.4, Pattern: sim.Bernoulli, Kind: sim.HTTP503, Primary: true,
		}}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 50 }),
}

// SlowHost is the preset where a host answers 400 ms slower from 30 s but never errors. Envoy
// has no latency detector, so nothing is ejected; a per-try timeout turns
// the slowness into local-origin timeouts (504) that consecutive_5xx sees.
var SlowHost = Preset{
	Name:        "slow-host",
	Description: "a host turns 400 ms slow but never errors: no detector sees it until a per-try timeout makes it fail",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 6, 600, 180*time.Second
		c.Faults = []sim.Fault{{
			Label: "slow disk", Hosts: []int{2}, From: 30 * time.Second,
			AddedLatency: 400 * time.Millisecond, Kind: sim.Timeout, Primary: true,
		}}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 20 }),
}

// SmallFleet is the preset where, of four hosts, one dies; success rate can never run (fewer
// hosts than success_rate_minimum_hosts), a 25% cap admits exactly one
// ejection, and the three survivors absorb a quarter more load than they
// can serve.
var SmallFleet = Preset{
	Name:        "small-fleet",
	Description: "four hosts, one dies: one ejection is a quarter of capacity, and success rate never runs",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 4, 400, 180*time.Second
		c.CapacityRPS = 120
		c.Faults = []sim.Fault{{
			Label: "host down", Hosts: []int{3}, From: 30 * time.Second,
			Share: 1, Kind: sim.ConnectFailure, HealthCheckFails: true, Primary: true,
		}}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 25 }),
}

// Flapping is the preset where a host fails for 20 s out of every 30 s; each time it comes
// back it fails again, and its ejections grow (30 s, 60 s, 90 s …) because
// the backoff only decays while it stays healthy.
var Flapping = Preset{
	Name:        "flapping",
	Description: "a host fails every request for 20 s out of every 30 s; each return ends in a longer ejection",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 8, 800, 600*time.Second
		for k := range 20 {
			from := time.Duration(30+30*k) * time.Second
			c.Faults = append(c.Faults, sim.Fault{
				Label: "flapping", Hosts: []int{1}, From: from, Until: from + 20*time.Second,
				Share: 1, Kind: sim.HTTP503, Primary: true,
			})
		}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 20 }),
}

// LocalityFailover is eight hosts in two zones, four in P0 (the client's
// own) and four in P1 (the failover zone, as Istio's locality failover
// writes it). Two P0 hosts die at 30 s and consecutive_5xx ejects them:
// P0's health falls to 140·2/4 = 70, so 30% of the picks spill to P1
// (LoadBalancerBase::recalculatePerPriorityState).
var LocalityFailover = Preset{
	Name:        "locality-failover",
	Description: "four hosts in the local zone (P0), four in the failover zone (P1); two local hosts die at 30 s, and their ejection spills 30% of the traffic to P1",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration, c.FailoverHosts = 8, 800, 120*time.Second, 4
		c.Faults = []sim.Fault{{
			Label: "zone-local hosts down", Hosts: []int{2, 3}, From: 30 * time.Second,
			Share: 1, Kind: sim.ConnectFailure, Primary: true,
		}}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 50 }),
}

// CapEmptiesLevel is two hosts in P0 and eight in P1, and a 20% cap, which
// counts all ten hosts: both P0 hosts fail and both go (2/10 = 20%), the
// whole level out, every pick to P1. DetectorImpl::ejectHost: the cap
// "is not currently checked per-priority level".
var CapEmptiesLevel = Preset{
	Name:        "cap-empties-level",
	Description: "two hosts in P0, eight in P1, a 20% cap over all ten: both P0 hosts fail and both are ejected, the whole level, and P1 takes every request",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration, c.FailoverHosts = 10, 1000, 120*time.Second, 8
		c.Faults = []sim.Fault{{
			Label: "P0 down", Hosts: []int{0, 1}, From: 30 * time.Second,
			Share: 1, Kind: sim.HTTP503, Primary: true,
		}}
	}),
	Outlier: withOutlier(func(c *engine.Config) { c.MaxEjectionPercent = 20 }),
}

// cluster builds a cluster from the simulator's defaults.
func cluster(edit func(*sim.Cluster)) sim.Cluster {
	c := sim.DefaultCluster()
	edit(&c)
	return c
}

// withOutlier is Envoy's default outlier_detection with some fields set.
func withOutlier(edit func(*engine.Config)) engine.Config {
	c := engine.DefaultConfig()
	edit(&c)
	return c
}

// all lists the presets in lesson order.
var all = []*Preset{
	&SearchCache, &DeadHost, &SharedDependency, &TwoBadHosts, &Burst, &AppErrors,
	&ActiveHCUndo, &BadDeploy, &SlowHost, &SmallFleet, &Flapping,
	&LocalityFailover, &CapEmptiesLevel,
}

// Presets returns every preset, in lesson order.
func Presets() []Preset {
	out := make([]Preset, len(all))
	for i, p := range all {
		out[i] = Preset(p.Scenario())
	}
	return out
}

// Lookup finds a preset by name.
func Lookup(name string) (Preset, bool) {
	for _, p := range all {
		if p.Name == name {
			return Preset(p.Scenario()), true
		}
	}
	return Preset{}, false
}
