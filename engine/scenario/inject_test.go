package scenario

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"outlierlab/engine/sim"
)

// inject=h2@60s on search-cache (cap 34): h2 fails one request in three
// from 60 s, and every frame before is the run without the injection, bit
// for bit. They can be: the injected window only cuts h2's timeline at
// 60 s, and before it no request fails differently, so the shared random
// stream is drawn in the same order up to the tick at 60 s (arrivals at
// the tick's microsecond come after it).
func TestInjectSearchCache(t *testing.T) {
	cfg := SearchCache.Outlier
	cfg.MaxEjectionPercent = 34
	plain := mustRun(t, SearchCache.Scenario(), cfg, 1)
	sc, err := ApplyKnobs(SearchCache.Scenario(), map[string]string{"inject": "h2@60s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := KnobValue(sc, "inject"); got != "h2@60s" {
		t.Fatalf("inject reads %q", got)
	}
	if len(sc.Injections) != 1 || sc.Injections[0].Describe() != "503, 1 in 3" {
		t.Fatalf("injections %+v", sc.Injections)
	}
	inj := mustRun(t, sc, cfg, 1)
	if len(inj.Frames) != len(plain.Frames) {
		t.Fatalf("%d frames, %d without injection", len(inj.Frames), len(plain.Frames))
	}
	for i, f := range inj.Frames {
		if f.TMs > 60000 {
			break
		}
		a, _ := json.Marshal(f)
		b, _ := json.Marshal(plain.Frames[i])
		if string(a) != string(b) || !reflect.DeepEqual(f.Events, plain.Frames[i].Events) {
			t.Fatalf("frame at %d ms differs from the run without injection:\n%s\n%s", f.TMs, a, b)
		}
	}
	h2 := frameAt(t, inj, 70000).Hosts[2]
	if h2.Name != "h2" || math.Abs(h2.SuccessRate-200.0/3) > 0.5 {
		t.Fatalf("h2 at 70 s: %+v, want a success rate of about 66.7%%", h2)
	}
	if sr := frameAt(t, plain, 70000).Hosts[2].SuccessRate; sr < 99 {
		t.Fatalf("h2 at 70 s without injection: %.1f%%", sr)
	}
}

// The injected fault is the scenario's own as its knobs have it, whatever
// order the knobs come in; with no fault in the scenario it is the
// documented default.
func TestInjectCopiesFault(t *testing.T) {
	sc, err := ApplyKnobs(SearchCache.Scenario(), map[string]string{
		"inject": "h1@20s", "fault_kind": "reset", "fault_rate": "0.4", "fault_pattern": "random", "hosts": "8",
	})
	if err != nil {
		t.Fatal(err)
	}
	f := sc.Injections[0].Fault
	if f.Kind != sim.Reset || f.Share != 0.4 || f.Pattern != sim.Bernoulli || f.Primary || f.From != 20*time.Second || f.Until != 0 {
		t.Fatalf("injected fault %+v", f)
	}
	if d := sc.Injections[0].Describe(); d != "reset, 40% at random" {
		t.Errorf("describe %q", d)
	}
	// Set again: the earlier injection's window goes.
	sc, err = ApplyKnobs(sc, map[string]string{"inject": "h3@10s"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sc.Cluster.Faults); n != 2 || KnobValue(sc, "inject") != "h3@10s" {
		t.Fatalf("%d fault windows, inject %q", n, KnobValue(sc, "inject"))
	}

	bare := SearchCache.Scenario()
	bare.Cluster.Faults = nil
	sc, err = ApplyKnobs(bare, map[string]string{"inject": "h0@30s"})
	if err != nil {
		t.Fatal(err)
	}
	if d := sc.Injections[0].Describe(); d != "503, 1 in 3" {
		t.Fatalf("default injected fault: %q", d)
	}
}

func TestInjectErrors(t *testing.T) {
	many := strings.Repeat("h1@1s,", MaxInjections) + "h1@1s"
	bad := []struct{ value, want string }{
		{"h6@60s", "inject: h6@60s: h6 is not a host of this cluster (allowed h0–h5)"},
		{"h2@400s", "inject: h2@400s: 400s is out of range (allowed 0s–300s, the run's duration)"},
		{"h2@-1s", "inject: h2@-1s: -1s is out of range"},
		{"h2@60s,h2@90s", "inject: h2@90s: h2 already fails from 60s (allowed one entry per host)"},
		{"h2", `inject: "h2" is not HOST@TIME (allowed like h3@60s)`},
		{"x2@60s", `inject: "x2@60s" is not HOST@TIME`},
		{"h-1@60s", `inject: "h-1@60s" is not HOST@TIME`},
		{"h2@soon", `inject: h2@soon: "soon" is not a time`},
		{many, "inject: more than 20 entries (allowed at most 20)"},
	}
	for _, b := range bad {
		_, err := ApplyKnobs(SearchCache.Scenario(), map[string]string{"inject": b.value})
		if err == nil || !strings.HasPrefix(err.Error(), b.want) {
			t.Errorf("inject=%s: error %v, want %q", b.value, err, b.want)
		}
	}
	// Normalised: sorted by time, bare seconds accepted, blanks dropped.
	sc, err := ApplyKnobs(SearchCache.Scenario(), map[string]string{"inject": " h4@90, h1@1m ,"})
	if err != nil {
		t.Fatal(err)
	}
	if got := KnobValue(sc, "inject"); got != "h1@60s,h4@90s" {
		t.Fatalf("normalised %q", got)
	}
}
