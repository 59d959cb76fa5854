package scenario

import (
	"testing"

	"outlierlab/engine"
)

// The dialect knob: at the default 10% cap, one bad host of six is refused
// by Envoy ((0+1)/6 > 10%) and ejected by gRPC (0/6 < 10%), at the first
// tick that sees a whole faulty interval, for every seed the lessons use.
func TestDialectKnobSearchCache(t *testing.T) {
	p, ok := Lookup("search-cache")
	if !ok {
		t.Fatal("no search-cache preset")
	}
	sc, err := ApplyKnobs(p.Scenario(), map[string]string{"dialect": "grpc"})
	if err != nil {
		t.Fatal(err)
	}
	if KnobValue(sc, "dialect") != "grpc" {
		t.Fatalf("dialect knob reads %q", KnobValue(sc, "dialect"))
	}
	for seed := uint64(1); seed <= 5; seed++ {
		res := mustRun(t, sc, p.Outlier, seed)
		grpc := events(res, engine.EventEject)
		if len(grpc) == 0 || grpc[0] != (ev{40000, "h5", "eject", "success_rate"}) {
			t.Errorf("seed %d, grpc: ejections %v, want the first at 40000 h5 by success_rate", seed, grpc)
		}
		// Out for 30 s: on a real clock (engine.GRPCRealClock) the 70 s
		// sweep starts after 40 s + 30 s, so h5 is back there, as under
		// Envoy's <=; an exact clock would keep it until 80 s.
		if back := events(res, engine.EventUneject); len(back) == 0 || back[0] != (ev{70000, "h5", "uneject", ""}) {
			t.Errorf("seed %d, grpc: returns %v, want the first at 70000 h5", seed, back)
		}
		if envoy := events(mustRun(t, p.Scenario(), p.Outlier, seed), engine.EventEject); len(envoy) != 0 {
			t.Errorf("seed %d, envoy: ejections %v, want none", seed, envoy)
		}
	}
	if _, err := ApplyKnobs(p.Scenario(), map[string]string{"dialect": "istio"}); err == nil || err.Error() != "dialect: istio is not allowed (allowed envoy|grpc)" {
		t.Errorf("bad dialect: %v", err)
	}
}
