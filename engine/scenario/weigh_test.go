package scenario_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/engine/sim"
)

// heldToFactor says whether a count of Work is held to weighFactor: all
// but FarEvents. The event ring's window runs from the last event it let
// go, so after the ring sat idle (a low rate; successes answered at
// once, which never enter it) even an event due in milliseconds goes to
// the heap; such a heap holds a few events and costs what the ring does.
// The estimate counts the events due past the window (a queue's wait, a
// slow host, a hang, a check's interval), which make the heap large; the
// runs' priced cost holds them all (web/budget TestRunCostAtExtremes).
func heldToFactor(count string) bool { return count != "FarEvents" }

// weighFactor is how far a run's real work may exceed sim.Weigh's
// estimate, count by count: the budget admits a run on its estimate, so
// what it admits costs at most this much more than it allowed.
const weighFactor = 2

// extremes are the values the grid draws each setting from: its allowed
// minimum and maximum (the settings catalog's), for a threshold whose
// minimum disables it the heaviest value that does not (1), and for the
// settings whose middle makes the detector's own arithmetic (a fault's
// share: how often a streak happens; the thresholds), the preset's own
// ("-": not set). rps, duration, hosts and interval size the run (see
// fitRun).
var extremes = map[string][]string{
	"hosts":    {"1", "50", "200"},
	"rps":      {"1", "3000", "100000"},
	"duration": {"10s", "600s", "3600s"},
	"interval": {"0.001s", "1s", "3600s"},

	"panic_threshold":        {"0", "100"},
	"lb":                     {"round_robin", "least_request", "random"},
	"retries":                {"0", "10"},
	"retry_on":               {"5xx", "gateway-error", "connect-failure", "reset", "5xx,connect-failure,reset"},
	"retry_budget_percent":   {"0", "100"},
	"min_retry_concurrency":  {"0", "1000"},
	"max_retries":            {"0", "4294967295"},
	"previous_hosts":         {"false", "true"},
	"per_try_timeout":        {"0s", "1ms", "60s"},
	"route_timeout":          {"0s", "300s"},
	"latency":                {"0s", "10s"},
	"capacity_rps":           {"0", "1", "100000"},
	"fault_rate":             {"0", "1", "-"},
	"fault_kind":             {"500", "502", "503", "504", "connect_failure", "reset", "timeout", "-"},
	"fault_pattern":          {"interleaved", "random", "-"},
	"fault_start":            {"0s", "3600s"},
	"fault_duration":         {"0s", "3600s"},
	"hc_shares_fault":        {"false", "true"},
	"active_hc":              {"false", "true"},
	"hc_interval":            {"100ms", "60s"},
	"hc_unhealthy_threshold": {"1", "10"},
	"hc_healthy_threshold":   {"1", "10"},
	"dialect":                {"envoy", "grpc"},

	"consecutive_5xx":                             {"0", "1", "4294967295", "-"},
	"consecutive_gateway_failure":                 {"0", "1", "4294967295", "-"},
	"consecutive_local_origin_failure":            {"0", "1", "4294967295"},
	"split_external_local_origin_errors":          {"false", "true"},
	"base_ejection_time":                          {"0.001s", "3600s"},
	"max_ejection_time":                           {"0.001s", "3600s"},
	"max_ejection_percent":                        {"0", "100"},
	"enforcing_consecutive_5xx":                   {"0", "100"},
	"enforcing_consecutive_gateway_failure":       {"0", "100"},
	"enforcing_consecutive_local_origin_failure":  {"0", "100"},
	"enforcing_success_rate":                      {"0", "100"},
	"enforcing_local_origin_success_rate":         {"0", "100"},
	"enforcing_failure_percentage":                {"0", "100"},
	"enforcing_failure_percentage_local_origin":   {"0", "100"},
	"success_rate_minimum_hosts":                  {"0", "4294967295"},
	"success_rate_request_volume":                 {"0", "4294967295"},
	"success_rate_stdev_factor":                   {"0", "4294967295", "-"},
	"failure_percentage_threshold":                {"0", "100", "-"},
	"failure_percentage_minimum_hosts":            {"0", "4294967295"},
	"failure_percentage_request_volume":           {"0", "4294967295"},
	"max_ejection_time_jitter":                    {"0s", "3600s"},
	"successful_active_health_check_uneject_host": {"false", "true"},
	"always_eject_one_host":                       {"false", "true"},
}

// gridRuns is how many combinations the grid runs: every pair of two
// settings' extremes is among them (each pair of values is drawn with a
// chance of at least 1/49, so 400 draws miss one with a chance below
// e^-8), and the run at the report's settings besides.
const gridRuns = 300

// testCap bounds one run of the grid (in rough units: the attempts,
// events and host-ticks it is estimated to make), so the grid runs in
// seconds: a run past it is shortened (fitRun).
const testCap = 300_000

func roughSize(w sim.Work) uint64 {
	return w.Attempts + w.Events + 4*w.HostTicks + w.HealthChecks + w.Slots
}

// TestWeighHoldsAtExtremes runs combinations of every setting at its
// extremes, on every preset, and holds each count the run really made to
// at most weighFactor times sim.Weigh's estimate of it. It also runs the
// issue's run (flapping at 3000 rps over 50 hosts, five retries through
// an open breaker into hosts that serve 10 requests a second): 10.0 M
// attempts and 3.7 M events, which the first weight (rps × duration +
// 10 × host-ticks) put at 2.1 M units.
func TestWeighHoldsAtExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 3))
	names := make([]string, 0, len(extremes))
	for n := range extremes {
		names = append(names, n)
	}
	slices.Sort(names)
	presets := scenario.Presets()
	combos := []map[string]string{{"preset": "flapping", "hosts": "50", "rps": "3000", "interval": "1s", "retries": "5",
		"retry_on": "5xx", "fault_rate": "1", "max_retries": "100000", "active_hc": "true", "hc_interval": "1s",
		"lb": "least_request", "capacity_rps": "10", "previous_hosts": "true"}}
	runs := gridRuns
	if testing.Short() {
		runs = gridRuns / 5
	}
	for range runs {
		c := map[string]string{"preset": presets[rng.IntN(len(presets))].Name}
		for _, n := range names {
			vs := extremes[n]
			if v := vs[rng.IntN(len(vs))]; v != "-" {
				c[n] = v
			}
		}
		if rng.IntN(4) == 0 {
			c["inject"] = "h0@0s"
		}
		combos = append(combos, c)
	}
	worst, worstAt := map[string]float64{}, map[string]int{}
	ran := 0
	for i, c := range combos {
		sc, cfg, est, ok := fitRun(t, c)
		if !ok {
			continue
		}
		ran++
		res, err := scenario.Run(sc, cfg, uint64(i+1))
		if err != nil {
			t.Fatalf("combination %d %v: %v", i, c, err)
		}
		real := res.Summary.Work
		ev, rv := reflect.ValueOf(est), reflect.ValueOf(real)
		for f := range ev.NumField() {
			name := ev.Type().Field(f).Name
			if !heldToFactor(name) {
				continue
			}
			e, r := ev.Field(f).Uint(), rv.Field(f).Uint()
			ratio := float64(r) / float64(max(e, 1))
			if ratio > worst[name] {
				worst[name], worstAt[name] = ratio, i
			}
			if r > weighFactor*e {
				t.Errorf("combination %d (%s; run at %v, %g rps, %d hosts): %s %d, estimated %d (%.1f×, allowed %d×)",
					i, describe(c), sc.Cluster.Duration, sc.Cluster.RPS, sc.Cluster.Hosts, name, r, e, ratio, weighFactor)
			}
		}
	}
	if ran < len(combos)/2 {
		t.Errorf("only %d of %d combinations ran (the rest too heavy even at 10 s)", ran, len(combos))
	}
	t.Logf("%d combinations ran; the most real work over the estimate, by count: %v (combinations %v)", ran, worst, worstAt)
}

// fitRun applies a combination; a run over testCap is made smaller
// (its duration halved down to 10 s, then its rate and hosts quartered)
// until it fits.
func fitRun(t *testing.T, c map[string]string) (scenario.Scenario, engine.Config, sim.Work, bool) {
	t.Helper()
	p, ok := scenario.Lookup(c["preset"])
	if !ok {
		t.Fatalf("no preset %s", c["preset"])
	}
	set := map[string]string{}
	for k, v := range c {
		if k != "preset" {
			set[k] = v
		}
	}
	for {
		sc, cfg, err := settings.Apply(p, set)
		if err != nil {
			if dropNamed(set, err) {
				continue
			}
			t.Fatalf("%v: %v", c, err)
		}
		est := sim.Weigh(sc.Cluster, cfg)
		if roughSize(est) <= testCap {
			return sc, cfg, est, true
		}
		// Shorter first, then fewer requests, then fewer hosts: the
		// settings that decide how the run goes stay at their extremes.
		switch d, rps := sc.Cluster.Duration.Seconds(), sc.Cluster.RPS; {
		case d > 10:
			set["duration"] = strconv.FormatFloat(max(10, d/2), 'f', 0, 64) + "s"
		case rps > 1:
			set["rps"] = strconv.FormatFloat(max(1, math.Floor(rps/4)), 'f', 0, 64)
		case sc.Cluster.Hosts > 1:
			set["hosts"] = strconv.Itoa(max(1, sc.Cluster.Hosts/4))
		default:
			return sc, cfg, est, false
		}
	}
}

// dropNamed removes the settings err names (a fault knob on a preset
// without a primary fault, a max_ejection_time below the base): the
// combination is run without them.
func dropNamed(set map[string]string, err error) bool {
	dropped := false
	for _, line := range strings.Split(err.Error(), "\n") {
		name, _, _ := strings.Cut(line, ":")
		if _, ok := set[name]; ok {
			delete(set, name)
			dropped = true
		}
	}
	return dropped
}

func describe(c map[string]string) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s ", k, c[k])
	}
	return strings.TrimSpace(b.String())
}

// A lever makes a run heavier, from one in-range value to another; the
// counts it must not lower (sim.Weigh's estimate is monotone in it, so
// the budget can search a lever for a value that fits).
type lever struct {
	name     string
	heavier  func(v float64) (float64, bool) // the next heavier value, in range
	monotone []string                        // Work's counts it never lowers
}

var allCounts = []string{"Arrivals", "Attempts", "Picks", "HealthChecks", "Events", "Streaks", "Rebuilds", "HostTicks", "FailingHostTicks", "Slots", "QueueNodes", "FarEvents"}

// Events that wait in the far heap fall as requests come faster: an
// event goes there when the ring sits idle past its horizon, which a
// busier run does less (sim.Work.FarEvents). More rps never lowers the
// other counts.
var countsButFar = allCounts[:len(allCounts)-1]

var levers = []lever{
	{"rps", func(v float64) (float64, bool) { return min(v*2, 100000), v < 100000 }, countsButFar},
	{"duration", func(v float64) (float64, bool) { return min(v*2, 3600), v < 3600 }, allCounts},
	{"retries", func(v float64) (float64, bool) { return v + 1, v < 10 }, allCounts},
	{"fault_rate", func(v float64) (float64, bool) { return min(1, v+0.25), v < 1 }, allCounts},
	{"capacity_rps", func(v float64) (float64, bool) { return math.Floor(v / 2), v >= 2 }, allCounts},
	{"max_retries", func(v float64) (float64, bool) { return v*4 + 1, v < 1e9 }, allCounts},
	{"consecutive_5xx", func(v float64) (float64, bool) { return math.Floor(v / 2), v >= 2 }, []string{"Events", "Streaks", "Rebuilds"}},
	// A shorter interval makes more ticks; past the run's duration it
	// also shortens the run (one tick of one interval), so it is
	// monotone in the ticks alone.
	{"interval", func(v float64) (float64, bool) { return math.Max(0.001, v/2), v > 0.001 }, []string{"HostTicks"}},
	{"hc_interval", func(v float64) (float64, bool) { return math.Max(0.1, v/2), v > 0.1 }, []string{"HealthChecks"}},
	// More clients share the same traffic: each has its own detector
	// (hosts × ticks each), its own health checks and its own Poisson
	// stream (whose three σ add up).
	{"clients", func(v float64) (float64, bool) { return min(100, v*2), v < 100 }, []string{"Arrivals", "HealthChecks", "HostTicks"}},
}

// checkWeigh holds sim.Weigh's estimate at one point of the settings'
// ranges to its promises: no count overflows (each stays far below
// uint64's range), a heavier value of the lever never lowers a count the
// lever must not lower, and a run small enough to make here does at most
// weighFactor times the estimate.
//
// It says whether it compared a heavier value and whether it ran the run.
func checkWeigh(t *testing.T, set map[string]string, preset string, lv lever) (compared, ran bool) {
	t.Helper()
	p, _ := scenario.Lookup(preset)
	for {
		_, _, err := settings.Apply(p, set)
		if err == nil || !dropNamed(set, err) {
			break
		}
	}
	sc, cfg, err := settings.Apply(p, set)
	if err != nil {
		return false, false // a combination the catalog refuses is never run
	}
	est := sim.Weigh(sc.Cluster, cfg)
	ev := reflect.ValueOf(est)
	for f := range ev.NumField() {
		if v := ev.Field(f).Uint(); v > 1e15 {
			t.Errorf("%s %s: %s %d overflows", preset, describe(set), ev.Type().Field(f).Name, v)
		}
	}
	v, _ := settings.Value(sc, cfg, lv.name)
	cur, err := strconv.ParseFloat(v, 64)
	if d, derr := time.ParseDuration(v); err != nil && derr == nil {
		cur, err = d.Seconds(), nil
	}
	if err != nil {
		t.Fatalf("%s: %q is not a number", lv.name, v)
	}
	if next, more := lv.heavier(cur); more {
		heavy := maps.Clone(set)
		heavy[lv.name] = strconv.FormatFloat(next, 'f', -1, 64)
		if _, derr := time.ParseDuration(v); derr == nil {
			heavy[lv.name] += "s"
		}
		if hsc, hcfg, err := settings.Apply(p, heavy); err == nil {
			compared = true
			hv := reflect.ValueOf(sim.Weigh(hsc.Cluster, hcfg))
			for _, name := range lv.monotone {
				if a, b := ev.FieldByName(name).Uint(), hv.FieldByName(name).Uint(); b < a {
					t.Errorf("%s %s: %s %s → %s lowers %s from %d to %d", preset, describe(set), lv.name, set[lv.name], heavy[lv.name], name, a, b)
				}
			}
		}
	}
	if roughSize(est) > 60_000 {
		return compared, false
	}
	res, err := scenario.Run(sc, cfg, 7)
	if err != nil {
		t.Fatalf("%s %s: %v", preset, describe(set), err)
	}
	rv := reflect.ValueOf(res.Summary.Work)
	for f := range ev.NumField() {
		if !heldToFactor(ev.Type().Field(f).Name) {
			continue
		}
		if r, e := rv.Field(f).Uint(), ev.Field(f).Uint(); r > weighFactor*e {
			t.Errorf("%s %s: %s %d, estimated %d (allowed %d×)", preset, describe(set), ev.Type().Field(f).Name, r, e, weighFactor)
		}
	}
	return compared, true
}

// weighPoint maps fuzzed numbers into the settings' ranges.
func weighPoint(preset, hosts uint8, rps uint32, durS uint16, intervalMs uint32, retries uint8, capacity uint32, faultPct, kind, lb uint8,
	maxRetries uint32, perTryMs uint16, c5xx uint32, hcDs uint16, activeHC, prev bool, bump, clients uint8) (string, map[string]string, lever) {
	ps := scenario.Presets()
	kinds := sim.FailureKindNames()
	set := map[string]string{
		"hosts":           strconv.Itoa(1 + int(hosts)%200),
		"rps":             strconv.Itoa(1 + int(rps%100000)),
		"duration":        strconv.Itoa(10+int(durS)%3591) + "s",
		"interval":        strconv.FormatFloat(float64(1+intervalMs%3_600_000)/1000, 'f', -1, 64) + "s",
		"retries":         strconv.Itoa(int(retries) % 11),
		"capacity_rps":    strconv.Itoa(int(capacity % 100001)),
		"fault_rate":      strconv.FormatFloat(float64(faultPct%101)/100, 'f', -1, 64),
		"fault_kind":      kinds[int(kind)%len(kinds)],
		"lb":              []string{"round_robin", "least_request", "random"}[int(lb)%3],
		"max_retries":     strconv.FormatUint(uint64(maxRetries), 10),
		"per_try_timeout": strconv.FormatFloat(float64(perTryMs%60001)/1000, 'f', -1, 64) + "s",
		"consecutive_5xx": strconv.FormatUint(uint64(c5xx), 10),
		"hc_interval":     strconv.FormatFloat(float64(1+hcDs%600)/10, 'f', -1, 64) + "s",
		"active_hc":       strconv.FormatBool(activeHC),
		"previous_hosts":  strconv.FormatBool(prev),
		// A mesh weighs as its clients' runs summed (sim.Weigh).
		"clients": strconv.Itoa(1 + int(clients)%100),
	}
	return ps[int(preset)%len(ps)].Name, set, levers[int(bump)%len(levers)]
}

// FuzzWeigh: sim.Weigh over the settings' ranges (checkWeigh).
func FuzzWeigh(f *testing.F) {
	f.Add(uint8(10), uint8(49), uint32(2999), uint16(590), uint32(999), uint8(5), uint32(10), uint8(100), uint8(2), uint8(1), uint32(100000), uint16(0), uint32(5), uint16(9), true, true, uint8(0), uint8(0))
	f.Add(uint8(0), uint8(0), uint32(0), uint16(0), uint32(0), uint8(10), uint32(1), uint8(100), uint8(6), uint8(0), uint32(4294967295), uint16(1), uint32(1), uint16(0), true, false, uint8(7), uint8(0))
	f.Add(uint8(3), uint8(19), uint32(4999), uint16(290), uint32(9999), uint8(0), uint32(0), uint8(100), uint8(4), uint8(0), uint32(3), uint16(0), uint32(5), uint16(49), false, false, uint8(9), uint8(49))
	f.Fuzz(func(t *testing.T, preset, hosts uint8, rps uint32, durS uint16, intervalMs uint32, retries uint8, capacity uint32, faultPct, kind, lb uint8,
		maxRetries uint32, perTryMs uint16, c5xx uint32, hcDs uint16, activeHC, prev bool, bump, clients uint8) {
		name, set, lv := weighPoint(preset, hosts, rps, durS, intervalMs, retries, capacity, faultPct, kind, lb, maxRetries, perTryMs, c5xx, hcDs, activeHC, prev, bump, clients)
		checkWeigh(t, set, name, lv)
	})
}

// TestWeighProperties is FuzzWeigh's check on points drawn from a fixed
// seed, so every run of the tests covers the ranges, not only the fuzzer.
func TestWeighProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 4))
	compared, ran := 0, 0
	for range 400 {
		// Sizes log-uniform over their ranges, so that small runs, which
		// can be made here, are drawn as often as large ones.
		logU := func(hi float64) uint32 { return uint32(math.Exp(rng.Float64() * math.Log(hi))) }
		name, set, lv := weighPoint(uint8(rng.Uint32()), uint8(logU(200)), logU(100000), uint16(logU(3600)), logU(3_600_000), uint8(rng.Uint32()),
			rng.Uint32()%3*logU(100000), uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), rng.Uint32()>>rng.IntN(32), uint16(rng.Uint32()), rng.Uint32()%20, uint16(logU(600)), rng.IntN(2) == 0, rng.IntN(2) == 0, uint8(rng.Uint32()), uint8(rng.IntN(3)/2*int(logU(100))))
		c, r := checkWeigh(t, set, name, lv)
		compared, ran = compared+b2i(c), ran+b2i(r)
	}
	// Most points are too heavy to run here: a few dozen of them must be.
	if compared < 300 || ran < 30 {
		t.Errorf("of 400 points, %d compared with a heavier value and %d ran", compared, ran)
	}
	t.Logf("of 400 points, %d compared with a heavier value and %d ran", compared, ran)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkWeigh is the estimate of the run (flapping's twenty
// fault windows over fifty hosts): the budget weighs every run, and the
// 422's suggestions weigh a few dozen variants of it.
func BenchmarkWeigh(b *testing.B) {
	p, _ := scenario.Lookup("flapping")
	sc, cfg, err := settings.Apply(p, map[string]string{"hosts": "50", "rps": "3000", "interval": "1s", "retries": "5",
		"retry_on": "5xx", "fault_rate": "1", "max_retries": "100000", "active_hc": "true", "hc_interval": "1s",
		"lb": "least_request", "capacity_rps": "10", "previous_hosts": "true"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sim.Weigh(sc.Cluster, cfg)
	}
}
