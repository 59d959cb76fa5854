package scenario

import (
	"fmt"
	"io"
	"slices"

	"outlierlab/engine"
	"outlierlab/engine/sim"
)

// A mesh run (clients > 1, sim.Mesh) is every client proxy's run side by
// side. Its frames are client 0's (the hot one when the traffic is
// skewed) as that proxy sees the fleet, so every reader of frames (the
// charts, the decision log, the lessons' checks) reads one real proxy;
// Frame.Mesh and Summary.Mesh hold every client and the fleet's sums.
// A one-client run has neither, and is the run it always was.

// MeshFrame is every client of a mesh in one interval.
type MeshFrame struct {
	Clients int `json:"clients"`
	// EjectedBy is, per host, how many clients have it ejected after the
	// tick.
	EjectedBy []int `json:"ejected_by"`
	// EjectionsActiveSum is outlier_detection.ejections_active summed over
	// the clients (sum() over pods on a dashboard): a host out for seven
	// proxies counts seven. It is not a count of hosts.
	EjectionsActiveSum uint64 `json:"ejections_active_sum"`
	// Fleet is what every client's downstream requests saw, summed.
	Fleet     MeshClient   `json:"fleet"`
	PerClient []MeshClient `json:"per_client"`
}

// MeshClient is one client's interval (or the fleet's sum).
type MeshClient struct {
	Requests  uint64 `json:"requests"`
	Failures  uint64 `json:"failures"`
	NoHealthy uint64 `json:"no_healthy_upstream"`
	// Ejected is how many hosts the client has out after the tick.
	Ejected int `json:"ejected"`
	// HostRequests is, per host, the requests the client's detector
	// counted in the interval (its external-origin bucket): the volume
	// success_rate_request_volume and failure_percentage_request_volume
	// are compared with, client by client. Empty for the fleet.
	HostRequests []uint64 `json:"host_requests,omitempty"`
	// Events are the client's detector's events of the interval.
	Events []engine.Event `json:"-"`
}

// FailurePct is the client's failure share in percent.
func (c MeshClient) FailurePct() float64 { return pct(c.Failures, c.Requests) }

// MeshSummary is a mesh run in a few numbers: each client's, and the
// fleet's.
type MeshSummary struct {
	Clients    int               `json:"clients"`
	ClientSkew float64           `json:"client_skew"`
	Fleet      MeshClientSummary `json:"fleet"`
	// MaxEjectionsActiveSum is the summed gauge's peak; MaxEjectedByAny
	// the most hosts out for at least one client at once.
	MaxEjectionsActiveSum uint64              `json:"max_ejections_active_sum"`
	MaxEjectedByAny       int                 `json:"max_ejected_by_any"`
	PerClient             []MeshClientSummary `json:"per_client"`
}

// MeshClientSummary is one client's run (or the fleet's sum).
type MeshClientSummary struct {
	RPS        float64 `json:"rps"`
	Requests   uint64  `json:"requests"`
	Failures   uint64  `json:"failures"`
	FailurePct float64 `json:"failure_pct"`
	Ejections  int     `json:"ejections"`
	Overflows  int     `json:"overflows"`
	// MaxEjected is the most hosts the client had out at once.
	MaxEjected int `json:"max_ejected"`
}

func newMeshFrame(mi *sim.MeshInterval) *MeshFrame {
	mf := &MeshFrame{Clients: len(mi.Clients), EjectedBy: slices.Clone(mi.EjectedBy), EjectionsActiveSum: mi.EjectionsActive,
		PerClient: make([]MeshClient, len(mi.Clients))}
	for k, iv := range mi.Clients {
		c := MeshClient{Requests: iv.Clients.Requests, Failures: iv.Clients.Failures, NoHealthy: iv.Clients.NoHealthy,
			HostRequests: make([]uint64, len(iv.Tick.Hosts))}
		for h, hs := range iv.Tick.Hosts {
			c.HostRequests[h] = hs.Requests
			if hs.Ejected {
				c.Ejected++
			}
		}
		if len(iv.Events) > 0 {
			c.Events = slices.Clone(iv.Events)
		}
		mf.PerClient[k] = c
		mf.Fleet.Requests += c.Requests
		mf.Fleet.Failures += c.Failures
		mf.Fleet.NoHealthy += c.NoHealthy
		mf.Fleet.Ejected += c.Ejected
	}
	return mf
}

// meshAcc adds up a mesh run's summary a frame at a time.
type meshAcc struct{ sum MeshSummary }

func newMeshAcc(c *sim.Cluster) *meshAcc {
	a := &meshAcc{sum: MeshSummary{Clients: c.ClientCount(), ClientSkew: max(1, c.ClientSkew), PerClient: make([]MeshClientSummary, c.ClientCount())}}
	for k := range a.sum.PerClient {
		a.sum.PerClient[k].RPS = c.RPS * c.ClientShare(k)
	}
	a.sum.Fleet.RPS = c.RPS
	return a
}

func (a *meshAcc) add(mf *MeshFrame) {
	s := &a.sum
	s.MaxEjectionsActiveSum = max(s.MaxEjectionsActiveSum, mf.EjectionsActiveSum)
	any := 0
	for _, n := range mf.EjectedBy {
		if n > 0 {
			any++
		}
	}
	s.MaxEjectedByAny = max(s.MaxEjectedByAny, any)
	for k, c := range mf.PerClient {
		p := &s.PerClient[k]
		p.Requests += c.Requests
		p.Failures += c.Failures
		p.MaxEjected = max(p.MaxEjected, c.Ejected)
		for _, e := range c.Events {
			switch e.Kind {
			case engine.EventEject:
				p.Ejections++
			case engine.EventOverflow:
				p.Overflows++
			}
		}
	}
}

func (a *meshAcc) finish() *MeshSummary {
	s := a.sum
	s.PerClient = slices.Clone(s.PerClient)
	f := &s.Fleet
	for k := range s.PerClient {
		p := &s.PerClient[k]
		p.FailurePct = pct(p.Failures, p.Requests)
		f.Requests += p.Requests
		f.Failures += p.Failures
		f.Ejections += p.Ejections
		f.Overflows += p.Overflows
	}
	f.FailurePct = pct(f.Failures, f.Requests)
	f.MaxEjected = s.MaxEjectedByAny
	return &s
}

// meshRun is Stream's runner for a mesh: client 0's frames, each with
// every client's (Frame.Mesh), and client 0's summary with the mesh's
// (Summary.Mesh) and the work of every client (Summary.Work).
type meshRun struct {
	m   *sim.Mesh
	acc *meshAcc
}

func (r *meshRun) next() (Frame, bool) {
	mi, ok := r.m.Next()
	if !ok {
		return Frame{}, false
	}
	f := newFrame(mi.Clients[0])
	f.Mesh = newMeshFrame(mi)
	r.acc.add(f.Mesh)
	return f, true
}

func (r *meshRun) finish(acc *summaryAcc) Summary {
	sum := acc.finish(r.m.Client(0))
	sum.Work = r.m.Work()
	sum.Mesh = r.acc.finish()
	return sum
}

// writeMeshLine ends a mesh frame's text line: the fleet's failures, the
// summed gauge, and each host some client has out, by how many.
func writeMeshLine(w io.Writer, f *Frame, m *MeshFrame) {
	fmt.Fprintf(w, " | mesh of %d: fleet %.2f%% failed, ejections_active summed %d", m.Clients, m.Fleet.FailurePct(), m.EjectionsActiveSum)
	for h, n := range m.EjectedBy {
		if n > 0 {
			fmt.Fprintf(w, ", %s out for %d/%d", f.Hosts[h].Name, n, m.Clients)
		}
	}
}

// writeMeshSummary is the text output's last lines for a mesh: the fleet,
// then one line per client.
func writeMeshSummary(w io.Writer, m *MeshSummary) {
	f := m.Fleet
	fmt.Fprintf(w, "\nmesh: %d clients (client 0 sends %s× each other's share; the lines above are client 0's)\n", m.Clients, num(m.ClientSkew))
	fmt.Fprintf(w, "fleet: %d requests, %.2f%% failed; %d ejections, %d overflows over all clients; ejections_active summed peaked at %d (not a host count); at most %d hosts out for some client at once\n",
		f.Requests, f.FailurePct, f.Ejections, f.Overflows, m.MaxEjectionsActiveSum, m.MaxEjectedByAny)
	for k, c := range m.PerClient {
		fmt.Fprintf(w, "  client %2d: %7.1f req/s, %d requests, %.2f%% failed, %d ejections, %d overflows, most ejected at once %d\n",
			k, c.RPS, c.Requests, c.FailurePct, c.Ejections, c.Overflows, c.MaxEjected)
	}
}
