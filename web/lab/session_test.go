package lab

import (
	"fmt"
	"testing"
	"time"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// Playback is arithmetic over the clock: no goroutine per tab.
func TestSessionCursorArithmetic(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSession(webtest.Tab, tabstate.Inputs{Preset: tabstate.DefaultPreset}, webtest.DefaultRun(t, 30), tabstate.NewRunCache(4), t0)
	if c := s.cursorAt(t0.Add(time.Hour)); c != 0 {
		t.Fatalf("paused cursor moved to %d", c)
	}
	s.pb.Speed, _ = tabstate.LookupSpeed("4")
	s.setCursor(3, t0)
	s.pb.Playing = true
	for _, tt := range []struct {
		after time.Duration
		want  int
	}{{0, 3}, {249 * time.Millisecond, 3}, {250 * time.Millisecond, 4}, {time.Second, 7}, {time.Hour, 30}} {
		if c := s.cursorAt(t0.Add(tt.after)); c != tt.want {
			t.Errorf("after %v: cursor %d, want %d", tt.after, c, tt.want)
		}
	}
	if next := s.pb.NextFrameAt(t0.Add(100 * time.Millisecond)); next != t0.Add(250*time.Millisecond) {
		t.Errorf("next frame at %v, want +250ms", next.Sub(t0))
	}
	if s.isPlaying(t0.Add(time.Hour)) {
		t.Error("still playing past the end")
	}
	s.pb.Speed, _ = tabstate.LookupSpeed("instant")
	if c := s.cursorAt(t0); c != 30 {
		t.Errorf("instant: cursor %d, want 30", c)
	}
}

// The store is bounded: idle sessions expire, and past the limit the least
// recently used go first, sessions with an open stream last.
func TestSessionStoreBounds(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := webtest.DefaultRun(t, -1)
	st := newSessionStore(3, time.Minute)
	st.grace = 0
	tab := func(i int) string { return fmt.Sprintf("tab-%016d", i) }
	for i := range 3 {
		st.put(newSession(tab(i), tabstate.Inputs{}, run, tabstate.NewRunCache(4), t0), t0)
	}
	// tab 0 streams; tab 1 is used; adding tab 3 evicts tab 2.
	st.Get(tab(0)).streams = 1
	st.Get(tab(1))
	st.put(newSession(tab(3), tabstate.Inputs{}, run, tabstate.NewRunCache(4), t0), t0)
	if st.Get(tab(2)) != nil || st.Get(tab(0)) == nil || st.len() != 3 {
		t.Fatalf("LRU eviction: tab2 %v tab0 %v len %d", st.Get(tab(2)) != nil, st.Get(tab(0)) != nil, st.len())
	}
	// Two minutes later every session without a stream has expired.
	later := t0.Add(2 * time.Minute)
	st.put(newSession(tab(4), tabstate.Inputs{}, run, tabstate.NewRunCache(4), later), later)
	if st.len() != 2 || st.Get(tab(0)) == nil || st.Get(tab(4)) == nil {
		t.Fatalf("expiry: len %d", st.len())
	}
	// put of a known tab returns the session already there.
	if got := st.put(newSession(tab(4), tabstate.Inputs{}, run, tabstate.NewRunCache(4), later), later); got != st.Get(tab(4)) {
		t.Error("put replaced a live session")
	}
}

func TestRunCache(t *testing.T) {
	t.Parallel()
	c := tabstate.NewRunCache(2)
	a, err := c.Get(tabstate.Inputs{Preset: tabstate.DefaultPreset})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Get(tabstate.Inputs{Preset: tabstate.DefaultPreset})
	if a != b {
		t.Error("same inputs, two runs")
	}
	// A stream's signals carry every control's value; where they equal the
	// preset's, the page's run is the stream's run.
	if all, _ := c.Get(tabstate.Inputs{Preset: tabstate.DefaultPreset}.With(tabstate.PresetValues(tabstate.DefaultPreset))); all != a {
		t.Error("the preset's own values made a second run")
	}
	in := tabstate.Inputs{Preset: tabstate.DefaultPreset}.With(map[string]float64{"max_ejection_percent": 34})
	d, _ := c.Get(in)
	if d == a || d.Config.MaxEjectionPercent != 34 {
		t.Errorf("cap 34 run: %d", d.Config.MaxEjectionPercent)
	}
	c.Get(tabstate.Inputs{Preset: "dead-host"})
	if c.Has(tabstate.Inputs{Preset: tabstate.DefaultPreset}) {
		t.Error("least recently used run not evicted")
	}
	if _, err := c.Get(tabstate.Inputs{Preset: "nope"}); err != tabstate.ErrUnknownPreset {
		t.Errorf("unknown preset: %v", err)
	}
	// The byte bound: a cache that holds one run's worth keeps the newest.
	c = tabstate.NewRunCacheBytes(10, a.Size)
	c.Get(tabstate.Inputs{Preset: tabstate.DefaultPreset})
	c.Get(in)
	if c.Runs.Len() != 1 || c.HeldBytes() != d.Size {
		t.Errorf("byte bound: %d runs, %d bytes", c.Runs.Len(), c.HeldBytes())
	}
}
