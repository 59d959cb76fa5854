package settings

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/sim"
)

// The catalog is every outlier_detection field envoyconf knows and every
// scenario knob, each complete, and no name (or alias) means two settings.
func TestCatalogCoversFieldsAndKnobs(t *testing.T) {
	var want []string
	for _, f := range envoyconf.Fields() {
		want = append(want, f.Name)
	}
	for _, k := range scenario.Knobs() {
		want = append(want, k.Name)
	}
	var got []string
	for _, s := range All() {
		got = append(got, s.Name)
		if s.Help == "" || s.Allowed() == "" || s.Target == 0 {
			t.Errorf("%s is incomplete: %+v", s.Name, s)
		}
		switch s.Kind {
		case Int, Float, Duration:
			if s.Min > s.Max {
				t.Errorf("%s: range %v–%v", s.Name, s.Min, s.Max)
			}
		case Bool, Events:
		case Enum, List:
			if len(s.Choices) == 0 || len(s.Menu) == 0 {
				t.Errorf("%s: choices %v, menu %v", s.Name, s.Choices, s.Menu)
			}
		default:
			t.Errorf("%s: unknown kind %q", s.Name, s.Kind)
		}
		for _, n := range []string{s.Name, s.Alias} {
			if n == "" {
				continue
			}
			if l, ok := Lookup(n); !ok || l.Name != s.Name {
				t.Errorf("Lookup(%q) = %q, %v; want %s", n, l.Name, ok, s.Name)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("catalog\n%v\nwant the fields then the knobs\n%v", got, want)
	}
	if _, ok := Lookup("maxEjectionPercent"); ok {
		t.Error("Lookup accepts a JSON name: lessons and -set use Envoy's snake_case names")
	}
}

// The choices a page offers are the engine's: one list each, checked
// against what the simulator parses.
func TestChoicesAreTheEngines(t *testing.T) {
	lb, _ := Lookup("lb_policy")
	fk, _ := Lookup("fault_kind")
	ro, _ := Lookup("retry_on")
	if lb.Name != "lb" || !slices.Equal(lb.Menu, []string{"round_robin", "least_request", "random"}) {
		t.Errorf("lb: %+v", lb)
	}
	if !slices.Equal(fk.Menu, sim.FailureKindNames()) {
		t.Errorf("fault_kind menu %v, want sim's %v", fk.Menu, sim.FailureKindNames())
	}
	if !slices.Contains(ro.Menu, "connect-failure,reset") || !slices.Equal(ro.Choices, []string{"5xx", "gateway-error", "connect-failure", "reset"}) {
		t.Errorf("retry_on: choices %v, menu %v", ro.Choices, ro.Menu)
	}
	for _, s := range All() {
		for _, v := range s.Menu {
			sc, _, err := Apply(scenario.SearchCache, map[string]string{s.Name: v})
			if err != nil {
				t.Errorf("%s=%s: %v", s.Name, v, err)
				continue
			}
			if got, _ := Value(sc, sc.Outlier, s.Name); got != v {
				t.Errorf("%s=%s reads back %q", s.Name, v, got)
			}
		}
	}
}

// What Values writes, Apply reads back to the same run: a preset's values
// laid over it change nothing.
func TestValuesRoundTrip(t *testing.T) {
	for _, p := range scenario.Presets() {
		vals := Values(p.Scenario(), p.Outlier)
		want := len(All())
		if scenario.KnobValue(p.Scenario(), "fault_host") == "" {
			want-- // a fault of several hosts names no one host
		}
		if len(vals) != want {
			t.Errorf("%s: %d values, %d settings", p.Name, len(vals), len(All()))
		}
		sc, cfg, err := Apply(p, vals)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if cfg != p.Outlier || !reflect.DeepEqual(sc, p.Scenario()) {
			t.Errorf("%s: laying its own values over it changed it", p.Name)
		}
	}
}

// noFault is a preset with nothing for the fault knobs to tune.
var noFault = func() scenario.Preset {
	p := scenario.SearchCache
	p.Name, p.Cluster.Faults = "no-fault", nil
	return p
}()

func TestApply(t *testing.T) {
	base := scenario.SearchCache
	for _, tc := range []struct {
		name   string
		p      scenario.Preset
		layers []map[string]string
		// check inspects a good result; errs are the lines a bad one must
		// hold, in order.
		check func(t *testing.T, sc scenario.Scenario, cfg engine.Config)
		errs  []string
	}{
		{name: "no layers: the preset as it is", p: base,
			check: func(t *testing.T, sc scenario.Scenario, cfg engine.Config) {
				if cfg != base.Outlier || !reflect.DeepEqual(sc, base.Scenario()) {
					t.Error("changed")
				}
			}},
		{name: "fields and knobs in one layer", p: base,
			layers: []map[string]string{{"max_ejection_percent": "34", "base_ejection_time": "10s", "hosts": "10", "fault_kind": "reset"}},
			check: func(t *testing.T, sc scenario.Scenario, cfg engine.Config) {
				if cfg.MaxEjectionPercent != 34 || cfg.BaseEjectionTimeMs != 10000 || sc.Cluster.Hosts != 10 || sc.Cluster.Faults[0].Kind != sim.Reset {
					t.Errorf("cfg %+v, hosts %d, fault %v", cfg, sc.Cluster.Hosts, sc.Cluster.Faults[0].Kind)
				}
				if sc.Outlier != cfg {
					t.Error("the scenario's Outlier is not the config")
				}
			}},
		{name: "later layers win, by name or alias", p: base,
			layers: []map[string]string{
				{"max_ejection_percent": "34", "panic_threshold": "50", "retries": "1"},
				{"max_ejection_percent": "50", "healthy_panic_threshold": "0"},
				{"num_retries": "3"},
			},
			check: func(t *testing.T, sc scenario.Scenario, cfg engine.Config) {
				if cfg.MaxEjectionPercent != 50 || sc.Cluster.HealthyPanicThreshold != 0 || sc.Cluster.Retry.NumRetries != 3 {
					t.Errorf("cap %d, panic %d, retries %d", cfg.MaxEjectionPercent, sc.Cluster.HealthyPanicThreshold, sc.Cluster.Retry.NumRetries)
				}
			}},
		{name: "an empty field value is Envoy's default", p: scenario.SmallFleet,
			layers: []map[string]string{{"max_ejection_percent": ""}},
			check: func(t *testing.T, _ scenario.Scenario, cfg engine.Config) {
				if cfg.MaxEjectionPercent != engine.DefaultConfig().MaxEjectionPercent {
					t.Errorf("cap %d", cfg.MaxEjectionPercent)
				}
			}},
		{name: "inject sees the final cluster", p: base,
			layers: []map[string]string{{"inject": "h8@60s"}, {"hosts": "10"}},
			check: func(t *testing.T, sc scenario.Scenario, _ engine.Config) {
				if len(sc.Injections) != 1 || sc.Injections[0].Host != 8 || sc.Injections[0].At != 60*time.Second {
					t.Errorf("injections %+v", sc.Injections)
				}
			}},
		{name: "a field out of range", p: base,
			layers: []map[string]string{{"max_ejection_percent": "101"}},
			errs:   []string{"max_ejection_percent: 101 is out of range (allowed 0–100)"}},
		{name: "a knob out of range, by its alias", p: base,
			layers: []map[string]string{{"healthy_panic_threshold": "101"}},
			errs:   []string{"panic_threshold: 101 is out of range (allowed 0–100 %)"}},
		{name: "Envoy's cross-field check", p: base,
			layers: []map[string]string{{"base_ejection_time": "30s"}, {"max_ejection_time": "5s"}},
			errs:   []string{"max_ejection_time: 5s is below base_ejection_time 30s (allowed ≥ base_ejection_time)"}},
		{name: "a choice the engine does not offer", p: base,
			layers: []map[string]string{{"lb": "ring_hash"}},
			errs:   []string{"lb: ring_hash is not allowed (allowed round_robin|least_request|random)"}},
		{name: "a knob the preset has no use for", p: noFault,
			layers: []map[string]string{{"fault_rate": "0.5"}},
			errs:   []string{`fault_rate: scenario "no-fault" has no primary fault to tune`}},
		{name: "one setting twice in a layer", p: base,
			layers: []map[string]string{{"lb": "random", "lb_policy": "random"}},
			errs:   []string{"lb: is given twice, as lb and as lb_policy (allowed once)"}},
		{name: "every bad name and value, each named", p: base,
			layers: []map[string]string{{"colour": "red", "hosts": "0", "interval": "0s"}, {"max_ejection_percent": "200"}},
			errs: []string{
				"colour: unknown setting (outlier_detection fields: consecutive_5xx,",
				"hosts: 0 is out of range (allowed 1–200 hosts)",
				"interval: ",
				"max_ejection_percent: 200 is out of range (allowed 0–100)",
			}},
		{name: "an inject host past the cluster", p: base,
			layers: []map[string]string{{"inject": "h9@60s"}},
			errs:   []string{"inject: h9@60s: h9 is not a host of this cluster (allowed h0–h5)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, cfg, err := Apply(tc.p, tc.layers...)
			if tc.errs == nil {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, sc, cfg)
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.errs)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.errs) {
				t.Fatalf("%d errors, want %d:\n%v", len(lines), len(tc.errs), err)
			}
			for i, w := range tc.errs {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d = %q, want %q…", i, lines[i], w)
				}
			}
		})
	}
}

// The preset itself is never changed, whatever the layers do.
func TestApplyLeavesThePresetAlone(t *testing.T) {
	before := scenario.SearchCache.Scenario()
	if _, _, err := Apply(scenario.SearchCache, map[string]string{"fault_rate": "1", "hosts": "3", "inject": "h1@10s"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, scenario.SearchCache.Scenario()) {
		t.Fatal("Apply changed the preset")
	}
}

// Each dialect reads the block as its client does: under gRPC what only
// Envoy refuses is accepted and applied (and envoyconf.GRPCNotes says what
// Envoy would have refused), what grpc-go's outlierConfigFromCluster NACKs
// is refused; under Envoy every row is refused, as Envoy refuses it.
func TestEachDialectReadsTheBlockAsItsClientDoes(t *testing.T) {
	p, ok := scenario.Lookup("search-cache")
	if !ok {
		t.Fatal("no search-cache")
	}
	for _, tc := range []struct {
		set string
		// grpcErr is grpc-go's refusal; "" when it accepts, and then
		// check holds on the config it applied and note is in a note.
		grpcErr, note string
		check         func(engine.Config) bool
	}{
		// intervalTimerAlgorithm: min(base·multiplier, max(base, max)).
		{set: "max_ejection_time=10s", note: "max_ejection_time: 10s is below base_ejection_time 30s (allowed ≥ base_ejection_time); Envoy refuses the cluster; grpc-go accepts it and ejects for at most base_ejection_time",
			check: func(c engine.Config) bool { return c.GRPCMaxEjectionTimeNs() == 10e9 }},
		// outlierConfigFromCluster: durations must only be ≥ 0.
		{set: "base_ejection_time=0s", note: "base_ejection_time: 0s is out of range (allowed > 0s); Envoy refuses the cluster; grpc-go accepts 0s",
			check: func(c engine.Config) bool { return c.GRPCBaseEjectionTimeNs() == 0 }},
		// AsDuration keeps the nanoseconds.
		{set: "interval=0.0005s", note: "its sweep timer runs every 0.0005s",
			check: func(c engine.Config) bool { return c.GRPCIntervalNs() == 500_000 }},
		// outlierConfigFromCluster does not read the consecutive fields.
		{set: "enforcing_consecutive_5xx=150", note: "enforcing_consecutive_5xx: 150 is out of range (allowed 0–100); Envoy refuses the cluster; grpc-go accepts it: its xDS client does not read this field",
			check: func(c engine.Config) bool { return c.EnforcingConsecutive5xx == 150 }},
		{set: "max_ejection_time_jitter=-1s", note: "max_ejection_time_jitter: -1s is out of range (allowed ≥ 0s); Envoy refuses the cluster; grpc-go accepts it",
			check: func(c engine.Config) bool { return c.MaxEjectionTimeJitterMs == -1000 }},
		// outlierConfigFromCluster: max_ejection_percent must be ≤ 100 ...
		{set: "max_ejection_percent=101", grpcErr: "max_ejection_percent: 101 is out of range (allowed 0–100); grpc-go's xDS client NACKs the cluster for it (outlierConfigFromCluster)"},
		// ... and the durations ≥ 0.
		{set: "base_ejection_time=-1s", grpcErr: "base_ejection_time: -1s is negative (allowed ≥ 0s); grpc-go's xDS client NACKs the cluster"},
	} {
		name, v, _ := strings.Cut(tc.set, "=")
		_, cfg, err := Apply(p, map[string]string{"dialect": "grpc", name: v})
		switch {
		case tc.grpcErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.grpcErr) {
				t.Errorf("grpc, %s: %v, want %q", tc.set, err, tc.grpcErr)
			}
		case err != nil:
			t.Errorf("grpc, %s: refused (%v), grpc-go accepts it", tc.set, err)
		case !tc.check(cfg):
			t.Errorf("grpc, %s: not applied: %+v", tc.set, cfg)
		default:
			var notes []string
			for _, fe := range envoyconf.GRPCNotes(cfg) {
				notes = append(notes, fe.Error())
			}
			if !strings.Contains(strings.Join(notes, "\n"), tc.note) {
				t.Errorf("grpc, %s: notes %q, want one with %q", tc.set, notes, tc.note)
			}
		}
		if _, _, err = Apply(p, map[string]string{name: v}); err == nil || strings.Contains(err.Error(), "grpc-go") {
			t.Errorf("envoy, %s: %v, want Envoy's refusal alone", tc.set, err)
		}
	}
}
