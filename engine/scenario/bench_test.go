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

// BenchmarkMesh is the mesh run (issue 39): 300 s, 50 client
// proxies sharing 5 000 requests/s over 20 hosts, one failing a third of
// its requests from 30 s: 50 detectors and 50 balancers, 1.5 million
// requests, streamed as the CLI streams it.
func BenchmarkMesh(b *testing.B) {
	c := sim.DefaultCluster()
	c.Hosts, c.RPS, c.Duration, c.Clients = 20, 5000, 300*time.Second, 50
	c.Faults = []sim.Fault{{Hosts: []int{7}, From: 30 * time.Second, Share: 1.0 / 3, Kind: sim.HTTP503}}
	sc := Scenario{Name: "mesh", Cluster: c, Outlier: engine.DefaultConfig()}
	b.ReportAllocs()
	var reqs uint64
	for i := 0; b.Loop(); i++ {
		sum, err := Stream(sc, sc.Outlier, uint64(i), summaryWriter{})
		if err != nil {
			b.Fatal(err)
		}
		reqs += sum.Mesh.Fleet.Requests
	}
	b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "req/s")
}

// summaryWriter keeps nothing: a run's summary alone.
type summaryWriter struct{}

func (summaryWriter) Begin(*Result) error { return nil }
func (summaryWriter) Frame(*Frame) error  { return nil }
func (summaryWriter) End(*Result) error   { return nil }
