package spotlight

import (
	"testing"

	"outlierlab/web/tabstate"
)

// A log line's spotlight covers the intervals the line stands for: one
// decision its own interval, a folded run of non-events every interval
// of the run the page shows (search-cache: "no host below" at 10, 20 and
// 30 s is one line, lg-0-0), never past the cursor.
func TestLogLine(t *testing.T) {
	r, err := tabstate.BuildRun(tabstate.Inputs{Preset: "search-cache"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		frame, pos, cursor, want int
	}{
		{3, 0, 30, 3}, // h5's overflow at 40 s: a decision, never folded
		{0, 0, 30, 2}, // 10–30 s: the run ends where h5 is detected
		{0, 0, 2, 1},  // the page at 20 s shows 10–20 s
		{0, 0, 0, 0},  // a cursor before the line: the line itself
	} {
		if got := logLineEnd(r, c.frame, c.pos, c.cursor); got != c.want {
			t.Errorf("lg-%d-%d at cursor %d ends at frame %d, want %d", c.frame, c.pos, c.cursor, got, c.want)
		}
	}
	for id, ok := range map[string]bool{"lg-3-0": true, "lg-12-1": true, "lg-3": false, "lg--1-0": false, "lg-3-x": false, "x-3-0": false, "lg-3-0-1": false} {
		if _, _, got := parseLogID(id); got != ok {
			t.Errorf("parseLogID(%q) = %t, want %t", id, got, ok)
		}
	}
}
