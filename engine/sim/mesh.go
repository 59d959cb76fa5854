package sim

import (
	"outlierlab/engine"
)

// A mesh is many client proxies in front of one fleet: every pod of an
// Istio, Consul or Kuma mesh has its own Envoy, and a proxyless gRPC
// client is its own balancer, so each client keeps its own load balancer
// (its own round-robin index, its own panic flag) and its own outlier
// detector (its own counters, its own success-rate statistics over its
// own share of the traffic, its own max_ejection_percent cap) over the
// same hosts and the same config. Nothing of one client's reaches
// another's: Envoy's outlier detector is per cluster per proxy
// (DetectorImpl is built by the cluster, ClusterImplBase::create, in each
// Envoy), so a Mesh is Clients independent Sims, each fed its share of the
// downstream requests.
//
// What the hosts hold in common is shared out by traffic share: a host's
// capacity (each client sees the host with its own share of it, so every
// client sees the fleet as loaded as it is), and an interleaved fault
// counts each client's requests apart (a host failing one request in
// three fails one in three of every client's). Each client runs its own
// active health checks, as a sidecar's health checker does.

const (
	// MaxClients bounds Cluster.Clients.
	MaxClients = 100
	// MaxClientSkew bounds Cluster.ClientSkew.
	MaxClientSkew = 20
)

// ClientCount is how many client proxies the run has (at least one).
func (c *Cluster) ClientCount() int { return max(1, c.Clients) }

// ClientShare is client k's share of the downstream traffic: even, but
// that client 0 sends ClientSkew times what each other client sends.
func (c *Cluster) ClientShare(k int) float64 {
	n := c.ClientCount()
	if n == 1 {
		return 1
	}
	skew := max(1, c.ClientSkew)
	w := 1.0
	if k == 0 {
		w = skew
	}
	return w / (skew + float64(n-1))
}

// ClientCluster is the one-proxy cluster client k of c runs: its share of
// the requests and of each host's capacity. With one client it is c
// itself, so a one-client run is every run before meshes, bit for bit.
func (c Cluster) ClientCluster(k int) Cluster {
	if c.ClientCount() == 1 {
		return c
	}
	share := c.ClientShare(k)
	cc := c.Clone()
	cc.Clients, cc.ClientSkew = 1, 0
	cc.RPS *= share
	cc.CapacityRPS *= share
	for i := range cc.Faults {
		cc.Faults[i].CapacityRPS *= share
	}
	return cc
}

// ClientSeed is client k's seed in a run of seed: client 0 keeps the
// run's own, so one client is the run it always was; the others' are
// splitmix64 steps from it, as far apart as any two seeds.
func ClientSeed(seed uint64, k int) uint64 {
	if k == 0 {
		return seed
	}
	z := seed + uint64(k)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Mesh runs a cluster's clients side by side, interval by interval (they
// share the config, so their ticks fall at the same times).
type Mesh struct {
	c    Cluster
	sims []*Sim
	out  MeshInterval
}

// MeshInterval is one interval of every client. It is owned by the Mesh
// and overwritten by the next call to Next, as each client's Interval is
// by its Sim.
type MeshInterval struct {
	// Clients are each client's interval, in client order.
	Clients []*Interval
	// EjectedBy is, per host, how many clients have it ejected after
	// the tick: a host can be out for some proxies and in rotation for
	// the others.
	EjectedBy []int
	// EjectionsActive is outlier_detection.ejections_active summed over
	// the clients, as a dashboard's sum() over pods shows it: one host
	// ejected by seven proxies counts seven, so it is not a host count.
	EjectionsActive uint64
}

// NewMesh builds the clients of c (ClientCluster, ClientSeed), each with
// a detector configured by od.
func NewMesh(c Cluster, od engine.Config, seed uint64) (*Mesh, error) {
	c = c.Clone()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	n := c.ClientCount()
	m := &Mesh{c: c, sims: make([]*Sim, n)}
	for k := range n {
		s, err := New(c.ClientCluster(k), od, ClientSeed(seed, k))
		if err != nil {
			return nil, err
		}
		m.sims[k] = s
	}
	m.out.Clients = make([]*Interval, n)
	m.out.EjectedBy = make([]int, c.Hosts)
	return m, nil
}

// Cluster is the (validated) cluster the mesh runs.
func (m *Mesh) Cluster() Cluster { return m.c }

// Client is client k's simulation.
func (m *Mesh) Client(k int) *Sim { return m.sims[k] }

// Clients is how many clients the mesh runs.
func (m *Mesh) Clients() int { return len(m.sims) }

// Next runs every client to the next tick and returns that interval, or
// false when the run is over.
func (m *Mesh) Next() (*MeshInterval, bool) {
	for k, s := range m.sims {
		iv, ok := s.Next()
		if !ok {
			return nil, false
		}
		m.out.Clients[k] = iv
	}
	clear(m.out.EjectedBy)
	m.out.EjectionsActive = 0
	for _, iv := range m.out.Clients {
		for h, hs := range iv.Tick.Hosts {
			if hs.Ejected {
				m.out.EjectedBy[h]++
			}
		}
		m.out.EjectionsActive += iv.Stats[engine.StatEjectionsActive]
	}
	return &m.out, true
}

// Work is what every client did so far, summed: each has its own
// requests, slots, queue and detector.
func (m *Mesh) Work() Work {
	var w Work
	for _, s := range m.sims {
		w.add(s.Work(), 1)
	}
	return w
}

// add adds n times o to w.
func (w *Work) add(o Work, n uint64) {
	w.Arrivals += n * o.Arrivals
	w.Attempts += n * o.Attempts
	w.Picks += n * o.Picks
	w.HealthChecks += n * o.HealthChecks
	w.Events += n * o.Events
	w.Streaks += n * o.Streaks
	w.Rebuilds += n * o.Rebuilds
	w.HostTicks += n * o.HostTicks
	w.FailingHostTicks += n * o.FailingHostTicks
	w.Slots += n * o.Slots
	w.QueueNodes += n * o.QueueNodes
	w.FarEvents += n * o.FarEvents
}
