package labview

import (
	"strings"
	"testing"

	"outlierlab/web/tabstate"
)

// The streaks figure words the engine's counters: dead-host's h3 at each
// cursor, its boxes scaled to a threshold past the row's bound, and the
// two runs it draws no counter for, each saying why.
func TestStreaks(t *testing.T) {
	build := func(preset string, values map[string]float64) *tabstate.Run {
		t.Helper()
		r, err := tabstate.BuildRun(tabstate.Inputs{Preset: preset, Values: values})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	dead := build("dead-host", nil)
	for _, tc := range []struct {
		cursor    int
		text      string
		now, peak int
		caption   string
	}{
		{0, "0 in a row of 5", 0, 0, "at t = 0"},
		{2, "0 in a row of 5", 0, 0, "at the 20 s tick"},
		{3, "0 in a row of 5; reached 5 in 20–30 s; ejected", 0, 5, "the most it reached in 20–30 s"},
		{4, "0 in a row of 5; ejected", 0, 0, "at the 40 s tick"},
	} {
		v := Streaks(dead, tc.cursor)
		h := v.Hosts[3]
		if h.Name != "h3" || h.Text != tc.text || h.Now != tc.now || h.Peak != tc.peak || v.Cells != 5 || !strings.Contains(v.Caption, tc.caption) {
			t.Errorf("cursor %d: %+v, caption %q; want %q, boxes %d/%d of 5, caption with %q", tc.cursor, h, v.Caption, tc.text, tc.now, tc.peak, tc.caption)
		}
	}
	// A threshold of 100 draws the row's 20 boxes, 5 failures each: h3
	// reaches 100 between 20 and 30 s, all 20 pale.
	if v := Streaks(build("dead-host", map[string]float64{"consecutive_5xx": 100}), 3); v.Cells != 20 || v.Hosts[3].Peak != 20 || !strings.Contains(v.Hosts[3].Text, "reached 100 in 20–30 s") {
		t.Errorf("threshold 100: %d boxes, h3 %+v", v.Cells, v.Hosts[3])
	}
	for _, tc := range []struct {
		values map[string]float64
		off    string
	}{
		{map[string]float64{"consecutive_5xx": 0}, "consecutive_5xx is 0"},
		{map[string]float64{"dialect": 1}, "gRPC's dialect counts no failures in a row"},
	} {
		if v := Streaks(build("dead-host", tc.values), 3); !strings.HasPrefix(v.Off, tc.off) || len(v.Hosts) != 0 {
			t.Errorf("%v: off %q, %d rows; want %q and none", tc.values, v.Off, len(v.Hosts), tc.off)
		}
	}
}
