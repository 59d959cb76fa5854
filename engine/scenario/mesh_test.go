package scenario

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"outlierlab/engine/sim"
)

// TestMeshRun: a mesh run's frames are client 0's own run, each with
// every client's view; its summary sums the fleet and weighs every
// client's work.
func TestMeshRun(t *testing.T) {
	sc := DeadHost.Scenario()
	sc.Cluster.Clients = 6
	sc.Cluster.ClientSkew = 3
	cfg := DeadHost.Outlier
	res, err := Run(sc, cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	one := sc.Clone()
	one.Cluster = sc.Cluster.ClientCluster(0)
	alone, err := Run(one, cfg, sim.ClientSeed(5, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Frames) != len(alone.Frames) {
		t.Fatalf("%d frames, client 0 alone %d", len(res.Frames), len(alone.Frames))
	}
	var fleet uint64
	for i := range res.Frames {
		f := res.Frames[i]
		m := f.Mesh
		if m == nil || m.Clients != 6 || len(m.PerClient) != 6 || len(m.EjectedBy) != sc.Cluster.Hosts {
			t.Fatalf("frame %d: mesh %+v", i, m)
		}
		if m.PerClient[0].Requests != f.Clients.Requests {
			t.Errorf("frame %d: client 0's requests %d, the frame's %d", i, m.PerClient[0].Requests, f.Clients.Requests)
		}
		f.Mesh = nil
		if !reflect.DeepEqual(f, alone.Frames[i]) {
			t.Fatalf("frame %d is not client 0's own run's", i)
		}
		fleet += m.Fleet.Requests
	}
	ms := res.Summary.Mesh
	if ms == nil || ms.Fleet.Requests != fleet || ms.Clients != 6 || ms.ClientSkew != 3 {
		t.Fatalf("summary's mesh %+v (fleet requests by frame %d)", ms, fleet)
	}
	// Client 0 sends three times each other client's share: 3/8 of 500 req/s.
	if got := ms.PerClient[0].RPS; got != 500*3.0/8 {
		t.Errorf("client 0's rps %g", got)
	}
	if ms.Fleet.Ejections < 6 {
		t.Errorf("the dead host was ejected %d times over six clients", ms.Fleet.Ejections)
	}
	if w := res.Summary.Work.HostTicks; w != uint64(6*sc.Cluster.Hosts*len(res.Frames)) {
		t.Errorf("HostTicks %d, want every client's", w)
	}
	var out bytes.Buffer
	if err := WriteText(&out, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mesh: 6 clients (client 0 sends 3× each other's share", "  client  5:", "ejections_active summed", "h3 out for "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q", want)
		}
	}
}
