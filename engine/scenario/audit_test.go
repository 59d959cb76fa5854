package scenario

// Independent audit: invariants from shared/docs/envoy-semantics.md that
// must hold in every run of every preset (and a few knob variants).

import (
	"fmt"
	"testing"

	"outlierlab/engine"
)

func auditRuns(t *testing.T) []Result {
	t.Helper()
	var out []Result
	for _, p := range Presets() {
		variants := []map[string]string{nil, {"active_hc": "true", "hc_shares_fault": "true"}}
		for vi, knobs := range variants {
			sc, err := ApplyKnobs(p.Scenario(), knobs)
			if err != nil {
				if vi == 1 {
					continue // no primary fault to share with the health check
				}
				t.Fatalf("%s: %v", p.Name, err)
			}
			cfg := sc.Outlier
			if vi == 1 {
				cfg.MaxEjectionPercent = 50
			}
			res, err := Run(sc, cfg, 7)
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			out = append(out, res)
		}
	}
	return out
}

// §4.2: Σ detected = overflow + unenforced detections + enforced, and each
// event kind matches its stat; §10: ejections_active equals the hosts
// carrying the flag (no preset enforces FP, so no double ejection).
// §6.1: a time-elapsed uneject happens at the first tick at or after
// lastEjection + min(base·backoff, max) + jitter; an HC uneject never
// happens at a tick's instant after the time was up.
// §7.3: the panic flag after each tick follows from the healthy count.
func TestAuditRunInvariants(t *testing.T) {
	for _, res := range auditRuns(t) {
		name := fmt.Sprintf("%s/hc=%v", res.Scenario.Name, res.Scenario.Cluster.HealthCheck.Enabled)
		t.Run(name, func(t *testing.T) {
			cfg := res.Config
			iv := cfg.IntervalMs
			type ej struct {
				at, dur int64
			}
			open := map[string]ej{}
			var detects, overflows, ejects uint64
			for _, f := range res.Frames {
				for _, e := range f.Events {
					switch e.Kind {
					case engine.EventEject:
						ejects++
						if _, dup := open[e.Host]; dup {
							t.Fatalf("%s ejected twice at %d", e.Host, e.AtMs)
						}
						if e.DurationMs != min(cfg.BaseEjectionTimeMs*int64(e.Backoff), cfg.MaxEjectionTimeMs)+e.JitterMs {
							t.Fatalf("eject %+v: duration", e)
						}
						open[e.Host] = ej{e.AtMs, e.DurationMs}
					case engine.EventDetect:
						detects++
					case engine.EventOverflow:
						overflows++
					case engine.EventUneject:
						o, ok := open[e.Host]
						if !ok {
							t.Fatalf("uneject of %s that was not ejected at %d", e.Host, e.AtMs)
						}
						delete(open, e.Host)
						elapsed := e.AtMs - o.at
						switch e.Cause {
						case engine.UnejectTimeElapsed:
							if e.AtMs%iv != 0 || elapsed < o.dur || elapsed-o.dur >= iv {
								t.Fatalf("%s unejected at %d: ejected %d for %d ms, want the first tick at or after", e.Host, e.AtMs, o.at, o.dur)
							}
						case engine.UnejectActiveHealthCheck:
							if !res.Scenario.Cluster.HealthCheck.Enabled || !cfg.SuccessfulActiveHealthCheckUnejectHost {
								t.Fatalf("HC uneject without an active health checker")
							}
						}
						if e.EjectedMs != elapsed {
							t.Fatalf("uneject %+v: EjectedMs %d, want %d", e, e.EjectedMs, elapsed)
						}
					}
				}
				st := f.Stats
				var detected uint64
				for _, s := range []engine.Stat{
					engine.StatEjectionsDetectedConsecutive5xx, engine.StatEjectionsDetectedConsecutiveGatewayFailure,
					engine.StatEjectionsDetectedConsecutiveLocalOriginFailure, engine.StatEjectionsDetectedSuccessRate,
					engine.StatEjectionsDetectedLocalOriginSuccessRate, engine.StatEjectionsDetectedFailurePercentage,
					engine.StatEjectionsDetectedLocalOriginFailurePercentage,
				} {
					detected += st[s]
				}
				if detected != overflows+detects+ejects || st[engine.StatEjectionsOverflow] != overflows || st[engine.StatEjectionsEnforcedTotal] != ejects {
					t.Fatalf("at %d: detected %d, overflow %d/%d, detect %d, enforced %d/%d", f.TMs, detected, st[engine.StatEjectionsOverflow], overflows, detects, st[engine.StatEjectionsEnforcedTotal], ejects)
				}
				ejected, healthy := 0, 0
				for _, h := range f.Hosts {
					if h.Ejected {
						ejected++
					}
					if !h.Ejected && !h.FailedActiveHC {
						healthy++
					}
				}
				if uint64(ejected) != st[engine.StatEjectionsActive] || ejected != len(open) {
					t.Fatalf("at %d: %d hosts ejected, gauge %d, open %d", f.TMs, ejected, st[engine.StatEjectionsActive], len(open))
				}
				if healthy != f.Healthy {
					t.Fatalf("at %d: %d healthy hosts, frame says %d", f.TMs, healthy, f.Healthy)
				}
				n := uint64(len(f.Hosts))
				thr := min(res.Scenario.Cluster.HealthyPanicThreshold, 100)
				avail := min(100, 140*uint64(healthy)/n)
				wantPanic := !(thr == 0 && avail == 0) && avail < 100 && 100.0*float64(healthy)/float64(n) < float64(thr)
				if f.PanicAtEnd != wantPanic {
					t.Fatalf("at %d: %d/%d healthy, threshold %d: panic %v, want %v", f.TMs, healthy, n, thr, f.PanicAtEnd, wantPanic)
				}
			}
		})
	}
}

// §15: a run is a pure function of (scenario, config, seed).
func TestAuditDeterminism(t *testing.T) {
	for _, p := range Presets() {
		a, err := Run(p.Scenario(), p.Outlier, 11)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Run(p.Scenario(), p.Outlier, 11)
		if fmt.Sprintf("%+v", a.Summary) != fmt.Sprintf("%+v", b.Summary) || len(a.Frames) != len(b.Frames) {
			t.Fatalf("%s: two runs differ", p.Name)
		}
		for i := range a.Frames {
			if fmt.Sprintf("%+v", a.Frames[i]) != fmt.Sprintf("%+v", b.Frames[i]) {
				t.Fatalf("%s: frame %d differs", p.Name, i)
			}
		}
	}
}
