package scenario

import (
	"testing"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/sim"
)

// BenchmarkSearchCache is one whole search-cache run: 300 s, ~180 000
// requests, six hosts (goal: ≤ 15 ms and ≤ 2 MB per run).
func BenchmarkSearchCache(b *testing.B) {
	sc := SearchCache.Scenario()
	cfg := SearchCache.Outlier
	cfg.MaxEjectionPercent = 34
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Run(sc, cfg, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestsPerSecond reports simulated requests per second of CPU
// for a 50-host cluster at 5 000 requests/s with a faulty host (goal:
// ≥ 10 million).
func BenchmarkRequestsPerSecond(b *testing.B) {
	c := sim.DefaultCluster()
	c.Hosts, c.RPS, c.Duration = 50, 5000, 60*time.Second
	c.Faults = []sim.Fault{{Hosts: []int{7}, From: 10 * time.Second, Share: 0.3, Pattern: sim.Bernoulli, Kind: sim.HTTP503}}
	sc := Scenario{Name: "bench", Cluster: c, Outlier: engine.DefaultConfig()}
	b.ReportAllocs()
	var reqs uint64
	for i := 0; b.Loop(); i++ {
		res, err := Run(sc, sc.Outlier, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		reqs += res.Summary.Requests
	}
	b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "req/s")
}
