package room

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"strings"
	"testing"
	"time"

	"outlierlab/web/chart"
	"outlierlab/web/roombus"
	"outlierlab/web/tabstate"
)

const tabReplay = "replay-tab-0000000000001"

// openReplayStream opens a tab's recording player stream.
func openReplayStream(t *testing.T, base, code, signals string) <-chan webtest.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return openSSE(t, ctx, base+"/r/"+code+"/recording/stream?datastar="+url.QueryEscape(signals))
}

// chartCall is the charts' script of a redraw event.
func chartCall(data string) string {
	i := strings.Index(data, "applyCharts(")
	j := strings.LastIndex(data, "</script>")
	if i < 0 || j < i {
		return data
	}
	return data[i:j]
}

// redrawn reports a redraw's charts: every option, replacing the old.
func redrawn(ev webtest.Event) bool {
	return strings.Contains(ev.Data, "applyCharts(") && strings.Contains(ev.Data, ",true,")
}

// A test workshop on replica B's follower, then its recording played by
// the player on replica A as fast as possible: the player's stream
// redraws the charts of every entry, in order, exactly as the follower
// redrew them live (the same options, byte for byte), and ends on the
// last. Its words name what the instructor did. The workshop plays at
// the instant speed, so that each live redraw's cursor does not depend
// on when the follower's stream woke.
func TestRecordingPlayerReplaysLiveRedraws(t *testing.T) {
	la, lb := twoReplicas(t)
	code, key := la.createRoom(t, `{"preset":"search-cache"}`)
	follower := openRoomStream(t, lb.ts.URL, code, roomSig(tabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", redrawn)
	lb.s.rooms.mu.Lock()
	hub := lb.s.rooms.hubs[code]
	lb.s.rooms.mu.Unlock()
	// live is what the follower's stream redrew at each state: the charts
	// of the run and cursor its session took (stream.go's redraw), read
	// once the session applied the room's revision.
	var live []string
	take := func(what string) {
		t.Helper()
		rev := hub.current().rev
		sess := lb.s.Sessions.Get(tabFollower)
		waitUntil(t, "the follower applied "+what, func() bool {
			tr := tieOf(sess)
			tr.mu.Lock()
			defer tr.mu.Unlock()
			return tr.applied >= rev
		})
		st := sess.State()
		js, err := chart.NewScripts().At(st.Run, st.Playback.CursorAt(lb.s.Now(), len(st.Run.Frames)), true)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, js)
	}
	take("the start")
	present := roomSig(tabPresenter, code, "present", `"preset":"search-cache"`)
	with := func(extra string) string { return strings.Replace(present, "}", ","+extra+"}", 1) }
	var q record.Question
	actions := []struct {
		what string
		do   func()
	}{
		{"set", func() { roomPost(t, la.ts.URL, "set", with(`"seq":1,"cfg":{"max_ejection_percent":34}`), code, key) }},
		{"scrub", func() { roomPost(t, la.ts.URL, "scrub", with(`"seq":2,"cursor":10`), code, key) }},
		{"speed", func() { roomPost(t, la.ts.URL, "speed", with(`"speed":"instant"`), code, key) }},
		{"play", func() { roomPost(t, la.ts.URL, "play", present, code, key) }},
		{"inject", func() { roomPost(t, la.ts.URL, "inject", with(`"injectHost":"h2"`), code, key) }},
		{"question", func() {
			_, body := roomCall(t, "POST", la.ts.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":80}`, code, key, "")
			if json.Unmarshal([]byte(body), &q) != nil {
				t.Fatalf("question: %s", body)
			}
		}},
		{"reveal", func() {
			if st, body := roomCall(t, "POST", la.ts.URL+"/r/"+code+"/answer?q="+q.ID+"&a=1", `{}`, code, "", la.att(t, code, "someone")); st != 204 {
				t.Fatalf("answer: %d %s", st, body)
			}
			if st, body := roomCall(t, "POST", la.ts.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, ""); st != 200 {
				t.Fatalf("reveal: %d %s", st, body)
			}
		}},
		{"spotlight", func() { roomCall(t, "POST", la.ts.URL+"/r/"+code+"/spotlight?host=h5", "", code, key, "") }},
	}
	for _, a := range actions {
		before := hub.current().rev
		a.do()
		waitUntil(t, "replica B has the "+a.what, func() bool { return hub.current().rev > before })
		take(a.what)
	}

	ev := openReplayStream(t, la.ts.URL, code, `{"tab":"`+tabReplay+`","preset":"search-cache","recSpeed":"max"}`)
	if got := chartCall(webtest.WaitFor(t, ev, "the player's first redraw", redrawn).Data); got != live[0] {
		t.Fatalf("the player opens on another redraw than the workshop's start:\n%s\n%s", webtest.Head(got, 200), webtest.Head(live[0], 200))
	}
	if st, body := roomCall(t, "POST", la.ts.URL+"/r/"+code+"/recording/play", `{"tab":"`+tabReplay+`"}`, code, "", ""); st != 204 {
		t.Fatalf("play: %d %s", st, body)
	}
	var told []string
	var lastTold string
	stopped := signalPatch(`"recPlaying":false`, `"recPct":"100.0"`)
	var endSeen bool
	// Play shows the current entry again, then each next one; the last
	// played instantly, so the recording ends at its moment. Each entry
	// is told in words in the update of its redraw, before it (the
	// player's part of a pass comes before the lab's); the first was told
	// when the player opened.
	for i, w := range live {
		if got := chartCall(webtest.WaitFor(t, ev, "the player's redraw", func(e webtest.Event) bool {
			if _, after, ok := strings.Cut(e.Data, `id="rec-now" class="rec-now" aria-live="polite" data-entry="`); ok {
				told = append(told, after[:strings.IndexByte(after, '"')])
				lastTold = e.Data
			}
			endSeen = endSeen || i == len(live)-1 && stopped(e)
			return redrawn(e)
		}).Data); got != w {
			t.Fatalf("redraw %d of the replay differs from the live one:\nreplay %s\nlive   %s", i, webtest.Head(got, 300), webtest.Head(w, 300))
		}
	}
	if !strings.Contains(lastTold, `data-entry="8"`) || !strings.Contains(lastTold, "Spotlight on host h5") {
		t.Errorf("the last entry told: %s, want entry 8, the spotlight on h5", webtest.Head(lastTold, 300))
	}
	if got, want := strings.Join(told, " "), "1 2 3 4 5 6 7 8"; got != want {
		t.Errorf("entries told: %s, want %s", got, want)
	}
	if !endSeen {
		webtest.WaitFor(t, ev, "the player stopped at the end", stopped)
	}
	expectNone(t, ev, 300*time.Millisecond, "a redraw after the end", redrawn)

	st, page := roomCall(t, "GET", la.ts.URL+"/r/"+code+"/recording", "", code, "", "")
	for _, w := range []string{
		`id="rec-player"`, `/r/` + code + `/recording/stream`,
		"The workshop started on preset search-cache, paused at 0 s",
		"Instructor set max_ejection_percent to 34",
		"Instructor moved the cursor to 100 s",
		"Instructor set the speed to instant",
		"Instructor pressed play at 300 s",
		"Instructor set the injected faults to h2@",
		"Question: How many hosts are ejected at 80 s? — the room waits before 80 s for the answers",
		"Question: How many hosts are ejected at 80 s? — revealed: ",
		"(1 said 1)",
		"Spotlight on host h5",
	} {
		if st != 200 || !strings.Contains(page, w) {
			t.Errorf("the recording page lacks %q: %d %s", w, st, webtest.Head(page, 300))
		}
	}
}

// Bad input names the field and the allowed values; an unknown room is
// 404 on every route of the recording.
func TestRecordingPlayerBadInput(t *testing.T) {
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, _ := l.createRoom(t, `{"preset":"search-cache"}`)
	tab := `{"tab":"` + tabReplay + `"}`
	for _, c := range []struct {
		method, path, body string
		want               int
		msg                string
	}{
		{"POST", "/r/" + code + "/recording/speed?speed=7", tab, 422, `speed: "7" is not a replay speed (allowed 1, 2, 4, 8, 30, max)`},
		{"POST", "/r/" + code + "/recording/speed", tab, 422, `speed: "" is not a replay speed (allowed 1, 2, 4, 8, 30, max)`},
		{"GET", "/r/" + code + "/recording?speed=fast", "", 422, `speed: "fast" is not a replay speed (allowed 1, 2, 4, 8, 30, max)`},
		{"GET", "/r/" + code + "/recording/stream?datastar=" + url.QueryEscape(`{"tab":"`+tabReplay+`","recSpeed":"0.5"}`), "", 422, `speed: "0.5" is not a replay speed`},
		{"POST", "/r/" + code + "/recording/seek?entry=1", tab, 422, `entry: "1" is not an entry (allowed 0–0)`},
		{"POST", "/r/" + code + "/recording/seek?entry=-1", tab, 422, `entry: "-1" is not an entry`},
		{"POST", "/r/" + code + "/recording/rewind", tab, 404, `"rewind" is not a player command (allowed play, pause, speed, seek)`},
		{"POST", "/r/" + code + "/recording/play", `{"tab":"x"}`, 400, `tab: "x" is not a tab id`},
		{"GET", "/r/ZZZZZZ/recording", "", 404, "There is no workshop ZZZZZZ"},
		{"GET", "/r/ZZZZZZ/recording/stream", "", 404, "there is no such room"},
		{"POST", "/r/ZZZZZZ/recording/play", tab, 404, "there is no such room"},
		{"GET", "/r/ZZZZZZ/recording.json", "", 404, ""},
	} {
		if st, body := roomCall(t, c.method, l.ts.URL+c.path, c.body, code, "", ""); st != c.want || !strings.Contains(body, c.msg) {
			t.Errorf("%s %s: %d %s (want %d, %q)", c.method, c.path, st, webtest.Head(body, 200), c.want, c.msg)
		}
	}
}

// The player's clock: at 1× an entry ten seconds into the workshop is
// applied ten seconds after play; switched to 30× two seconds later, the
// one two minutes in follows 3.6 s later (108 s at 30×); each is
// applied with the room's cursor at its moment, its playback sped up by
// the player's speed; pause freezes the clock and seek jumps to an entry.
func TestRecordingPlayerSpeed(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := clockServer(t, &now)
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
	p, err := s.newPlayer("ABCDEF", entries, replaySignals{RecSpeed: "1"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.SessionFor(&lab.TabSignals{Tab: tabReplay, Preset: "search-cache"}, "", false)
	if err != nil {
		t.Fatal(err)
	}
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

// A lesson room's recording plays on the lesson's lab: the page is the
// lesson's lab in the projector view, and the player's stream applies the
// room's step (a page of the same lesson takes its states).
func TestRecordingPlayerLessonRoom(t *testing.T) {
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.createRoom(t, `{"lesson":"cap"}`)
	present := roomSig(tabPresenter, code, "present", `"lesson":"cap"`)
	if st, body := roomPost(t, l.ts.URL, "lesson", strings.Replace(present, "}", `,"step":"cap-34"}`, 1), code, key); st != 204 {
		t.Fatalf("step command: %d %s", st, body)
	}
	st, page := roomCall(t, "GET", l.ts.URL+"/r/"+code+"/recording", "", code, "", "")
	if st != 200 || !strings.Contains(page, `id="rec-player"`) || !strings.Contains(page, "lesson-lab") || !strings.Contains(page, "The workshop started on lesson cap") ||
		!strings.Contains(page, "Instructor went to step cap-34") {
		t.Fatalf("lesson recording page: %d %s", st, webtest.Head(page, 400))
	}
	ev := openReplayStream(t, l.ts.URL, code, `{"tab":"`+tabReplay+`","lesson":"cap","recSpeed":"max"}`)
	webtest.WaitFor(t, ev, "the player's first redraw", redrawn)
	if st, body := roomCall(t, "POST", l.ts.URL+"/r/"+code+"/recording/play", `{"tab":"`+tabReplay+`"}`, code, "", ""); st != 204 {
		t.Fatalf("play: %d %s", st, body)
	}
	webtest.WaitFor(t, ev, "the player stopped at the end", signalPatch(`"recPlaying":false`, `"recPct":"100.0"`))
	if strings.Contains(l.logs.String(), "recording: entry not applied") {
		t.Errorf("an entry was not applied: %s", l.logs.String())
	}
}

// Entries a millisecond apart, passed while the stream slept: each is
// still applied, in order, one per pass, and the player stops at the end.
func TestRecordingPlayerShowsEveryEntry(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	s := clockServer(t, &now)
	t0 := now.Add(-time.Hour).UnixMilli()
	var entries []record.TimelineEntry
	for i, at := range []int64{0, 10_000, 10_001, 10_002} {
		entries = append(entries, record.TimelineEntry{TMs: t0 + at, Kind: "state", State: record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"max_ejection_percent": float64(10 * (i + 1))}}})
	}
	p, err := s.newPlayer("ABCDEF", entries, replaySignals{RecSpeed: "1"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.SessionFor(&lab.TabSignals{Tab: tabReplay, Preset: "search-cache"}, "", false)
	if err != nil {
		t.Fatal(err)
	}
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
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.createRoom(t, `{"preset":"search-cache"}`)
	a, _, err := l.s.sharedRecordingOf(t.Context(), code)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := l.s.sharedRecordingOf(t.Context(), code)
	if len(a) != 1 || &a[0] != &b[0] {
		t.Errorf("two players of an unchanged recording: %d entries, shared %v", len(a), len(b) > 0 && &a[0] == &b[0])
	}
	if st, body := roomPost(t, l.ts.URL, "set", roomSig(tabPresenter, code, "present", `"preset":"search-cache","seq":2,"cfg":{"max_ejection_percent":30}`), code, key); st != 204 {
		t.Fatalf("set: %d %s", st, body)
	}
	if c, _, _ := l.s.sharedRecordingOf(t.Context(), code); len(c) != 2 {
		t.Errorf("after a move the players read %d entries, want 2", len(c))
	}

	l.s.rooms.players.mu.Lock()
	l.s.rooms.players.maxStreams = 1
	l.s.rooms.players.mu.Unlock()
	openReplayStream(t, l.ts.URL, code, `{"tab":"`+tabReplay+`"}`)
	res, err := http.Get(l.ts.URL + "/r/" + code + "/recording/stream?datastar=" + url.QueryEscape(`{"tab":"replay-tab-0000000000002"}`))
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
	s := clockServer(t, &now)
	t0 := now.Add(-time.Hour).UnixMilli()
	st := func(mep float64) record.State {
		return record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"max_ejection_percent": mep}}
	}
	p, err := s.newPlayer("ABCDEF", []record.TimelineEntry{{TMs: t0, Kind: "start", State: st(15)}, {TMs: t0 + 10_000, Kind: "state", State: st(20)}}, replaySignals{RecSpeed: "1"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.SessionFor(&lab.TabSignals{Tab: tabReplay, Preset: "search-cache"}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	building, release := make(chan struct{}), make(chan struct{})
	s.Runs.Build = func(in tabstate.Inputs) (*tabstate.Run, error) {
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

// clockServer is a server whose clock reads *now (the test moves it).
func clockServer(t *testing.T, now *time.Time) *testServer {
	t.Helper()
	s, err := newServer(Options{Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// A workshop still running is followed live: a viewer who has played the
// recording to its end sees the instructor's next move without a reload
// (issue 22, item 6).
func TestRecordingPlayerFollowsLive(t *testing.T) {
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.createRoom(t, `{"preset":"search-cache"}`)
	ev := openReplayStream(t, l.ts.URL, code, `{"tab":"`+tabReplay+`","preset":"search-cache","recSpeed":"max"}`)
	webtest.WaitFor(t, ev, "the player's first redraw", redrawn)
	if st, body := roomCall(t, "POST", l.ts.URL+"/r/"+code+"/recording/play", `{"tab":"`+tabReplay+`"}`, code, "", ""); st != 204 {
		t.Fatalf("play: %d %s", st, body)
	}
	// One entry: play reaches the end at once, and the player's signals
	// (not playing, 100 %) are those it opened with; the pass that took
	// the command redraws.
	webtest.WaitFor(t, ev, "the pass that played to the end", redrawn)
	if st, body := roomPost(t, l.ts.URL, "set", roomSig(tabPresenter, code, "present", `"preset":"search-cache","seq":2,"cfg":{"max_ejection_percent":34}`), code, key); st != 204 {
		t.Fatalf("set: %d %s", st, body)
	}
	// The tab's redraw (its cluster YAML at the new cap) comes before the
	// entry's line.
	var counted, at34 bool
	webtest.WaitFor(t, ev, "the instructor's move in the open player: the tab at cap 34 and entry 2 of 2", func(e webtest.Event) bool {
		counted = counted || strings.Contains(e.Data, "(entry 2 of 2)")
		at34 = at34 || strings.Contains(e.Data, "max_ejection_percent: 34")
		return counted && at34
	})
}
