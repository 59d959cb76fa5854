package scenario

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"outlierlab/engine"
)

func TestPresetsListed(t *testing.T) {
	want := []string{"search-cache", "dead-host", "shared-dependency", "two-bad-hosts", "burst", "app-errors",
		"active-hc-undo", "bad-deploy", "slow-host", "small-fleet", "flapping", "locality-failover", "cap-empties-level"}
	var got []string
	for _, p := range Presets() {
		got = append(got, p.Name)
		if p.Description == "" || strings.Contains(p.Description, "\n") {
			t.Errorf("%s: description %q is not one line", p.Name, p.Description)
		}
		if err := p.Cluster.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if KnobValue(p.Scenario(), "fault_rate") == "" {
			t.Errorf("%s has no primary fault", p.Name)
		}
		q, ok := Lookup(p.Name)
		if !ok || q.Name != p.Name {
			t.Errorf("Lookup(%q) failed", p.Name)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("presets %v, want %v", got, want)
	}
	if _, ok := Lookup("nope"); ok {
		t.Fatal("Lookup found an unknown preset")
	}
	// Presets hand out copies: changing one does not change the preset.
	p, _ := Lookup("search-cache")
	p.Cluster.Faults[0].Share = 1
	if SearchCache.Cluster.Faults[0].Share != 1.0/3 {
		t.Fatal("a lookup's fault aliases the preset's")
	}
}

func engineEvents(res Result, kind engine.EventKind) []engine.Event {
	var out []engine.Event
	for _, f := range res.Frames {
		for _, e := range f.Events {
			if e.Kind == kind {
				out = append(out, e)
			}
		}
	}
	return out
}

func frameAt(t testing.TB, res Result, ms int64) Frame {
	t.Helper()
	for _, f := range res.Frames {
		if f.TMs == ms {
			return f
		}
	}
	t.Fatalf("no frame at %d ms", ms)
	return Frame{}
}

func retune(t testing.TB, p Preset, knobs map[string]string) Scenario {
	t.Helper()
	sc, err := ApplyKnobs(p.Scenario(), knobs)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// dead-host: h3 dies at 20 s; consecutive_5xx ejects it at its fifth
// failure in a row (usually five failed requests; 5–10 when a late success
// resets the count), the unenforced gateway
// detection first; each return ends in a longer ejection: 30, 60, 90, 120 s.
func TestPresetDeadHost(t *testing.T) {
	exact := 0
	for seed := uint64(1); seed <= 10; seed++ {
		res := mustRun(t, DeadHost.Scenario(), DeadHost.Outlier, seed)
		ev := events(res)
		if len(ev) < 2 || ev[0].Event != "detect" || ev[0].Detector != "consecutive_gateway_failure" ||
			ev[1].Event != "eject" || ev[1].Detector != "consecutive_5xx" || ev[1].Host != "h3" ||
			ev[1].AtMs < 20000 || ev[1].AtMs > 20200 || ev[0].AtMs != ev[1].AtMs {
			t.Fatalf("seed %d: first events %v", seed, ev[:min(2, len(ev))])
		}
		// Five failed requests, unless a request sent just before 20 s
		// (the 1% latency tail) succeeds in the middle of the streak and
		// resets the consecutive counter, as it would in Envoy.
		f := frameAt(t, res, 30000)
		failed := f.Hosts[3].Requests - f.Hosts[3].Successes
		if failed != f.Clients.Failures || failed < 5 || failed > 10 {
			t.Fatalf("seed %d: h3 failed %d of %d, clients saw %d failures", seed, failed, f.Hosts[3].Requests, f.Clients.Failures)
		}
		if failed == 5 {
			exact++
		}
		var durations []int64
		for _, e := range engineEvents(res, engine.EventEject) {
			durations = append(durations, e.DurationMs)
		}
		if !slices.Equal(durations, []int64{30000, 60000, 90000, 120000}) {
			t.Fatalf("seed %d: ejection times %v", seed, durations)
		}
	}
	if exact < 8 {
		t.Fatalf("exactly five failed requests in %d of 10 seeds", exact)
	}
}

// shared-dependency: every host fails one request in three, each request
// independently. Nobody is an outlier, but the success rates scatter (σ of
// one to two points at ~1000 requests per host and interval), success rate
// and consecutive_5xx flag hosts by chance, and the default cap refuses
// every flag on six hosts; clients see a third of requests fail. With a
// 50% cap the same noise ejects healthy hosts.
func TestPresetSharedDependency(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		res := mustRun(t, SharedDependency.Scenario(), SharedDependency.Outlier, seed)
		if res.Summary.Ejections != 0 || res.Summary.Overflows < 100 {
			t.Fatalf("seed %d: %d ejections, %d overflows", seed, res.Summary.Ejections, res.Summary.Overflows)
		}
		for _, f := range res.Frames {
			if f.TMs < 40000 || f.TMs > 150000 {
				continue
			}
			sr := f.SuccessRate
			if sr.Gate != "ran" || sr.StdDev < 0.3 || sr.StdDev > 3.5 || sr.Mean < 64.5 || sr.Mean > 69 {
				t.Errorf("seed %d, %d ms: success rate %+v", seed, f.TMs, sr)
			}
			if p := f.Clients.FailurePct(); p < 30.5 || p > 36 {
				t.Errorf("seed %d, %d ms: clients %.2f%%", seed, f.TMs, p)
			}
		}
		cfg := SharedDependency.Outlier
		cfg.MaxEjectionPercent = 50
		if wide := mustRun(t, SharedDependency.Scenario(), cfg, seed); wide.Summary.Ejections == 0 {
			t.Errorf("seed %d: a 50%% cap ejected nobody during a shared outage", seed)
		}
	}
}

// two-bad-hosts: two of five hosts at 80% (the others at 99.9%) give mean
// 91.9, σ 9.75, threshold 73.4 (seeds/000): no detection at all, although
// the 40% cap would admit both. With one bad host the threshold is ~80.8
// and the host is ejected at the first tick.
func TestPresetTwoBadHosts(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		res := mustRun(t, TwoBadHosts.Scenario(), TwoBadHosts.Outlier, seed)
		if ev := events(res); len(ev) != 0 {
			t.Fatalf("seed %d: events %v", seed, ev)
		}
		for _, f := range res.Frames[3:] {
			sr := f.SuccessRate
			if sr.Mean < 91.7 || sr.Mean > 92.1 || sr.Threshold < 73.1 || sr.Threshold > 73.7 || sr.StdDev < 9.6 || sr.StdDev > 9.9 {
				t.Errorf("seed %d, %d ms: mean %.2f σ %.2f threshold %.2f", seed, f.TMs, sr.Mean, sr.StdDev, sr.Threshold)
			}
			for _, h := range f.Hosts[3:] {
				if h.SuccessRate < 79.7 || h.SuccessRate > 80.3 {
					t.Errorf("seed %d, %d ms: %s at %.2f", seed, f.TMs, h.Name, h.SuccessRate)
				}
			}
		}
	}
	one := TwoBadHosts.Scenario()
	one.Cluster.Faults[0].Hosts = []int{-1}
	res := mustRun(t, one, TwoBadHosts.Outlier, 1)
	if ev := events(res); len(ev) == 0 || fmt.Sprint(ev[0]) != "40000 h4 eject success_rate" {
		t.Fatalf("one bad host: events %v", ev)
	}
	if thr := frameAt(t, res, 40000).SuccessRate.Threshold; thr < 80.3 || thr > 81.3 {
		t.Fatalf("one bad host: threshold %.2f, want ≈ 80.8", thr)
	}
}

// burst: ten seconds of 30% random 5xx on every host. consecutive_5xx
// ejects most of the pool (6–8 of 10, the 80% cap stops the rest), the
// survivors queue (p99 ≥ 250 ms, 2.5× normal), below half healthy the LB panics and the
// ejected hosts get traffic again; they return together at 70 s.
func TestPresetBurst(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		res := mustRun(t, Burst.Scenario(), Burst.Outlier, seed)
		burst := frameAt(t, res, 40000)
		ej := 0
		for _, e := range burst.Events {
			if e.Kind == engine.EventEject {
				ej++
				if e.Detector != engine.Consecutive5xx {
					t.Errorf("seed %d: ejected by %s", seed, e.Detector)
				}
			}
		}
		if ej < 6 || ej > 8 {
			t.Fatalf("seed %d: %d ejections in the burst, want most of the pool (6–8)", seed, ej)
		}
		if !burst.Panic || burst.LbHealthyPanic == 0 {
			t.Fatalf("seed %d: no panic (%v, lb_healthy_panic %d)", seed, burst.Panic, burst.LbHealthyPanic)
		}
		if burst.Clients.LatencyP99Ms < 250 {
			t.Errorf("seed %d: p99 %.0f ms in the burst, want the survivors queueing", seed, burst.Clients.LatencyP99Ms)
		}
		after := frameAt(t, res, 50000)
		for _, h := range after.Hosts {
			if h.Ejected && h.Attempts == 0 {
				t.Errorf("seed %d: ejected %s got no traffic in panic", seed, h.Name)
			}
		}
		if last := res.Frames[len(res.Frames)-1]; last.PanicAtEnd || last.Healthy != 10 {
			t.Errorf("seed %d: at the end panic %v, %d healthy", seed, last.PanicAtEnd, last.Healthy)
		}
	}
}

// app-errors: an endpoint returns 500 on three requests in ten on every
// host. Success rate never has volume, so only consecutive_5xx acts: it
// ejects healthy hosts in turn (several different hosts, one at a time
// under the 10% cap). Counting gateway errors instead (consecutive_5xx 0,
// enforcing_consecutive_gateway_failure 100) ejects nobody; split mode
// alone does not help, because a 500 is an external-origin 5xx.
func TestPresetAppErrors(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		res := mustRun(t, AppErrors.Scenario(), AppErrors.Outlier, seed)
		hosts := map[string]bool{}
		for _, e := range engineEvents(res, engine.EventEject) {
			if e.Detector != engine.Consecutive5xx {
				t.Fatalf("seed %d: ejected by %s", seed, e.Detector)
			}
			hosts[e.Host] = true
		}
		if len(hosts) < 3 || res.Summary.MaxEjected != 1 || res.Summary.Overflows == 0 {
			t.Fatalf("seed %d: ejected %v, at most %d at once, %d overflows", seed, hosts, res.Summary.MaxEjected, res.Summary.Overflows)
		}
		for _, f := range res.Frames {
			if f.SuccessRate.Gate == "ran" {
				t.Fatalf("seed %d, %d ms: success rate ran", seed, f.TMs)
			}
		}
	}
	fix := AppErrors.Outlier
	fix.Consecutive5xx, fix.EnforcingConsecutiveGatewayFailure = 0, 100
	if res := mustRun(t, AppErrors.Scenario(), fix, 1); len(events(res)) != 0 {
		t.Fatalf("gateway-only detection: events %v", events(res))
	}
	split := AppErrors.Outlier
	split.SplitExternalLocalOriginErrors = true
	if res := mustRun(t, AppErrors.Scenario(), split, 1); res.Summary.Ejections == 0 {
		t.Fatal("split mode alone stopped the ejections; a 500 is still an external 5xx")
	}
}

// active-hc-undo: the health endpoint skips the cache, so the first check
// after each ejection unejects h5 (within the 5 s check interval); success
// rate ejects it again at every tick from 40 s and clients see ~3.2%
// failures instead of 0.8%. With successful_active_health_check_uneject_host
// false the run is search-cache with the 34% cap.
func TestPresetActiveHCUndo(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		res := mustRun(t, ActiveHCUndo.Scenario(), ActiveHCUndo.Outlier, seed)
		ejects := engineEvents(res, engine.EventEject)
		for i, e := range ejects {
			if want := int64(40000 + 10000*i); e.AtMs != want || e.Detector != engine.SuccessRate {
				t.Fatalf("seed %d: ejection %d at %d by %s, want %d by success_rate", seed, i, e.AtMs, e.Detector, want)
			}
		}
		if len(ejects) != 27 {
			t.Fatalf("seed %d: %d ejections, want one per tick from 40 s (27)", seed, len(ejects))
		}
		for _, e := range engineEvents(res, engine.EventUneject) {
			if e.Cause != engine.UnejectActiveHealthCheck || e.EjectedMs > 5000 {
				t.Fatalf("seed %d: uneject at %d by cause %d after %d ms", seed, e.AtMs, e.Cause, e.EjectedMs)
			}
		}
		if p := res.Summary.FailurePctSinceFault; p < 2.5 || p > 4.5 {
			t.Errorf("seed %d: %.2f%% failures from 30 s, want ≈ 3.2", seed, p)
		}
	}
	cfg := ActiveHCUndo.Outlier
	cfg.SuccessfulActiveHealthCheckUnejectHost = false
	got := events(mustRun(t, ActiveHCUndo.Scenario(), cfg, 1))
	cap34 := SearchCache.Outlier
	cap34.MaxEjectionPercent = 34
	want := events(mustRun(t, SearchCache.Scenario(), cap34, 1))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("without HC uneject:\n got %v\nwant %v", got, want)
	}
}

// bad-deploy, the interview question: five of ten hosts fail 40%, three
// retries on any 5xx, a 50% cap. Under Envoy's default max_retries breaker
// (3 concurrent retries) retries stay a fraction of a percent of requests
// and most are refused (upstream_rq_retry_overflow). With the breaker lifted
// (4294967295, as Istio generates) retries nearly double the load, five
// hosts are ejected at once (never more), the survivors saturate (shedding,
// p99 ≥ 1 s) and later get ejected themselves; a quarter or more of
// requests fail. Panic never comes: a 50% cap always leaves half the hosts
// healthy, and panic needs fewer than half. With a 20% retry budget and a
// 10% cap, failures drop to ~10%.
func TestPresetBadDeploy(t *testing.T) {
	sum := func(res Result, from int64) (req, retries uint64, p99 float64) {
		for _, f := range res.Frames {
			if f.TMs > from {
				req += f.Clients.Requests
				retries += f.Clients.RetriesSent
				p99 = max(p99, f.Clients.LatencyP99Ms)
			}
		}
		return
	}
	lifted := retune(t, BadDeploy, map[string]string{"max_retries": "4294967295"})
	for seed := uint64(1); seed <= 3; seed++ {
		bounded := mustRun(t, BadDeploy.Scenario(), BadDeploy.Outlier, seed)
		breq, bretries, _ := sum(bounded, 30000)
		if float64(bretries) > 0.02*float64(breq) || bounded.Summary.RetryOverflow < 10*bretries {
			t.Errorf("seed %d: default breaker: %d retries for %d requests, %d refused", seed, bretries, breq, bounded.Summary.RetryOverflow)
		}

		res := mustRun(t, lifted, BadDeploy.Outlier, seed)
		req, retries, p99 := sum(res, 30000)
		s := res.Summary
		if float64(retries) < 0.8*float64(req) {
			t.Errorf("seed %d: %d retries for %d requests, want amplification", seed, retries, req)
		}
		if s.MaxEjected != 5 || s.PanicFrames != 0 {
			t.Errorf("seed %d: at most %d ejected at once, %d panic frames", seed, s.MaxEjected, s.PanicFrames)
		}
		if s.Cluster.QueueShed == 0 || p99 < 1000 {
			t.Errorf("seed %d: %d shed, p99 %.0f ms: survivors did not saturate", seed, s.Cluster.QueueShed, p99)
		}
		if s.FailurePctSinceFault < 20 {
			t.Errorf("seed %d: %.1f%% failures from 30 s", seed, s.FailurePctSinceFault)
		}
		good := map[string]bool{}
		for _, e := range engineEvents(res, engine.EventEject) {
			if e.Host >= "h5" {
				good[e.Host] = true
			}
		}
		if len(good) == 0 {
			t.Errorf("seed %d: no saturated survivor was ejected", seed)
		}

		better := retune(t, BadDeploy, map[string]string{"max_retries": "4294967295", "retry_budget_percent": "20"})
		cfg := BadDeploy.Outlier
		cfg.MaxEjectionPercent = 10
		b := mustRun(t, better, cfg, seed)
		breq, bretries, _ = sum(b, 30000)
		if p := b.Summary.FailurePctSinceFault; p > 12 || p > s.FailurePctSinceFault/2 {
			t.Errorf("seed %d: budget and 10%% cap: %.1f%% failures (interview config %.1f%%)", seed, p, s.FailurePctSinceFault)
		}
		if float64(bretries) > 0.2*float64(breq) || b.Summary.RetryOverflow == 0 || b.Summary.MaxEjected > 1 {
			t.Errorf("seed %d: budget: %d retries for %d requests, %d refused, %d ejected at once", seed, bretries, breq, b.Summary.RetryOverflow, b.Summary.MaxEjected)
		}
	}
}

// slow-host: h2 answers 400 ms late and never errors: no detector fires,
// clients' p99 rises past 400 ms. A 200 ms per-try timeout turns every h2
// request into a local-origin timeout (504), and consecutive_5xx ejects h2
// within a second of the slowdown.
func TestPresetSlowHost(t *testing.T) {
	res := mustRun(t, SlowHost.Scenario(), SlowHost.Outlier, 1)
	if ev := events(res); len(ev) != 0 || res.Summary.Failures != 0 {
		t.Fatalf("events %v, %d failures", ev, res.Summary.Failures)
	}
	for _, f := range res.Frames[4:] {
		if f.Clients.LatencyP99Ms < 400 {
			t.Errorf("%d ms: p99 %.0f ms", f.TMs, f.Clients.LatencyP99Ms)
		}
	}
	sc := retune(t, SlowHost, map[string]string{"per_try_timeout": "200ms"})
	res = mustRun(t, sc, SlowHost.Outlier, 1)
	ej := engineEvents(res, engine.EventEject)
	if len(ej) == 0 || ej[0].Host != "h2" || ej[0].Detector != engine.Consecutive5xx || ej[0].AtMs < 30000 || ej[0].AtMs > 31000 {
		t.Fatalf("with a per-try timeout: ejections %v", ej)
	}
	if res.Summary.Cluster.PerTryTimeout == 0 || res.Summary.FailurePct > 1 {
		t.Fatalf("per-try timeouts %d, failures %.2f%%", res.Summary.Cluster.PerTryTimeout, res.Summary.FailurePct)
	}
}

// small-fleet: four hosts, fewer than success_rate_minimum_hosts, so success
// rate never runs; a 25% cap admits exactly one ejection; with h3 out the
// three survivors take a third of the traffic each, more than their
// capacity, and clients see shedding (several % failures, p99 ≈ 1 s).
func TestPresetSmallFleet(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		res := mustRun(t, SmallFleet.Scenario(), SmallFleet.Outlier, seed)
		for _, f := range res.Frames {
			if f.SuccessRate.Gate != "too_few_hosts" {
				t.Fatalf("seed %d, %d ms: success-rate gate %q", seed, f.TMs, f.SuccessRate.Gate)
			}
		}
		ej := engineEvents(res, engine.EventEject)
		if len(ej) == 0 || ej[0].Host != "h3" || ej[0].AtMs > 30200 || res.Summary.MaxEjected != 1 {
			t.Fatalf("seed %d: ejections %v, at most %d at once", seed, ej, res.Summary.MaxEjected)
		}
		f := frameAt(t, res, 60000)
		for _, h := range f.Hosts[:3] {
			if h.TrafficShare < 0.3 || h.TrafficShare > 0.37 {
				t.Errorf("seed %d: %s share %.3f with h3 out", seed, h.Name, h.TrafficShare)
			}
		}
		if f.Clients.FailurePct() < 3 || f.Clients.LatencyP99Ms < 500 {
			t.Errorf("seed %d: survivors not saturated: %.1f%% failures, p99 %.0f ms", seed, f.Clients.FailurePct(), f.Clients.LatencyP99Ms)
		}
	}
}

// flapping: h1 fails 20 s out of every 30 s. It is ejected each time it
// comes back while failing; the ejection time grows (30 s → 60 s → 90 s →
// 120 s), stepping back only when it returned into a healthy stretch and
// the backoff decayed for an interval.
func TestPresetFlapping(t *testing.T) {
	res := mustRun(t, Flapping.Scenario(), Flapping.Outlier, 1)
	var durations []int64
	for _, e := range engineEvents(res, engine.EventEject) {
		if e.Host != "h1" || e.Detector != engine.Consecutive5xx {
			t.Fatalf("ejection %+v", e)
		}
		durations = append(durations, e.DurationMs)
	}
	if len(durations) < 5 || durations[0] != 30000 || durations[len(durations)-1] < 120000 {
		t.Fatalf("ejection times %v", durations)
	}
	for i := 1; i < len(durations); i++ {
		if durations[i] < durations[i-1] {
			t.Fatalf("ejection times shrink: %v", durations)
		}
	}
	if len(slices.Compact(slices.Clone(durations))) == len(durations) {
		t.Fatalf("ejection times %v never repeat: the backoff never decayed", durations)
	}
}

// A frame's Peak5xx is the interval's highest consecutive 5xx count: at
// least where the counter stands after the tick, and at least the
// threshold in an interval where consecutive_5xx detected the host. In
// dead-host h3's five refusals eject it between the 20 s and 30 s ticks:
// the counter after the tick reads 0 (the ejection reset it), the peak 5.
// Evenly spaced one-in-three failures (search-cache's h5) never reach the
// threshold: a failure that completes before the success sent ahead of it
// makes 2, now and then 3 within an interval (seeds 1–5: 15 of 135
// intervals), never 5.
func TestPeak5xxFrames(t *testing.T) {
	for _, p := range []Preset{DeadHost, SearchCache} {
		for seed := uint64(1); seed <= 5; seed++ {
			res := mustRun(t, p.Scenario(), p.Outlier, seed)
			for _, f := range res.Frames {
				for _, h := range f.Hosts {
					if h.Consecutive5xx > h.Peak5xx {
						t.Errorf("%s seed %d %d ms %s: counter %d above the interval's peak %d", p.Name, seed, f.TMs, h.Name, h.Consecutive5xx, h.Peak5xx)
					}
				}
				for _, e := range f.Events {
					if e.Kind == engine.EventDetect && e.Detector == engine.Consecutive5xx {
						if h := f.Hosts[hostIndex(t, f, e.Host)]; h.Peak5xx < p.Outlier.Consecutive5xx {
							t.Errorf("%s seed %d %d ms %s: detected with a peak of %d", p.Name, seed, f.TMs, e.Host, h.Peak5xx)
						}
					}
				}
			}
			switch p.Name {
			case DeadHost.Name:
				if h := res.Frames[2].Hosts[3]; res.Frames[2].TMs != 30000 || h.Name != "h3" || h.Peak5xx != 5 || h.Consecutive5xx != 0 || !h.Ejected {
					t.Errorf("dead-host seed %d at %d ms: %s peak %d now %d ejected %v; want h3 peak 5 now 0 ejected", seed, res.Frames[2].TMs, h.Name, h.Peak5xx, h.Consecutive5xx, h.Ejected)
				}
			case SearchCache.Name:
				for _, f := range res.Frames {
					if h := f.Hosts[5]; h.Name != "h5" || h.Peak5xx >= p.Outlier.Consecutive5xx {
						t.Errorf("search-cache seed %d %d ms: %s peak %d", seed, f.TMs, h.Name, h.Peak5xx)
					}
				}
			}
		}
	}
}

func hostIndex(t *testing.T, f Frame, name string) int {
	t.Helper()
	for i, h := range f.Hosts {
		if h.Name == name {
			return i
		}
	}
	t.Fatalf("%d ms: no host %s", f.TMs, name)
	return -1
}
