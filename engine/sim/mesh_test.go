package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"outlierlab/engine"
)

// TestMeshClientIsItsOwnRun is the mesh's promise, over random runs,
// seeds and both dialects: each client's intervals (events, hosts,
// clients' figures) are those of a one-client run fed that client's own
// request stream (its share of the traffic, its seed), so no state of one
// proxy leaks into another's.
func TestMeshClientIsItsOwnRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 1))
	differ := 0
	for run := range 24 {
		c, od := randomRun(rng)
		c.Duration /= 2
		c.Clients = 2 + rng.IntN(4)
		c.ClientSkew = []float64{0, 1, 4}[rng.IntN(3)]
		c.Dialect = engine.Dialect(rng.IntN(2))
		seed := rng.Uint64()
		m, err := NewMesh(c, od, seed)
		if err != nil {
			t.Logf("run %d: %v (skipped)", run, err)
			continue
		}
		per := make([][]Interval, c.Clients)
		for {
			mi, ok := m.Next()
			if !ok {
				break
			}
			for k, iv := range mi.Clients {
				cp := *iv
				cp.Hosts = append([]HostInterval(nil), iv.Hosts...)
				cp.Events = append([]engine.Event(nil), iv.Events...)
				cp.Tick = nil
				per[k] = append(per[k], cp)
			}
		}
		for k := range c.Clients {
			alone := runAll(t, newSim(t, c.ClientCluster(k), od, ClientSeed(seed, k)))
			if !reflect.DeepEqual(per[k], alone) {
				t.Fatalf("run %d (seed %d, %d clients): client %d's intervals differ from its own one-client run", run, seed, c.Clients, k)
			}
		}
		if !reflect.DeepEqual(allEvents(per[0]), allEvents(per[1])) {
			differ++
		}
	}
	// The clients are not copies of one another: their streams differ.
	if differ == 0 {
		t.Error("every run's clients 0 and 1 made the same events")
	}
}

// TestMeshOneClientIsTheRun: clients=1 is the cluster and seed of the
// run before meshes, so every golden holds.
func TestMeshOneClientIsTheRun(t *testing.T) {
	c := DefaultCluster()
	for _, n := range []int{0, 1} {
		c.Clients = n
		if got := c.ClientCluster(0); !reflect.DeepEqual(got, c) {
			t.Errorf("clients=%d: ClientCluster(0) = %+v, want the cluster itself", n, got)
		}
	}
	if ClientSeed(77, 0) != 77 {
		t.Error("client 0 does not keep the run's seed")
	}
	if ClientSeed(77, 1) == ClientSeed(77, 2) || ClientSeed(77, 1) == 77 {
		t.Error("clients' seeds collide")
	}
}

func TestClientShares(t *testing.T) {
	for _, tc := range []struct {
		clients    int
		skew       float64
		hot, other float64
	}{
		{1, 0, 1, 0},
		{4, 0, 0.25, 0.25},
		{4, 1, 0.25, 0.25},
		{5, 6, 0.6, 0.1}, // 6/(6+4), 1/10
		{20, 20, 20.0 / 39, 1.0 / 39},
	} {
		c := DefaultCluster()
		c.Clients, c.ClientSkew = tc.clients, tc.skew
		sum := 0.0
		for k := range c.ClientCount() {
			sum += c.ClientShare(k)
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%d clients skew %g: shares sum to %g", tc.clients, tc.skew, sum)
		}
		if got := c.ClientShare(0); math.Abs(got-tc.hot) > 1e-12 {
			t.Errorf("%d clients skew %g: client 0's share %g, want %g", tc.clients, tc.skew, got, tc.hot)
		}
		if tc.clients > 1 {
			if got := c.ClientShare(tc.clients - 1); math.Abs(got-tc.other) > 1e-12 {
				t.Errorf("%d clients skew %g: last client's share %g, want %g", tc.clients, tc.skew, got, tc.other)
			}
			cc := c.ClientCluster(1)
			if cc.Clients != 1 || math.Abs(cc.RPS-c.RPS*tc.other) > 1e-9 {
				t.Errorf("%d clients: client 1 runs %d clients at %g rps", tc.clients, cc.Clients, cc.RPS)
			}
		}
	}
}

func TestMeshValidate(t *testing.T) {
	for _, tc := range []struct {
		clients int
		skew    float64
		want    string
	}{
		{101, 0, "clients: 101 is out of range 1–100"},
		{-1, 0, "clients: -1 is out of range 1–100"},
		{4, 0.5, "client_skew: 0.5 is out of range 1–20"},
		{4, 21, "client_skew: 21 is out of range 1–20"},
		{4, math.NaN(), "client_skew: NaN is out of range 1–20"},
	} {
		c := DefaultCluster()
		c.Clients, c.ClientSkew = tc.clients, tc.skew
		if err := c.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("clients %d skew %g: %v, want %q", tc.clients, tc.skew, err, tc.want)
		}
	}
}

// TestMeshSums: the summed gauge counts a host once per client that
// ejects it, and EjectedBy counts those clients per host.
func TestMeshSums(t *testing.T) {
	c := quietCluster(5, 2000, 20e9)
	c.Clients = 8
	c.Faults = []Fault{{Hosts: []int{0}, Share: 1, Kind: HTTP503}}
	od := engine.DefaultConfig()
	od.IntervalMs = 1000
	od.MaxEjectionPercent = 50 // 10 % of five hosts ejects none
	m, err := NewMesh(c, od, 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for {
		mi, ok := m.Next()
		if !ok {
			break
		}
		var active uint64
		by := make([]int, c.Hosts)
		for _, iv := range mi.Clients {
			active += iv.Stats[engine.StatEjectionsActive]
			for h, hs := range iv.Tick.Hosts {
				if hs.Ejected {
					by[h]++
				}
			}
		}
		if active != mi.EjectionsActive || !reflect.DeepEqual(by, mi.EjectedBy) {
			t.Fatalf("sums %d %v, want %d %v", mi.EjectionsActive, mi.EjectedBy, active, by)
		}
		if mi.EjectedBy[0] > 1 && mi.EjectionsActive > 1 {
			seen = true // one bad host, counted by several clients
		}
	}
	if !seen {
		t.Error("the always-failing host was never out for several clients at once")
	}
	if w := m.Work(); w.HostTicks != uint64(c.Clients*c.Hosts*20) {
		t.Errorf("HostTicks %d, want clients × hosts × ticks = %d", w.HostTicks, c.Clients*c.Hosts*20)
	}
}
