package labview

import (
	"outlierlab/web/tabstate"
	"testing"
)

// lb_healthy_panic is a cluster stat: the table shows it under
// cluster.<name>., with the load balancer's count, never under
// outlier_detection. burst sends most hosts out at once, into panic.
func TestLbHealthyPanicStat(t *testing.T) {
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "burst"})
	if err != nil {
		t.Fatal(err)
	}
	for cursor := range len(r.Frames) + 1 {
		p := Panels(r, cursor)
		var want, prev uint64
		if cursor > 0 {
			want = r.Frames[cursor-1].Cluster.LbHealthyPanic
		}
		if cursor > 1 {
			prev = r.Frames[cursor-2].Cluster.LbHealthyPanic
		}
		found := 0
		for _, sec := range p.Stats {
			for _, row := range sec.Rows {
				if row.Name != "lb_healthy_panic" {
					continue
				}
				found++
				if sec.Prefix != "cluster.burst." || row.Value != want || row.Delta != want-prev {
					t.Fatalf("cursor %d: %s%s = %d (+%d), want cluster.burst.lb_healthy_panic = %d (+%d)", cursor, sec.Prefix, row.Name, row.Value, row.Delta, want, want-prev)
				}
			}
		}
		if found != 1 {
			t.Fatalf("cursor %d: lb_healthy_panic in %d rows", cursor, found)
		}
	}
	if r.Result.Summary.LbHealthyPanic == 0 {
		t.Fatal("burst never panics: the test shows nothing")
	}
}

// A host whose every answer carries x-envoy-degraded, with
// detect_degraded_hosts on: the hosts table prints Envoy's flag for it
// (HostUtility::healthFlagsToString: /degraded_outlier_detection) and,
// five healthy hosts of six taking the whole healthy load, it gets no
// traffic while degraded; with the switch off it is healthy and serves
// its share.
func TestDegradedHostRow(t *testing.T) {
	kind := -1
	for i, c := range tabstate.ControlByName["fault_kind"].Choices {
		if c == "degraded" {
			kind = i
		}
	}
	if kind < 0 {
		t.Fatal("fault_kind offers no degraded answer")
	}
	for _, detect := range []float64{0, 1} {
		r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache", Values: map[string]float64{
			"fault_kind": float64(kind), "fault_rate": 1, "detect_degraded_hosts": detect}})
		if err != nil {
			t.Fatal(err)
		}
		// search-cache's h5 fails from 30 s; the sweep at 50 s closes an
		// interval all of which it spent degraded (when detected).
		rows := hostRows(r, 5)
		h5 := rows[len(rows)-1]
		if detect == 1 && (h5.HealthFlags != "/degraded_outlier_detection" || h5.Share != "0.0%") {
			t.Errorf("detect_degraded_hosts on: h5 %q with %s of the traffic, want /degraded_outlier_detection and none", h5.HealthFlags, h5.Share)
		}
		if detect == 0 && (h5.HealthFlags != "healthy" || h5.Share == "0.0%") {
			t.Errorf("detect_degraded_hosts off: h5 %q with %s of the traffic, want healthy with its share", h5.HealthFlags, h5.Share)
		}
	}
}

// A value off the number field's grid (search-cache's fault rate, 1/3)
// opens the field with step "any", so it is not :invalid before the
// learner types; a value on the grid keeps the field's step.
func TestNumberFieldNeverStartsInvalid(t *testing.T) {
	c := tabstate.ControlByName["fault_rate"]
	if got := Control(c, 1.0/3).NumStep; got != "any" {
		t.Errorf("fault_rate at 1/3: step %q, want any", got)
	}
	if got := Control(c, 0.25).NumStep; got != "0.001" {
		t.Errorf("fault_rate at 0.25: step %q, want 0.001", got)
	}
}
