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
