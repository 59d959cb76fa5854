package room

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"outlierlab/web/chart"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/tabid"
)

var tabReplay = webtest.TabOf("replay-tab-0000000000001")

// openReplayStream opens a tab's recording player stream.
func openReplayStream(t *testing.T, base, code, signals string) <-chan webtest.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return roomtest.OpenSSE(t, ctx, base, "/r/"+code+"/recording/stream", signals)
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

// recRow is an entry as the recording's page lists it.
type recRow struct{ At, Kind, What, State string }

var recRowHTML = regexp.MustCompile(`(?s)<td class="rec-at">(.*?)</td>\s*<td><span class="rec-kind rec-[^"]*">(.*?)</span></td>\s*<td>(.*?)</td>\s*<td class="rec-state-words">(.*?)</td>`)

// recordingRows are the entries of room code's recording, as its page
// lists them: their time, kind, what happened and the room's state then.
func recordingRows(t *testing.T, base, code string) []recRow {
	t.Helper()
	st, page, _ := getRoomPage(t, base, "/r/"+code+"/recording", code, "")
	if st != http.StatusOK {
		t.Fatalf("the recording's page: %d %s", st, webtest.Head(page, 300))
	}
	var rows []recRow
	for _, m := range recRowHTML.FindAllStringSubmatch(page, -1) {
		rows = append(rows, recRow{html.UnescapeString(m[1]), html.UnescapeString(m[2]), html.UnescapeString(m[3]), html.UnescapeString(m[4])})
	}
	return rows
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
	t.Parallel()
	la, lb := twoReplicas(t)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	follower := roomtest.OpenRoomStream(t, lb.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", redrawn)
	hub := lb.S.rooms.hub(code)
	// live is what the follower's stream redrew at each state: the charts
	// of the run and cursor its session took (web/lab/stream.go's redraw), read
	// once the session applied the room's revision.
	var live []string
	take := func(what string) {
		t.Helper()
		rev := hub.current().rev
		sess := lb.S.lab.Sessions.Get(roomtest.TabFollower)
		roomtest.WaitUntil(t, "the follower applied "+what, func() bool {
			tr := tieOf(sess)
			tr.mu.Lock()
			defer tr.mu.Unlock()
			return tr.applied >= rev
		})
		st := sess.State()
		js, err := chart.NewScripts().At(st.Run, st.Playback.CursorAt(lb.S.lab.Now(), len(st.Run.Frames)), true)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, js)
	}
	take("the start")
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`)
	with := func(extra string) string { return strings.Replace(present, "}", ","+extra+"}", 1) }
	var q record.Question
	actions := []struct {
		what string
		do   func()
	}{
		{"set", func() {
			roomtest.Post(t, la.TS.URL, "set", with(`"seq":1,"cfg":{"max_ejection_percent":34}`), code, key)
		}},
		{"scrub", func() { roomtest.Post(t, la.TS.URL, "scrub", with(`"seq":2,"cursor":10`), code, key) }},
		{"speed", func() { roomtest.Post(t, la.TS.URL, "speed", with(`"speed":"instant"`), code, key) }},
		{"play", func() { roomtest.Post(t, la.TS.URL, "play", present, code, key) }},
		{"inject", func() { roomtest.Post(t, la.TS.URL, "inject", with(`"injectHost":"h2"`), code, key) }},
		{"question", func() {
			_, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":80}`, code, key, "")
			if json.Unmarshal([]byte(body), &q) != nil {
				t.Fatalf("question: %s", body)
			}
		}},
		{"reveal", func() {
			if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=1", `{}`, code, "", att(t, la, code, "someone")); st != 204 {
				t.Fatalf("answer: %d %s", st, body)
			}
			if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, ""); st != 200 {
				t.Fatalf("reveal: %d %s", st, body)
			}
		}},
		{"spotlight", func() { roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/spotlight?host=h5", "", code, key, "") }},
	}
	for _, a := range actions {
		before := hub.current().rev
		a.do()
		roomtest.WaitUntil(t, "replica B has the "+a.what, func() bool { return hub.current().rev > before })
		take(a.what)
	}

	ev := openReplayStream(t, la.TS.URL, code, `{"tab":"`+tabReplay+`","preset":"search-cache","recSpeed":"max"}`)
	if got := chartCall(webtest.WaitFor(t, ev, "the player's first redraw", redrawn).Data); got != live[0] {
		t.Fatalf("the player opens on another redraw than the workshop's start:\n%s\n%s", webtest.Head(got, 200), webtest.Head(live[0], 200))
	}
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/recording/play", `{"tab":"`+tabReplay+`"}`, code, "", ""); st != 204 {
		t.Fatalf("play: %d %s", st, body)
	}
	var told []string
	var lastTold string
	stopped := roomtest.SignalPatch(`"recPlaying":false`, `"recPct":"100.0"`)
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
	roomtest.ExpectNone(t, ev, 300*time.Millisecond, "a redraw after the end", redrawn)

	st, page := roomtest.Call(t, "GET", la.TS.URL+"/r/"+code+"/recording", "", code, "", "")
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
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	tab := `{"tab":"` + tabReplay + `"}`
	for _, c := range []struct {
		method, path, body string
		want               int
		msg                string
	}{
		{"POST", "/r/" + code + "/recording/speed?speed=7", tab, 422, `speed: "7" is not a replay speed (allowed 1, 2, 4, 8, 30, max)`},
		{"POST", "/r/" + code + "/recording/speed", tab, 422, `speed: "" is not a replay speed (allowed 1, 2, 4, 8, 30, max)`},
		{"GET", "/r/" + code + "/recording?speed=fast", "", 422, `speed: "fast" is not a replay speed (allowed 1, 2, 4, 8, 30, max)`},
		{"POST", "/r/" + code + "/recording/stream", `{"tab":"` + tabReplay + `","recSpeed":"0.5"}`, 422, `speed: "0.5" is not a replay speed`},
		{"POST", "/r/" + code + "/recording/seek?entry=1", tab, 422, `entry: "1" is not an entry (allowed 0–0)`},
		{"POST", "/r/" + code + "/recording/seek?entry=-1", tab, 422, `entry: "-1" is not an entry`},
		{"POST", "/r/" + code + "/recording/rewind", tab, 404, `"rewind" is not a player command (allowed play, pause, speed, seek)`},
		{"POST", "/r/" + code + "/recording/play", `{"tab":"x"}`, 400, `tab: "x" is not a tab id`},
		// A player is its tab's browser's alone (issue 34: a tab id is no credential).
		{"POST", "/r/" + code + "/recording/play", `{"tab":"` + tabid.New(tabid.NewBrowser()) + `"}`, 403, `tab: the tab is not this browser's`},
		{"POST", "/r/" + code + "/recording/stream", `{"tab":"` + tabid.New(tabid.NewBrowser()) + `"}`, 403, `tab: the tab is not this browser's`},
		{"GET", "/r/ZZZZZZ/recording", "", 404, "There is no workshop ZZZZZZ"},
		{"POST", "/r/ZZZZZZ/recording/stream", tab, 404, "there is no such room"},
		{"POST", "/r/ZZZZZZ/recording/play", tab, 404, "there is no such room"},
		{"GET", "/r/ZZZZZZ/recording.json", "", 404, ""},
	} {
		if st, body := roomtest.Call(t, c.method, l.TS.URL+c.path, c.body, code, "", ""); st != c.want || !strings.Contains(body, c.msg) {
			t.Errorf("%s %s: %d %s (want %d, %q)", c.method, c.path, st, webtest.Head(body, 200), c.want, c.msg)
		}
	}
}

// A lesson room's recording plays on the lesson's lab: the page is the
// lesson's lab in the projector view, and the player's stream applies the
// room's step (a page of the same lesson takes its states).
func TestRecordingPlayerLessonRoom(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"lesson":"cap"}`)
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"lesson":"cap"`)
	if st, body := roomtest.Post(t, l.TS.URL, "lesson", strings.Replace(present, "}", `,"step":"cap-34"}`, 1), code, key); st != 204 {
		t.Fatalf("step command: %d %s", st, body)
	}
	st, page := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/recording", "", code, "", "")
	if st != 200 || !strings.Contains(page, `id="rec-player"`) || !strings.Contains(page, "lesson-lab") || !strings.Contains(page, "The workshop started on lesson cap") ||
		!strings.Contains(page, "Instructor went to step cap-34") {
		t.Fatalf("lesson recording page: %d %s", st, webtest.Head(page, 400))
	}
	ev := openReplayStream(t, l.TS.URL, code, `{"tab":"`+tabReplay+`","lesson":"cap","recSpeed":"max"}`)
	webtest.WaitFor(t, ev, "the player's first redraw", redrawn)
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/recording/play", `{"tab":"`+tabReplay+`"}`, code, "", ""); st != 204 {
		t.Fatalf("play: %d %s", st, body)
	}
	webtest.WaitFor(t, ev, "the player stopped at the end", roomtest.SignalPatch(`"recPlaying":false`, `"recPct":"100.0"`))
	if strings.Contains(l.Logs.String(), "recording: entry not applied") {
		t.Errorf("an entry was not applied: %s", l.Logs.String())
	}
}

// A workshop still running is followed live: a viewer who has played the
// recording to its end sees the instructor's next move without a reload
// (issue 22, item 6).
func TestRecordingPlayerFollowsLive(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	ev := openReplayStream(t, l.TS.URL, code, `{"tab":"`+tabReplay+`","preset":"search-cache","recSpeed":"max"}`)
	webtest.WaitFor(t, ev, "the player's first redraw", redrawn)
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/recording/play", `{"tab":"`+tabReplay+`"}`, code, "", ""); st != 204 {
		t.Fatalf("play: %d %s", st, body)
	}
	// One entry: play reaches the end at once, and the player's signals
	// (not playing, 100 %) are those it opened with; the pass that took
	// the command redraws.
	webtest.WaitFor(t, ev, "the pass that played to the end", redrawn)
	if st, body := roomtest.Post(t, l.TS.URL, "set", roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache","seq":2,"cfg":{"max_ejection_percent":34}`), code, key); st != 204 {
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
