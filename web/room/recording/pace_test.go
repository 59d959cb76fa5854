package recording

import (
	"fmt"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/room/record"
)

// Issue 34, item 2: a room's "state" entries (its instructor tab's moves)
// are recorded at their pace, 100 at once then 20 a second, and the last
// one is always recorded, in order; an entry of the room's own after a
// held state drops it (its state is newer).
func TestTimelinePacesStates(t *testing.T) {
	s := startTimeline(t)
	code := record.NewCode()
	st := func(i int) record.State {
		return record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"interval": float64(i)}}
	}
	const moves = 400
	start := time.Now()
	for i := 1; i <= moves; i++ {
		s.timeline.Append(t.Context(), code, uint64(i), "state", st(i), nil)
	}
	took := time.Since(start)
	var entries []record.TimelineEntry
	roomtest.WaitUntil(t, "the last move recorded", func() bool {
		var err error
		entries, err = s.timeline.Read(t.Context(), code)
		return err == nil && len(entries) > 0 && entries[len(entries)-1].State.Cfg["interval"] == moves
	})
	t.Logf("%d moves in %v: %d recorded", moves, took.Round(time.Millisecond), len(entries))
	if limit := statesBurst + int(took.Seconds()*statesPerSecond) + 1; len(entries) > limit {
		t.Errorf("%d of %d moves recorded within %v, want at most %d", len(entries), moves, took.Round(time.Millisecond), limit)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].State.Cfg["interval"] <= entries[i-1].State.Cfg["interval"] {
			t.Fatalf("entry %d (move %v) after move %v: out of order", i, entries[i].State.Cfg["interval"], entries[i-1].State.Cfg["interval"])
		}
	}

	// The pace spent: a move held back, then the spotlight (newer).
	for i := moves + 1; i <= moves+statesBurst+5; i++ {
		s.timeline.Append(t.Context(), code, uint64(i), "state", st(i), nil)
	}
	spot := st(moves + statesBurst + 5)
	spot.Spot = &record.Spot{Host: "h3"}
	s.timeline.Append(t.Context(), code, uint64(moves+statesBurst+6), "spotlight", spot, nil)
	// The held move is dropped, and once the pace's timer has run the
	// spotlight is still the recording's last entry.
	held := func() (bool, bool) {
		s.timeline.pace.mu.Lock()
		defer s.timeline.pace.mu.Unlock()
		rp := s.timeline.pace.rooms[code]
		return rp.held != nil, rp.timer != nil
	}
	if h, _ := held(); h {
		t.Error("a move older than the spotlight is still held back")
	}
	roomtest.WaitUntil(t, "the pace's timer has run", func() bool { _, timer := held(); return !timer })
	last, err := s.timeline.Read(t.Context(), code)
	if err != nil || len(last) == 0 || last[len(last)-1].Kind != "spotlight" {
		var kinds []string
		for _, e := range last[max(0, len(last)-3):] {
			kinds = append(kinds, fmt.Sprintf("%s %v", e.Kind, e.State.Cfg["interval"]))
		}
		t.Errorf("after the spotlight the recording ends %v (%v): a held move came after a newer entry", kinds, err)
	}
}
