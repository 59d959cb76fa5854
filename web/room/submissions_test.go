package room

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"outlierlab/challenges"
	"outlierlab/engine/challenge"
	wchallenges "outlierlab/web/challenges"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
	"outlierlab/web/roombus"
)

// challengeLab is a room lab offering testdata/tune.md (its second scene
// is the search-cap challenge), graded by the server's own challenges
// (web/challenges) on a clock the test moves: a browser may submit once
// a minute.
func challengeLab(t *testing.T, lim Limits) (*roomLab, *atomic.Int64) {
	t.Helper()
	l := startRoomLab(t, roombus.BusOptions{}, lim)
	tune, err := os.ReadFile("testdata/tune.md")
	if err != nil {
		t.Fatal(err)
	}
	if l.S.plans, err = scenes.Load(fstest.MapFS{"tune.md": {Data: tune}}, l.S.lab); err != nil {
		t.Fatal(err)
	}
	cs, err := challenge.Load(challenges.FS)
	if err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	g, err := wchallenges.New(cs, wchallenges.Deps{Pages: l.S.lab.Pages, Budget: l.S.lab.Budget, Log: l.S.lab.Log, Secret: []byte("a room's test secret, 32 bytes.."),
		Every: time.Minute, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	l.S.SetGrader(g)
	return l, &clock
}

// submit posts a challenge form to the room as attendee att (its cookie's
// value; "" for none) from the tests' one browser.
func submit(t *testing.T, base, code, att string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/r/"+code+"/submit", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(webtest.BrowserCookie())
	if att != "" {
		req.AddCookie(&http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: att})
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

type leaderboardJSON struct {
	Challenge string      `json:"challenge"`
	Main      []string    `json:"main"`
	Entries   []boardLine `json:"entries"`
}

func leaderboardOf(t *testing.T, l *roomLab, code string) leaderboardJSON {
	t.Helper()
	st, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/leaderboard", "", code, "", "")
	if st != http.StatusOK {
		t.Fatalf("leaderboard: %d %s", st, body)
	}
	var lb leaderboardJSON
	if err := json.Unmarshal([]byte(body), &lb); err != nil {
		t.Fatalf("leaderboard %s: %v", body, err)
	}
	return lb
}

// A challenge scene takes each attendee's settings, graded on the hidden
// seeds, and keeps the latest of each on the bus: refused off the scene
// (409), without the room's identity (403), with a bad or locked setting
// (422 naming it), twice within the browser's minute (429) and past the
// room's bound (503); the leaderboard ranks them, the front marked.
func TestRoomChallengeSubmissions(t *testing.T) {
	t.Parallel()
	l, clock := challengeLab(t, Limits{Submissions: 3})
	tick := func() { clock.Add(int64(time.Minute)) }
	_, code, key, body := startPlanRoom(t, l, "plan:tune")
	if code == "" {
		t.Fatalf("start from tune: %s", body)
	}
	ann, bob, cy, dee := att(t, l, code, "ann"), att(t, l, code, "bob"), att(t, l, code, "cy"), att(t, l, code, "dee")
	cap := func(v string) url.Values { return url.Values{"max_ejection_percent": {v}} }

	if st, body := submit(t, l.TS.URL, code, ann, cap("17")); st != http.StatusConflict || !strings.Contains(body, "scene: the room's scene is no challenge") {
		t.Errorf("off a challenge scene: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/leaderboard", "", code, "", ""); st != http.StatusConflict {
		t.Errorf("the leaderboard off a challenge scene: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene=1", "", code, key, ""); st != http.StatusOK {
		t.Fatalf("to the challenge scene: %d %s", st, body)
	}
	for _, c := range []struct {
		name, att string
		form      url.Values
		status    int
		has       string
	}{
		{"no identity", "", cap("17"), http.StatusForbidden, "attendee: this browser has no attendee identity"},
		{"a cap past 100", ann, cap("500"), http.StatusUnprocessableEntity, "max_ejection_percent: "},
		{"a locked setting", ann, url.Values{"rps": {"10"}}, http.StatusUnprocessableEntity, "rps: is not a setting this challenge unlocks (allowed max_ejection_percent, success_rate_stdev_factor, base_ejection_time, consecutive_5xx)"},
	} {
		if st, body := submit(t, l.TS.URL, code, c.att, c.form); st != c.status || !strings.Contains(body, c.has) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, st, body, c.status, c.has)
		}
	}

	// The page's form posts through Datastar: the answer is the panel's
	// status line, naming what was refused.
	req, _ := http.NewRequest("POST", l.TS.URL+"/r/"+code+"/submit", strings.NewReader("rps=10"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Datastar-Request", "true")
	req.AddCookie(webtest.BrowserCookie())
	req.AddCookie(&http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: ann})
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), `id="room-challenge-status"`) || !strings.Contains(string(b), "rps: is not a setting this challenge unlocks") {
			t.Errorf("a page's refused submission: %d %s", res.StatusCode, b)
		}
	}

	// Envoy's default cap (10%) ejects nothing of six hosts: the defaults
	// fail; 17 is the reference; 50 lets the shared outage take three.
	st, body := submit(t, l.TS.URL, code, ann, nil)
	if st != http.StatusCreated || !strings.Contains(body, `"who":"`+record.Nickname(idOf(ann))+`"`) {
		t.Fatalf("ann's defaults: %d %s", st, body)
	}
	if st, body := submit(t, l.TS.URL, code, bob, cap("17")); st != http.StatusTooManyRequests || !strings.Contains(body, "wait 60 s") {
		t.Errorf("a second submission within the browser's minute: %d %s", st, body)
	}
	tick()
	if st, body := submit(t, l.TS.URL, code, bob, cap("17")); st != http.StatusCreated {
		t.Fatalf("bob's reference: %d %s", st, body)
	}
	tick()
	if st, body := submit(t, l.TS.URL, code, cy, cap("50")); st != http.StatusCreated {
		t.Fatalf("cy's 50: %d %s", st, body)
	}
	roomtest.WaitUntil(t, "the board holds three", func() bool { return len(leaderboardOf(t, l, code).Entries) == 3 })
	tick()
	if st, body := submit(t, l.TS.URL, code, dee, cap("34")); st != http.StatusServiceUnavailable || !strings.Contains(body, "(allowed 3)") {
		t.Errorf("a fourth attendee past the room's 3: %d %s", st, body)
	}
	tick()
	// An attendee's next submission replaces its last, bound or not.
	if st, body := submit(t, l.TS.URL, code, ann, cap("20")); st != http.StatusCreated {
		t.Fatalf("ann's second: %d %s", st, body)
	}
	var lb leaderboardJSON
	roomtest.WaitUntil(t, "three submissions, ann's second among them", func() bool {
		lb = leaderboardOf(t, l, code)
		return len(lb.Entries) == 3 && lb.Entries[0].Settings["max_ejection_percent"] != "" && slicesHas(lb.Entries, "20")
	})
	if lb.Challenge != "search-cap" || strings.Join(lb.Main, " ") != "one-bad-host/eject-h5 shared-outage/max-out" {
		t.Errorf("the board's challenge %q and main goals %v", lb.Challenge, lb.Main)
	}
	first := lb.Entries[0]
	if first.Settings["max_ejection_percent"] != "17" && first.Settings["max_ejection_percent"] != "20" || first.Passed != first.Total || !first.Front {
		t.Errorf("first on the board: %+v; want a cap that passes every goal, on the front", first)
	}
	for _, e := range lb.Entries {
		if e.Settings["max_ejection_percent"] == "50" && e.Passed == e.Total {
			t.Errorf("a 50%% cap passes every goal: %+v", e)
		}
	}
}

func slicesHas(es []boardLine, cap string) bool {
	for _, e := range es {
		if e.Settings["max_ejection_percent"] == cap {
			return true
		}
	}
	return false
}

// idOf is an attendee cookie's identity (before its tag).
func idOf(att string) string { id, _, _ := strings.Cut(att, "."); return id }

// Every page of the room shows the challenge scene's panel: the
// attendee's the form of the unlocked settings, the instructor's none;
// both the board and the scatter, which move with each submission: three
// points, the front marked.
func TestRoomChallengePanel(t *testing.T) {
	t.Parallel()
	l, clock := challengeLab(t, Limits{})
	_, code, key, body := startPlanRoom(t, l, "plan:tune")
	if code == "" {
		t.Fatalf("start from tune: %s", body)
	}
	presenter := roomtest.OpenStreamKey(t, l.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`), code, key)
	follower := roomtest.OpenRoomStream(t, l.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene=1", "", code, key, ""); st != http.StatusOK {
		t.Fatalf("to the challenge scene: %d %s", st, body)
	}
	panel := func(ev webtest.Event) bool { return strings.Contains(ev.Data, `id="room-challenge"`) }
	ev := webtest.WaitFor(t, follower, "the attendee's challenge panel", func(ev webtest.Event) bool {
		return panel(ev) && strings.Contains(ev.Data, "The six-host search cluster and its cap")
	})
	if !strings.Contains(ev.Data, `id="room-challenge-form"`) || !strings.Contains(ev.Data, `name="max_ejection_percent"`) || strings.Contains(ev.Data, `name="rps"`) {
		t.Errorf("the attendee's panel lacks the form of the unlocked settings: %s", ev.Data)
	}
	ev = webtest.WaitFor(t, presenter, "the instructor's challenge panel", func(ev webtest.Event) bool {
		return panel(ev) && strings.Contains(ev.Data, "The six-host search cluster and its cap")
	})
	if strings.Contains(ev.Data, `id="room-challenge-form"`) {
		t.Errorf("the instructor's panel has the attendees' form: %s", ev.Data)
	}
	var nicks []string
	for i, c := range []string{"10", "17", "50"} {
		att := att(t, l, code, "att"+c)
		nicks = append(nicks, record.Nickname(idOf(att)))
		if i > 0 {
			clock.Add(int64(time.Minute))
		}
		if st, body := submit(t, l.TS.URL, code, att, url.Values{"max_ejection_percent": {c}}); st != http.StatusCreated {
			t.Fatalf("cap %s: %d %s", c, st, body)
		}
	}
	for _, s := range []struct {
		name   string
		events <-chan webtest.Event
	}{{"the instructor's", presenter}, {"the attendee's", follower}} {
		ev := webtest.WaitFor(t, s.events, s.name+" panel with three points", func(ev webtest.Event) bool {
			return panel(ev) && strings.Count(ev.Data, "<circle") == 3
		})
		for _, n := range nicks {
			if !strings.Contains(ev.Data, `<tr class="`) || !strings.Contains(ev.Data, `data-who="`+n+`"`) {
				t.Errorf("%s panel lacks %s: %s", s.name, n, ev.Data)
			}
		}
		if !strings.Contains(ev.Data, `class="pt front"`) || !strings.Contains(ev.Data, "3 submissions, ranked") {
			t.Errorf("%s panel marks no front: %s", s.name, ev.Data)
		}
	}
	// The instructor spotlights the 17: the room's run takes its settings
	// (every follower's controls move) and every page marks it, with the
	// link to /compare; then reveals the reference.
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/challenge/spotlight?who=nobody", "", code, key, ""); st != http.StatusNotFound || !strings.Contains(body, `who: "nobody" has submitted nothing to this challenge (submitted: `) {
		t.Errorf("spotlight of no submission: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/challenge/spotlight?who="+url.QueryEscape(nicks[1]), "", code, "", ""); st != http.StatusForbidden {
		t.Errorf("spotlight without the key: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/challenge/spotlight?who="+url.QueryEscape(nicks[1]), "", code, key, ""); st != http.StatusOK {
		t.Fatalf("spotlight: %d %s", st, body)
	}
	for _, s := range []struct {
		name   string
		events <-chan webtest.Event
	}{{"the instructor's", presenter}, {"the attendee's", follower}} {
		webtest.WaitFor(t, s.events, s.name+" panel with the spotlight", func(ev webtest.Event) bool {
			return panel(ev) && strings.Contains(ev.Data, `id="room-challenge-spot"`) && strings.Contains(ev.Data, "<b>"+nicks[1]+"</b>") &&
				strings.Contains(ev.Data, "max_ejection_percent=17") && strings.Contains(ev.Data, `href="/compare?a=`)
		})
	}
	// The stream sends the room's signals after its panels.
	roomtest.WaitEach(t, follower, "the follower's controls at the spotlit 17", `"max_ejection_percent":17`)
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/challenge/reveal", "", code, key, ""); st != http.StatusOK {
		t.Fatalf("reveal: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the reference on the attendee's panel", func(ev webtest.Event) bool {
		return panel(ev) && strings.Contains(ev.Data, `id="room-challenge-ref"`) && strings.Contains(ev.Data, "The reference: <code>max_ejection_percent=17</code>")
	})
}

// Submissions are part of the room's recording and its handout: each is
// a "submission" entry (the attendee as a tag, never its id or address),
// the board at an entry's moment is the recorded one up to it, and the
// handout lists each attendee's latest with its settings and grade, the
// front marked.
func TestRoomChallengeRecorded(t *testing.T) {
	t.Parallel()
	l, clock := challengeLab(t, Limits{Submissions: 10})
	_, code, key, body := startPlanRoom(t, l, "plan:tune")
	if code == "" {
		t.Fatalf("start from tune: %s", body)
	}
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene=1", "", code, key, ""); st != http.StatusOK {
		t.Fatalf("to the challenge scene: %d %s", st, body)
	}
	ann, bob, cy := att(t, l, code, "ann"), att(t, l, code, "bob"), att(t, l, code, "cy")
	for _, s := range []struct{ att, cap string }{{ann, "10"}, {bob, "17"}, {cy, "50"}, {ann, "20"}} {
		clock.Add(int64(time.Minute))
		if st, body := submit(t, l.TS.URL, code, s.att, url.Values{"max_ejection_percent": {s.cap}}); st != http.StatusCreated {
			t.Fatalf("a cap of %s: %d %s", s.cap, st, body)
		}
	}
	var entries []record.TimelineEntry
	var subs []int // the submission entries' indexes
	roomtest.WaitUntil(t, "four submissions recorded", func() bool {
		var err error
		if entries, err = l.S.rooms.timeline.Read(t.Context(), code); err != nil {
			t.Fatal(err)
		}
		subs = subs[:0]
		for i, e := range entries {
			if e.Kind == "submission" {
				subs = append(subs, i)
			}
		}
		return len(subs) == 4
	})
	tags := map[string]bool{}
	for _, i := range subs {
		e := entries[i].Submission
		if e == nil || e.Challenge != "search-cap" || e.From != "" || entries[i].State.Scene != 1 {
			t.Fatalf("entry %d: %+v in state scene %d; want search-cap's, no address, on scene 1", i, e, entries[i].State.Scene)
		}
		for _, id := range []string{idOf(ann), idOf(bob), idOf(cy)} {
			if strings.Contains(e.Attendee, id) || e.Attendee == "" {
				t.Errorf("entry %d names attendee %q as %q, want a tag of it", i, id, e.Attendee)
			}
		}
		tags[e.Attendee] = true
	}
	if len(tags) != 3 {
		t.Errorf("%d attendees' tags in four submissions, want 3 (ann twice)", len(tags))
	}
	p := l.S.plans.Plan("tune")
	// The board as it stood at the second submission: ann's 10 and bob's 17.
	at := l.S.recordedBoard(code, p, 1, entries[:subs[1]+1])
	if at == nil || len(at.Entries) != 2 || at.Entries[0].Settings != "max_ejection_percent=17" || !at.Entries[0].Front {
		t.Fatalf("the recorded board at the second submission: %+v", at)
	}
	if l.S.recordedBoard(code, p, 0, entries) != nil {
		t.Error("a board on the plan's first scene, which is no challenge")
	}
	// The recording's player shows the panel as it stood at the entry it
	// is on: two points at the second submission, three at the last.
	ev := openReplayStream(t, l.TS.URL, code, `{"tab":"`+tabReplay+`","recSpeed":"max"}`)
	for _, c := range []struct{ entry, rows int }{{subs[1], 2}, {subs[3], 3}} {
		if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/recording/seek?entry="+strconv.Itoa(c.entry), `{"tab":"`+tabReplay+`"}`, code, "", ""); st != http.StatusNoContent {
			t.Fatalf("seek to %d: %d %s", c.entry, st, body)
		}
		webtest.WaitFor(t, ev, fmt.Sprintf("the replay's panel with %d submissions", c.rows), func(e webtest.Event) bool {
			return strings.Contains(e.Data, `id="room-challenge"`) && strings.Count(e.Data, "<code>max_ejection_percent=") == c.rows &&
				strings.Count(e.Data, `<circle class="pt`) == c.rows
		})
	}

	status, page, _ := getRoomPage(t, l.TS.URL, "/r/"+code+"/handout", "", "")
	if status != http.StatusOK {
		t.Fatalf("the room's handout: %d", status)
	}
	for _, want := range []string{
		`id="scene-` + p.Scenes[1].ID + `-challenge"`,
		"3 submissions in workshop " + code + ", each attendee&#39;s latest", // the caption's text, escaped
		"<code>max_ejection_percent=20</code>", "<code>max_ejection_percent=17</code>", "<code>max_ejection_percent=50</code>",
		`<small class="front-mark">front</small>`, `class="room-scatter"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the room's handout has no %q", want)
		}
	}
	if strings.Contains(page, "max_ejection_percent=10<") {
		t.Error("the handout lists ann's first submission, replaced by her second")
	}
	if n := strings.Count(page, `<circle class="pt`); n != 3 {
		t.Errorf("the handout's scatter has %d points, want 3", n)
	}
	if _, page, _ := getRoomPage(t, l.TS.URL, "/plans/tune/handout", "", ""); strings.Contains(page, "handout-board") {
		t.Error("the plan's own handout lists a room's submissions")
	}
}
