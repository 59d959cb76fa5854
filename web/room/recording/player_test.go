package recording

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
)

var tabReplay = webtest.TabOf("replay-tab-0000000000001")

// playerOn is a player of entries at 1× and the session of a search-cache
// tab it drives.
func playerOn(t *testing.T, s *Recordings, entries []record.TimelineEntry) (*recordingPlayer, *lab.Session) {
	t.Helper()
	p, err := s.newPlayer("ABCDEF", entries, replaySignals{RecSpeed: "1"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.lab.SessionFor(&lab.TabSignals{Tab: tabReplay, Preset: "search-cache"}, webtest.Browser, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return p, sess
}

// The player's clock: at 1× an entry ten seconds into the workshop is
// applied ten seconds after play; switched to 30× two seconds later, the
// one two minutes in follows 3.6 s later (108 s at 30×); each is
// applied with the room's cursor at its moment, its playback sped up by
// the player's speed; pause freezes the clock and seek jumps to an entry.
func TestRecordingPlayerSpeed(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := clockRecordings(t, &now)
	t0 := now.Add(-time.Hour).UnixMilli()
	st := func(mep float64, playing bool, anchorAt int64) record.State {
		return record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"max_ejection_percent": mep}, Playing: playing, AnchorAtMs: anchorAt}
	}
	entries := []record.TimelineEntry{
		{TMs: t0, Kind: "start", State: st(10, false, 0)},
		{TMs: t0 + 10_000, Kind: "state", State: st(20, true, t0+10_000)},
		{TMs: t0 + 120_000, Kind: "state", State: st(30, false, 0)},
	}
	entries[2].State.Anchor = 7
	p, sess := playerOn(t, s, entries)
	state := func() (mep float64, cursor int, playing bool, fps float64) {
		st := sess.State()
		return st.In.Values["max_ejection_percent"], st.Playback.CursorAt(now, len(st.Run.Frames)), st.Playback.Playing, st.Playback.Speed.FPS
	}
	cmd := func(verb, q string) {
		t.Helper()
		if err := p.command(verb, httptest.NewRequest("POST", "/r/ABCDEF/recording/"+verb+q, nil)); err != nil {
			t.Fatalf("%s%s: %v", verb, q, err)
		}
	}
	if p.end != 120_000 {
		t.Fatalf("the recording's end is %d ms, want 120000 (its last entry is paused)", p.end)
	}
	p.catchUp(sess)
	if mep, c, _, _ := state(); mep != 10 || c != 0 {
		t.Fatalf("at the start: max_ejection_percent %v, cursor %d", mep, c)
	}
	cmd("play", "")
	now = now.Add(9900 * time.Millisecond)
	wake, _ := p.catchUp(sess)
	if mep, _, _, _ := state(); mep != 10 || !wake.Equal(now.Add(100*time.Millisecond)) {
		t.Fatalf("at 9.9 s: max_ejection_percent %v, next wake in %v", mep, wake.Sub(now))
	}
	now = now.Add(100 * time.Millisecond)
	p.catchUp(sess)
	if mep, c, playing, fps := state(); mep != 20 || c != 0 || !playing || fps != 1 {
		t.Fatalf("at 10 s (1×): max_ejection_percent %v, cursor %d, playing %v at %v frames/s", mep, c, playing, fps)
	}
	now = now.Add(2 * time.Second) // the room's playback runs on: 2 frames
	if _, c, _, _ := state(); c != 2 {
		t.Fatalf("2 s into the entry at 1×: cursor %d, want 2", c)
	}
	cmd("speed", "?speed=30")
	p.catchUp(sess)
	if _, c, playing, fps := state(); c != 2 || !playing || fps != 30 {
		t.Fatalf("switched to 30×: cursor %d, playing %v at %v frames/s (want 2, true, 30)", c, playing, fps)
	}
	now = now.Add(3500 * time.Millisecond) // 12 s + 105 s = 117 s
	p.catchUp(sess)
	if mep, _, _, _ := state(); mep != 20 {
		t.Fatalf("before 120 s at 30×: max_ejection_percent %v, want 20", mep)
	}
	now = now.Add(200 * time.Millisecond) // 123 s: past the end
	p.catchUp(sess)
	if mep, c, playing, _ := state(); mep != 30 || c != 7 || playing {
		t.Fatalf("at 120 s: max_ejection_percent %v, cursor %d, playing %v (want 30, 7, paused)", mep, c, playing)
	}
	p.mu.Lock()
	stopped := !p.playing && p.at == p.end
	p.mu.Unlock()
	if !stopped {
		t.Fatal("the player did not stop at the end")
	}
	cmd("seek", "?entry=1")
	p.catchUp(sess)
	if mep, c, playing, _ := state(); mep != 20 || c != 0 || playing {
		t.Fatalf("seek to entry 1 (paused): max_ejection_percent %v, cursor %d, playing %v", mep, c, playing)
	}
	now = now.Add(time.Minute)
	p.catchUp(sess)
	if mep, c, _, _ := state(); mep != 20 || c != 0 {
		t.Fatalf("a minute paused: max_ejection_percent %v, cursor %d", mep, c)
	}
	// A lab command on the tab (a key pressed on the page) is undone.
	moved := sess.State()
	moved.Playback = moved.Playback.At(20, now, len(moved.Run.Frames))
	sess.Follow(moved)
	p.catchUp(sess)
	if _, c, _, _ := state(); c != 0 {
		t.Fatalf("the tab's own move stayed: cursor %d", c)
	}
}

// Entries a millisecond apart, passed while the stream slept: each is
// still applied, in order, one per pass, and the player stops at the end.
func TestRecordingPlayerShowsEveryEntry(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := clockRecordings(t, &now)
	t0 := now.Add(-time.Hour).UnixMilli()
	var entries []record.TimelineEntry
	for i, at := range []int64{0, 10_000, 10_001, 10_002} {
		entries = append(entries, record.TimelineEntry{TMs: t0 + at, Kind: "state", State: record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"max_ejection_percent": float64(10 * (i + 1))}}})
	}
	p, sess := playerOn(t, s, entries)
	p.catchUp(sess)
	if err := p.command("play", httptest.NewRequest("POST", "/r/ABCDEF/recording/play", nil)); err != nil {
		t.Fatal(err)
	}
	p.catchUp(sess)
	now = now.Add(20 * time.Second)
	var got []float64
	for range 4 {
		p.catchUp(sess)
		got = append(got, sess.State().In.Values["max_ejection_percent"])
	}
	if fmt.Sprint(got) != "[20 30 40 40]" {
		t.Errorf("max_ejection_percent after each pass: %v, want [20 30 40 40]", got)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.playing || p.at != p.end || p.applied != 3 {
		t.Errorf("at the end: playing %v, at %d of %d, entry %d", p.playing, p.at, p.end, p.applied)
	}
}

// The players of one room share its recording until an entry is added;
// and the players' streams on a server are bounded (503 past the bound,
// naming it), as each holds a recording.
func TestRecordingPlayersBounded(t *testing.T) {
	s := startTimeline(t)
	ts := serve(t, s)
	code := record.NewCode()
	st := record.State{Preset: "search-cache", Speed: "1"}
	s.timeline.Append(t.Context(), code, 1, "start", st, nil)
	a, _, err := s.sharedRecordingOf(t.Context(), code)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := s.sharedRecordingOf(t.Context(), code)
	if len(a) != 1 || &a[0] != &b[0] {
		t.Errorf("two players of an unchanged recording: %d entries, shared %v", len(a), len(b) > 0 && &a[0] == &b[0])
	}
	st.Cfg = map[string]float64{"max_ejection_percent": 30}
	s.timeline.Append(t.Context(), code, 2, "state", st, nil)
	if c, _, _ := s.sharedRecordingOf(t.Context(), code); len(c) != 2 || c[1].State.Cfg["max_ejection_percent"] != 30 {
		t.Errorf("after a move the players read %d entries, want 2", len(c))
	}

	s.players.mu.Lock()
	s.players.maxStreams = 1
	s.players.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	first := roomtest.OpenSSE(t, ctx, ts.URL, "/r/"+code+"/recording/stream", `{"tab":"`+tabReplay+`"}`)
	webtest.WaitFor(t, first, "the first player's redraw", roomtest.Charted)
	res, err := http.DefaultClient.Do(webtest.StreamRequest(ctx, ts.URL, "/r/"+code+"/recording/stream", `{"tab":"`+webtest.TabOf("replay-tab-0000000000002")+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "plays as many workshop recordings at once as it may") {
		t.Errorf("a player past the bound: %d %s", res.StatusCode, body)
	}
}

// A player's stream building a run (heavy settings take a while) does not
// hold the player's lock: a command on the player, from the transport's
// buttons, is taken meanwhile. catchUp used to build under the lock.
func TestPlayerBuildsRunsOutsideItsLock(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := clockRecordings(t, &now)
	t0 := now.Add(-time.Hour).UnixMilli()
	st := func(mep float64) record.State {
		return record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"max_ejection_percent": mep}}
	}
	p, sess := playerOn(t, s, []record.TimelineEntry{{TMs: t0, Kind: "start", State: st(15)}, {TMs: t0 + 10_000, Kind: "state", State: st(20)}})
	building, release := make(chan struct{}), make(chan struct{})
	s.lab.Runs.Build = func(in tabstate.Inputs) (*tabstate.Run, error) {
		if in.Values["max_ejection_percent"] == 15 {
			close(building)
			<-release
		}
		return tabstate.BuildRun(in)
	}
	caughtUp := make(chan struct{})
	go func() { defer close(caughtUp); p.catchUp(sess) }()
	<-building
	took := make(chan error, 1)
	go func() { took <- p.command("pause", httptest.NewRequest("POST", "/r/ABCDEF/recording/pause", nil)) }()
	select {
	case err := <-took:
		if err != nil {
			t.Fatalf("pause: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("a command waited for the player's run to be built")
	}
	close(release)
	<-caughtUp
	if v := sess.State().In.Values["max_ejection_percent"]; v != 15 {
		t.Errorf("after the build the tab is at max_ejection_percent %v, want the first entry's 15", v)
	}
}
