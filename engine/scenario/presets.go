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
	Description: "six hosts, one loses its cache at 30 s and fails one request in three; the 10% cap refuses the ejection",
	Cluster: cluster(func(c *sim.Cluster) {
		c.Hosts, c.RPS, c.Duration = 6, 600, 300*time.Second
		c.Faults = []sim.Fault{{
			Label: "cache lost", Hosts: []int{-1}, From: 30 * time.Second,
			Share: 1.0 / 3, Pattern: sim.Interleaved, Kind: sim.HTTP503, Primary: true,
		}}
	}),
	Outlier: engine.DefaultConfig(),
}

// cluster builds a cluster from the simulator's defaults.
func cluster(edit func(*sim.Cluster)) sim.Cluster {
	c := sim.DefaultCluster()
	edit(&c)
	return c
}

// all lists the presets in lesson order.
var all = []*Preset{&SearchCache}

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
