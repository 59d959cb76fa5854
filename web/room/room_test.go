package room

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/qr"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
)

// A record the lab would not write is refused with the problem named.
func TestRoomRecordDecode(t *testing.T) {
	t.Parallel()
	lab := newTestServer(t)
	good := `{"v":1,"keyHash":"` + strings.Repeat("ab", 32) + `","state":{"preset":"search-cache","cfg":{"max_ejection_percent":34},"anchor":3,"anchorAt":1700000000000,"playing":true,"speed":"4"}}`
	rec, err := record.Decode([]byte(good))
	if err != nil {
		t.Fatalf("good record: %v", err)
	}
	if _, _, err := rec.State.Inputs(lab.lab.Lessons); err != nil {
		t.Fatalf("good state: %v", err)
	}
	for _, tt := range []struct{ name, rec, want string }{
		{"not json", `{"v":1,`, "not a room record"},
		{"trailing", good + `{}`, "data after the JSON object"},
		{"unknown field", `{"v":1,"keyHash":"` + strings.Repeat("ab", 32) + `","state":{"preset":"search-cache","speed":"1"},"admin":true}`, `unknown field "admin"`},
		{"version", strings.Replace(good, `"v":1`, `"v":2`, 1), "v: 2 is not a record version (allowed 1)"},
		{"key hash", strings.Replace(good, strings.Repeat("ab", 32), "zz", 1), "keyHash: not a SHA-256 in hex"},
		{"oversized", `{"v":1,"pad":"` + strings.Repeat("x", record.MaxBytes) + `"}`, "bytes long (allowed up to 16384)"},
		{"an explore timer of no minutes", strings.Replace(good, `"speed":"4"`, `"speed":"4","explore":{"scene":1,"minutes":0,"endMs":1700000120000}`, 1), "explore: 0 min to 1700000120000 on scene 1 is not a timer (allowed 1–120 min"},
		{"an explore timer ending before 1970", strings.Replace(good, `"speed":"4"`, `"speed":"4","explore":{"scene":1,"minutes":2,"endMs":-5}`, 1), "explore: 2 min to -5 on scene 1 is not a timer"},
		{"identities per address past the bound", strings.Replace(good, `"speed":"4"`, `"speed":"4","idsPerAddress":10001`, 1), "idsPerAddress: 10001 is out of range (allowed 0–10000)"},
		{"identities per address below none", strings.Replace(good, `"speed":"4"`, `"speed":"4","idsPerAddress":-1`, 1), "idsPerAddress: -1 is out of range"},
	} {
		if _, err := record.Decode([]byte(tt.rec)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	for _, tt := range []struct {
		name string
		st   record.State
		want string
	}{
		{"preset", record.State{Preset: "nope", Speed: "1"}, `preset: "nope" is not a preset`},
		{"lesson", record.State{Lesson: "nope", Speed: "1"}, `lesson: "nope" is not a lesson`},
		{"step", record.State{Lesson: lab.lab.Lessons.List[0].ID, Step: "nope", Speed: "1"}, `step: "nope" is not a step`},
		{"step without lesson", record.State{Preset: "search-cache", Step: "x", Speed: "1"}, "step: a step needs its lesson"},
		{"setting", record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"admin": 1}}, "admin: is not a setting of the lab"},
		{"range", record.State{Preset: "search-cache", Speed: "1", Cfg: map[string]float64{"max_ejection_percent": 101}}, "max_ejection_percent: 101 is out of range"},
		{"speed", record.State{Preset: "search-cache", Speed: "9"}, `speed: "9" is not a speed`},
		{"anchor", record.State{Preset: "search-cache", Speed: "1", Anchor: -1}, "anchor: -1 at 0 is out of range"},
		{"inject", record.State{Preset: "search-cache", Speed: "1", Inject: "h3@"}, "inject"},
	} {
		if _, _, err := tt.st.Inputs(lab.lab.Lessons); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// The QR code is a QR code: its three finder patterns (7×7 rings with a
// 3×3 core) sit in three corners inside the quiet zone.
func TestRoomQR(t *testing.T) {
	t.Parallel()
	svg, err := qr.SVG("http://192.168.1.20:8080/r/K7QX2M", "QR code")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg" class="qr" viewBox="0 0 37 37"`) || !strings.Contains(svg, `aria-label="QR code"`) {
		t.Fatalf("svg head: %s", webtest.Head(svg, 200))
	}
	var m qr.Matrix
	for y := range 29 {
		m.Bits = append(m.Bits, make([]bool, 29))
		for x := range 29 {
			m.Bits[y][x] = strings.Contains(svg, fmt.Sprintf("M%d %dh1v1h-1z", x+qr.Quiet, y+qr.Quiet))
		}
	}
	finder := func(x0, y0 int) bool {
		for y := range 7 {
			for x := range 7 {
				ring := x == 0 || y == 0 || x == 6 || y == 6
				core := x >= 2 && x <= 4 && y >= 2 && y <= 4
				if m.Bits[y0+y][x0+x] != (ring || core) {
					return false
				}
			}
		}
		return true
	}
	if !finder(0, 0) || !finder(22, 0) || !finder(0, 22) || finder(22, 22) {
		t.Errorf("finder patterns misplaced in the 29×29 code")
	}
}

// POST /rooms answers JSON with the code and key and sets the key cookie
// HttpOnly and SameSite=Strict; the home page's form starts a lesson's
// room and goes to its instructor page.
func TestRoomCreate(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	req, _ := http.NewRequest("POST", l.TS.URL+"/rooms", nil)
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	_ = json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	code, key := out["code"], out["key"]
	if _, ok := record.NormalCode(code); !ok || out["join"] != "/r/"+code || out["present"] != "/r/"+code+"/present" || len(key) != 43 {
		t.Fatalf("answer: %v", out)
	}
	c := res.Cookies()
	if len(c) != 1 || c[0].Name != "olab_key_"+code || c[0].Value != key || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/" {
		t.Errorf("cookie: %+v", c)
	}
	res, err = noRedirect.Post(l.TS.URL+"/rooms", "application/x-www-form-urlencoded", strings.NewReader("start=lesson:"+l.S.lab.Lessons.List[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "/present") || len(res.Cookies()) != 1 {
		t.Errorf("form: %d %q %v", res.StatusCode, loc, res.Cookies())
	}
	res, _ = noRedirect.Post(l.TS.URL+"/rooms", "application/x-www-form-urlencoded", strings.NewReader("start=lesson:nope"))
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `start: "nope" is not a lesson`) {
		t.Errorf("bad start: %d %s", res.StatusCode, b)
	}
}

// A lab page's "Start a workshop" posts the tab's signals with Datastar:
// the room starts from the tab's session (a lesson's, here, scrubbed to
// 60 s and so held at its prediction's 30 s) and the answer is a script
// that takes the browser to the instructor page, with the key cookie.
func TestRoomCreateFromTab(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	postCommand := func(verb, rest string) {
		if st, body := roomtest.Post(t, l.TS.URL, verb, `{"tab":"`+webtest.Tab+`","lesson":"cap","preset":"search-cache"`+rest+`}`, "", ""); st != 204 {
			t.Fatalf("%s: %d %s", verb, st, body)
		}
	}
	postCommand("scrub", `,"cursor":6`)
	req, _ := http.NewRequest("POST", l.TS.URL+"/rooms", strings.NewReader(`{"tab":"`+webtest.Tab+`","lesson":"cap"}`))
	req.AddCookie(webtest.BrowserCookie())
	req.Header.Set("Datastar-Request", "true")
	req.Header.Set("Accept", "text/event-stream, text/html, application/json")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	c := res.Cookies()
	if res.Header.Get("Content-Type") != "text/event-stream" || len(c) != 1 || !strings.Contains(string(b), `data-init="window.location.assign(&#39;/r/`+strings.TrimPrefix(c[0].Name, "olab_key_")+`/present&#39;)`) {
		t.Fatalf("answer: %s %v\n%s", res.Header.Get("Content-Type"), c, b)
	}
	rec, _, err := l.S.rooms.lookup(t.Context(), strings.TrimPrefix(c[0].Name, "olab_key_"))
	if err != nil || rec.State.Lesson != "cap" || rec.State.Anchor != 3 || rec.State.Playing || !rec.KeyMatches(c[0].Value) {
		t.Errorf("the room's start: %+v %v", rec.State, err)
	}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// getRoomPage gets a page with the room's key cookie (if any).
func getRoomPage(t *testing.T, base, path, code, key string) (int, string, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	if key != "" {
		req.AddCookie(&http.Cookie{Name: "olab_key_" + code, Value: key})
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res
}

// The room pages answer by code and key: an attendee's, the projector's
// (with the QR code of the join address), the instructor's for the key's
// holder only (403 otherwise), a 404 with a code box for a code that
// leads nowhere; "Start a workshop" on the home page and the lab.
func TestRoomPages(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, "")
	for _, tt := range []struct {
		path, cookie string
		status       int
		has          []string
	}{
		{"/r/" + code, "", 200, []string{`id="room-bar"`, "Following the instructor", "Rejoin", `&#34;room&#34;:&#34;` + code + `&#34;`, `&#34;roomRole&#34;:&#34;follow&#34;`}},
		{"/r/" + code + "/projector", "", 200, []string{`class="room-projector room-projector-page"`, `<svg xmlns="http://www.w3.org/2000/svg" class="qr"`, "Join at <b>" + l.TS.URL + "/r/" + code + "</b>", `id="chart-lanes"`}},
		{"/r/" + code + "/present", key, 200, []string{`<span class="room-long">You are presenting </span>workshop`, `&#34;roomRole&#34;:&#34;present&#34;`, "Projector view"}},
		{"/r/" + code + "/present", "", 403, []string{"Not the instructor", "Join as an attendee"}},
		{"/r/" + code + "/present", "stale-" + key, 403, []string{"Not the instructor"}},
		{"/r/" + code + "/present?key=wrong", "", 403, []string{"Not the instructor"}},
		{"/r/ZZZZZZ", "", 404, []string{"There is no workshop ZZZZZZ", `name="code"`, `action="/r"`}},
		{"/r/K0QX", "", 404, []string{"&#34;K0QX&#34; is not a workshop code", `name="code"`}},
		{"/r", "", 200, []string{"Join a workshop", `name="code"`}},
		{"/", "", 200, []string{"Start a workshop", `action="/rooms"`, `value="preset:search-cache"`, `name="code"`}},
		{"/lab", "", 200, []string{`id="btn-start-room"`, `data-on:click="@post('/rooms')"`}},
		{"/lessons/cap", "", 200, []string{`id="btn-start-room"`, `<main id="main"><section class="room-strip room-start"`}},
	} {
		status, body, _ := getRoomPage(t, l.TS.URL, tt.path, code, tt.cookie)
		if status != tt.status {
			t.Errorf("GET %s: status %d, want %d", tt.path, status, tt.status)
		}
		for _, h := range tt.has {
			if !strings.Contains(body, h) {
				t.Errorf("GET %s: no %q", tt.path, h)
			}
		}
	}
	// A key in the address goes into the cookie and out of the address.
	status, _, res := getRoomPage(t, l.TS.URL, "/r/"+code+"/present?key="+key, code, "")
	if status != http.StatusSeeOther || res.Header.Get("Location") != "/r/"+code+"/present" || len(res.Cookies()) != 1 || res.Cookies()[0].Value != key {
		t.Errorf("present?key=: status %d, location %q, cookies %v", status, res.Header.Get("Location"), res.Cookies())
	}
	// A code typed in lower case goes to its page; so does the join box.
	if status, _, res := getRoomPage(t, l.TS.URL, "/r/"+strings.ToLower(code)+"/projector", code, ""); status != http.StatusMovedPermanently || res.Header.Get("Location") != "/r/"+code+"/projector" {
		t.Errorf("lower case: %d %q", status, res.Header.Get("Location"))
	}
	if status, _, res := getRoomPage(t, l.TS.URL, "/r?code="+strings.ToLower(code[:3]+"-"+code[3:]), code, ""); status != http.StatusSeeOther || res.Header.Get("Location") != "/r/"+code {
		t.Errorf("join box: %d %q", status, res.Header.Get("Location"))
	}
}

// One server: the instructor moves the cap, the follower's stream patches
// its cfg to it and redraws; the projector follows and takes no commands;
// a follower that touches a control breaks away (the room is unchanged),
// and rejoin brings it back to the room's state.
func TestRoomFollowBreakAwayRejoin(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	base := l.TS.URL
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`)
	follower := roomtest.OpenRoomStream(t, base, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", roomtest.Charted)
	projector := roomtest.OpenRoomStream(t, base, code, roomtest.Sig(roomtest.TabProjector, code, "projector", `"preset":"search-cache"`))
	webtest.WaitFor(t, projector, "the projector's first redraw", roomtest.SignalPatch(`"follow":true`))

	if st, body := roomtest.Post(t, base, "set", strings.Replace(present, "}", `,"seq":1,"cfg":{"max_ejection_percent":34}}`, 1), code, key); st != 204 {
		t.Fatalf("instructor set: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the follower's cap at 34", roomtest.SignalPatch(`"max_ejection_percent":34`))
	webtest.WaitFor(t, follower, "the follower's charts redrawn", func(ev webtest.Event) bool { return strings.Contains(ev.Data, "applyCharts(") })
	webtest.WaitFor(t, projector, "the projector's cap at 34", roomtest.SignalPatch(`"max_ejection_percent":34`))

	// Play, on the instructor's side only: the follower plays too.
	if st, _ := roomtest.Post(t, base, "speed", strings.Replace(present, "}", `,"speed":"16"}`, 1), code, key); st != 204 {
		t.Fatalf("speed: %d", st)
	}
	if st, _ := roomtest.Post(t, base, "play", present, code, key); st != 204 {
		t.Fatalf("play: %d", st)
	}
	webtest.WaitFor(t, follower, "the follower playing", roomtest.SignalPatch(`"playing":true`))

	// The projector takes no commands; a follower's command without the
	// key never publishes; an instructor command without the key is refused.
	if st, body := roomtest.Post(t, base, "pause", roomtest.Sig(roomtest.TabProjector, code, "projector", ""), code, ""); st != 409 || !strings.Contains(body, "projector view follows the room") {
		t.Errorf("projector pause: %d %s", st, body)
	}
	if st, body := roomtest.Post(t, base, "pause", present, code, "stale"); st != 403 || !strings.Contains(body, "key: this browser's instructor key is not room "+code) {
		t.Errorf("instructor without the key: %d %s", st, body)
	}

	// The follower moves the cap: it breaks away; the room is unchanged.
	if st, _ := roomtest.Post(t, base, "set", roomtest.Sig(roomtest.TabFollower, code, "follow", `"seq":1,"cfg":{"max_ejection_percent":80}`), code, ""); st != 204 {
		t.Fatalf("follower set: %d", st)
	}
	webtest.WaitFor(t, follower, "the break-away", roomtest.SignalPatch(`"follow":false`))
	rec, _, err := l.S.rooms.lookup(t.Context(), code)
	if err != nil || rec.State.Cfg["max_ejection_percent"] != 34 || !rec.State.Playing {
		t.Fatalf("room after the follower's move: %+v, %v", rec.State, err)
	}
	// A late joiner starts at the room's state, not the follower's.
	late := roomtest.OpenRoomStream(t, base, code, roomtest.Sig(roomtest.TabFollower2, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, late, "the late joiner at the room's cap", roomtest.SignalPatch(`"max_ejection_percent":34`))

	// The instructor pauses: the follower who broke away stays where it is.
	if st, _ := roomtest.Post(t, base, "pause", present, code, key); st != 204 {
		t.Fatalf("pause: %d", st)
	}
	webtest.WaitFor(t, late, "the late joiner paused", roomtest.SignalPatch(`"playing":false`))
	roomtest.ExpectNone(t, follower, 300*time.Millisecond, "the broken-away follower followed", roomtest.SignalPatch(`"max_ejection_percent":34`))

	// Rejoin: back on the room's state, following again.
	if st, body := roomtest.Post(t, base, "rejoin", roomtest.Sig(roomtest.TabFollower, code, "follow", `"follow":false`), code, ""); st != 204 {
		t.Fatalf("rejoin: %d %s", st, body)
	}
	roomtest.WaitEach(t, follower, "the follower back at 34, paused, following", `"max_ejection_percent":34`, `"playing":false`, `"follow":true`)
	if st, body := roomtest.Post(t, base, "rejoin", `{"tab":"`+webtest.Tab+`"}`, "", ""); st != 409 || !strings.Contains(body, "follows no room") {
		t.Errorf("rejoin outside a room: %d %s", st, body)
	}
}

// Hand-published values on the room's key that the lab would not write
// (not JSON, too big, an unknown preset, another version) are ignored with
// a log line: the followers keep the room's last good state, the late
// joiner's page is served, and the next good state still applies. A value
// over the bus's own limit never arrives.
func TestRoomBusBadInput(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	follower := roomtest.OpenRoomStream(t, l.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", roomtest.Charted)
	subject := "$KV." + roombus.RoomBucket + "." + code
	hash := strings.Repeat("ab", 32)
	// One at a time: the bucket keeps one revision per key, so a value
	// overwritten before a replica read it is never seen (latest wins).
	for _, tt := range []struct{ msg, log string }{
		{`{not json`, "not a room record"},
		{`{"v":1,"keyHash":"` + hash + `","state":{"preset":"search-cache","speed":"1"},"pad":"` + strings.Repeat("x", 20<<10) + `"}`, "bytes long (allowed up to 16384)"},
		{`{"v":1,"keyHash":"` + hash + `","state":{"preset":"no-such-preset","speed":"1"}}`, `preset: \"no-such-preset\" is not a preset`},
		{`{"v":7,"keyHash":"` + hash + `","state":{"preset":"search-cache","speed":"1"}}`, "v: 7 is not a record version"},
		{`{"v":1,"keyHash":"` + hash + `","state":{"preset":"search-cache","speed":"1","cfg":{"max_ejection_percent":1e9}}}`, "max_ejection_percent: 1000000000 is out of range"},
		{strings.Repeat("y", roombus.MaxValue+1), ""}, // refused by the bus itself
	} {
		if err := l.Bus.Conn().Publish(subject, []byte(tt.msg)); err != nil {
			t.Fatal(err)
		}
		if err := l.Bus.Conn().Flush(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for tt.log != "" && !strings.Contains(l.Logs.String(), tt.log) {
			if time.Now().After(deadline) {
				t.Fatalf("no log line with %q:\n%s", tt.log, l.Logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if n := strings.Count(l.Logs.String(), `msg="room bus: ignored a room state"`); n != 5 {
		t.Errorf("%d log lines for ignored states, want 5:\n%s", n, l.Logs.String())
	}
	roomtest.ExpectNone(t, follower, 200*time.Millisecond, "a bad state reached the follower", roomtest.SignalPatch(`"cfg"`))
	// The room still has its good state, for pages and for the instructor.
	if res, err := http.Get(l.TS.URL + "/r/" + code); err != nil || res.StatusCode != 200 {
		t.Fatalf("late joiner's page after bad states: %v %v", err, res.Status)
	}
	if st, body := roomtest.Post(t, l.TS.URL, "set", roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache","seq":1,"cfg":{"max_ejection_percent":20}`), code, key); st != 204 {
		t.Fatalf("instructor set: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the good state after the bad ones", roomtest.SignalPatch(`"max_ejection_percent":20`))
}

// The limits: attendees per room and rooms per replica answer 503, joins
// per client address 429.
func TestRoomLimits(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{MaxRooms: 1, MaxAttendees: 1})
	code, key := l.CreateRoom(t, "")
	webtest.WaitFor(t, roomtest.OpenRoomStream(t, l.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", "")), "the first attendee", roomtest.SignalPatch(`"follow":true`))
	// The instructor's stream does not count.
	webtest.WaitFor(t, roomtest.OpenStreamKey(t, l.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", ""), code, key), "the instructor's stream", roomtest.SignalPatch(`"cursor"`))
	res, err := http.DefaultClient.Do(webtest.StreamRequest(t.Context(), l.TS.URL, "/lab/stream", roomtest.Sig(roomtest.TabFollower2, code, "follow", ""),
		&http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: att(t, l, code, "second")}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || !strings.Contains(string(b), "as many attendees") {
		t.Errorf("second attendee's stream: %d %s", res.StatusCode, b)
	}
	if res, _ := http.Get(l.TS.URL + "/r/" + code); res.StatusCode != 503 {
		t.Errorf("attendee page of a full room: %d", res.StatusCode)
	}
	req, _ := http.NewRequest("POST", l.TS.URL+"/rooms", nil)
	req.Header.Set("Accept", "application/json")
	res, _ = http.DefaultClient.Do(req)
	if b, _ := io.ReadAll(res.Body); res.StatusCode != 503 || !strings.Contains(string(b), "as many rooms") {
		t.Errorf("a second room: %d %s", res.StatusCode, b)
	}

	l2 := startRoomLab(t, roombus.BusOptions{}, Limits{JoinsPerMinute: 2, JoinBurst: 2})
	for i, want := range []int{404, 404, 429} {
		res, _ := http.Get(l2.TS.URL + "/r/ZZZZZZ")
		if res.StatusCode != want || (want == 429 && res.Header.Get("Retry-After") != "60") {
			t.Errorf("join %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
}

// A lesson's room: the instructor's playback holds at the prediction and
// so does the follower's; the follower's answer is its own (no break
// away, the room's hold stands); the instructor's answer releases the
// room; a step loaded by the instructor loads for the room.
func TestRoomLesson(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"lesson":"cap"}`)
	base := l.TS.URL
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"lesson":"cap","preset":"search-cache"`)
	follower := roomtest.OpenRoomStream(t, base, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"lesson":"cap","preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", roomtest.Charted)
	if st, body := roomtest.Post(t, base, "speed", strings.Replace(present, "}", `,"speed":"instant"}`, 1), code, key); st != 204 {
		t.Fatalf("speed: %d %s", st, body)
	}
	if st, body := roomtest.Post(t, base, "play", present, code, key); st != 204 {
		t.Fatalf("play: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the follower held at 30 s", roomtest.SignalPatch(`"cursor":3,`, `"held":true`))
	if st, _ := roomtest.Post(t, base, "answer", roomtest.Sig(roomtest.TabFollower, code, "follow", `"lesson":"cap","predicted":true`), code, ""); st != 204 {
		t.Fatalf("follower's answer: %d", st)
	}
	webtest.WaitFor(t, follower, "the follower still held after its answer", roomtest.SignalPatch(`"cursor":3,`, `"held":true`))
	roomtest.ExpectNone(t, follower, 200*time.Millisecond, "the answer broke away", roomtest.SignalPatch(`"follow":false`))
	if st, _ := roomtest.Post(t, base, "answer", strings.Replace(present, "}", `,"predicted":true}`, 1), code, key); st != 204 {
		t.Fatalf("instructor's answer: %d", st)
	}
	webtest.WaitFor(t, follower, "the room released", roomtest.SignalPatch(`"cursor":30,`, `"held":false`))
	if st, body := roomtest.Post(t, base, "lesson", strings.Replace(present, "}", `,"step":"cap-34"}`, 1), code, key); st != 204 {
		t.Fatalf("load step: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the step loaded, at its start", roomtest.SignalPatch(`"cursor":0,`, `"step":"cap-34"`))
}
