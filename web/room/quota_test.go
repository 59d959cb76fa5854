package room

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/room/recording"
	"outlierlab/web/roombus"
)

// Issue 34's attacks on the bus that every workshop shares, each run
// against a real server and its own embedded bus: the rooms' bucket
// filled with new rooms, and the recordings' stream flooded by one room.

// createFrom posts /rooms to h for JSON as a client at addr would.
func createFrom(h http.Handler, addr, body string) (int, string) {
	req := httptest.NewRequest("POST", "/rooms", strings.NewReader(body))
	req.RemoteAddr = addr + ":40000"
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// Item 1: 21 270 rooms from 400 addresses filled the 32 MiB bucket in
// 38.6 s; then new workshops got 500 ("maximum bytes exceeded"), answers
// in existing rooms 503, an instructor's spotlight 500 after 5 s. Here
// the bucket is 1 MiB (the same mechanism, a smaller figure): a burst of
// 24 000 creations from 400 addresses is refused with 429 or 503 naming
// the limit long before its end, never 500, and a room made before it
// still takes its instructor's moves and its attendees' answers.
func TestRoomAttackFillBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("24 000 room creations: make test runs it, make check does not")
	}
	const bucket = 1 << 20
	l := startRoomLab(t, roombus.BusOptions{MaxBucket: bucket}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	q := openQuestion(t, l, code, key)
	h := l.S.Handler()

	const burst, addrs, workers = 24000, 400, 8
	body := `{"preset":"search-cache","cfg":{"consecutive_5xx":7,"interval":3,"base_ejection_time":45,"max_ejection_percent":34,"enforcing_consecutive_5xx":90}}`
	var (
		mu        sync.Mutex
		statuses  = map[int]int{}
		refusals  = map[string]string{} // status → first body
		firstNo   = -1                  // the first creation refused
		next      atomic.Int64
		wg        sync.WaitGroup
		createdAt time.Duration
	)
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= burst {
					return
				}
				a := i % addrs
				st, b := createFrom(h, fmt.Sprintf("127.1.%d.%d", a/200, a%200+1), body)
				mu.Lock()
				statuses[st]++
				if st != http.StatusCreated {
					if _, ok := refusals[fmt.Sprint(st)]; !ok {
						refusals[fmt.Sprint(st)] = strings.TrimSpace(b)
					}
					if firstNo < 0 || i < firstNo {
						firstNo = i
					}
				} else {
					createdAt = time.Since(start)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	used, limit, err := l.Bus.Usage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d creations from %d addresses in %v: %v; the first refused was #%d, the last room made at %v; the bucket holds %d of %d bytes",
		burst, addrs, took.Round(time.Millisecond), statuses, firstNo, createdAt.Round(time.Millisecond), used, limit)
	for st, b := range refusals {
		t.Logf("refusal %s: %s", st, b)
	}
	if statuses[http.StatusInternalServerError] > 0 {
		t.Errorf("%d creations answered 500 (%s), want 429 or 503 naming the limit", statuses[500], refusals["500"])
	}
	if firstNo < 0 || firstNo > burst/4 {
		t.Errorf("the first refusal came at creation #%d of %d, want one long before the end", firstNo, burst)
	}
	for st, want := range map[string]string{"429": "new workshops from your address", "503": "new workshops are refused"} {
		if b, ok := refusals[st]; ok && !strings.Contains(b, want) {
			t.Errorf("a %s refusal does not name its limit (%q): %s", st, want, b)
		}
	}
	if used > limit/2+64<<10 {
		t.Errorf("the bucket holds %d of %d bytes after the burst, want about half at most", used, limit)
	}

	// The room made before the burst: its instructor moves it, an
	// attendee answers, a new question opens.
	for _, host := range []string{"h3", "h5"} {
		t0 := time.Now()
		if st, b := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/spotlight?host="+host, "", code, key, ""); st != 200 {
			t.Errorf("the instructor's spotlight on %s after the burst: %d %s (after %v)", host, st, b, time.Since(t0).Round(time.Millisecond))
		}
	}
	att := &http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: att(t, l, code, "attendee-after-burst")}
	if st, b := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=2", "", code, "", att.Value); st != 204 {
		t.Errorf("an answer after the burst: %d %s", st, b)
	}
	openQuestion(t, l, code, key)
	// Another address, refused by the deployment's limit: a 503 naming it.
	if st, b := createFrom(h, "192.0.2.1", body); st != http.StatusServiceUnavailable || !strings.Contains(b, "new workshops are refused") {
		t.Errorf("a new workshop from a new address after the burst: %d %s", st, b)
	}
}

// Item 1: a room nobody has used expires after Limits.UnusedTTL, not the
// bucket's 12 h; the first attendee (or any write of its instructor)
// keeps it as long as the others.
func TestRoomUnusedExpires(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{UnusedTTL: 2 * time.Second})
	if !l.Bus.KeyTTL() {
		t.Fatal("the embedded NATS gives no key a TTL of its own")
	}
	unused, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	joined, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	written, wkey := l.CreateRoom(t, `{"preset":"search-cache"}`)
	if st, b := call(t, clientFrom(t, "127.0.0.9"), "GET", l.TS.URL+"/r/"+joined, ""); st != 200 {
		t.Fatalf("the attendee's page: %d %s", st, webtest.Head(b, 200))
	}
	if st, b := roomtest.Call(t, "POST", l.TS.URL+"/r/"+written+"/lock?on=1", "", written, wkey, ""); st != 200 {
		t.Fatalf("lock: %d %s", st, b)
	}
	start := time.Now()
	roomtest.WaitUntil(t, "the unused room expires", func() bool {
		_, err := l.Bus.KV.Get(t.Context(), unused)
		return err != nil
	})
	t.Logf("the unused room expired %v after it was made", time.Since(start).Round(100*time.Millisecond))
	for _, c := range []string{joined, written} {
		if _, err := l.Bus.KV.Get(t.Context(), c); err != nil {
			t.Errorf("room %s, used, is gone with the unused one: %v", c, err)
		}
	}
	for c, want := range map[string]string{unused: "start", joined: "start", written: "start lock"} {
		entries, err := l.S.rooms.timeline.Read(t.Context(), c)
		var kinds []string
		for _, e := range entries {
			kinds = append(kinds, e.Kind)
		}
		if err != nil || strings.Join(kinds, " ") != want {
			t.Errorf("room %s's recording: %q, %v; want %q", c, strings.Join(kinds, " "), err, want)
		}
	}
}

// Item 2: one key holder appended 1 734 entries a second to its room's
// recording (spotlight moves); after some 120 000 every other room's
// recording read "entries": null. Here the recordings' stream is 4 MiB:
// the key holder's moves are refused past 100 at once and 20 a second
// (429 naming the limit), and its room's entries past RoomEntries (as
// many replicas would append, each within its own rate) push out its
// own oldest, never another room's.
func TestRoomAttackRecordingFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("a recording flooded past its stream: make test runs it, make check does not")
	}
	const stream = 4 << 20
	l := startRoomLab(t, roombus.BusOptions{MaxTimeline: stream}, Limits{})
	victim, vkey := l.CreateRoom(t, `{"preset":"search-cache"}`)
	for _, host := range []string{"h1", "h2"} {
		if st, b := roomtest.Call(t, "POST", l.TS.URL+"/r/"+victim+"/spotlight?host="+host, "", victim, vkey, ""); st != 200 {
			t.Fatalf("the victim's spotlight: %d %s", st, b)
		}
	}
	before, err := l.S.rooms.timeline.Read(t.Context(), victim)
	if err != nil || len(before) != 3 {
		t.Fatalf("the victim's recording: %d entries, %v", len(before), err)
	}

	attacker, akey := l.CreateRoom(t, `{"preset":"search-cache"}`)
	// The key holder's moves over HTTP, as fast as one client sends them.
	statuses := map[int]int{}
	var refused string
	start := time.Now()
	for i := range 600 {
		st, b := roomtest.Call(t, "POST", l.TS.URL+"/r/"+attacker+"/spotlight?host=h"+fmt.Sprint(i%6), "", attacker, akey, "")
		statuses[st]++
		if st != 200 && refused == "" {
			refused = strings.TrimSpace(b)
		}
	}
	took := time.Since(start)
	t.Logf("600 spotlight moves in %v: %v; refused with %q", took.Round(time.Millisecond), statuses, refused)
	if limit := 100 + int(took.Seconds()*20) + 1; statuses[200] > limit {
		t.Errorf("%d of 600 moves were taken in %v, want at most %d (100 at once, then 20 a second)", statuses[200], took.Round(time.Millisecond), limit)
	}
	if statuses[429] > 0 && !strings.Contains(refused, "changes to workshop "+attacker) {
		t.Errorf("the refusal does not name the limit: %s", refused)
	}

	// As many replicas would, each within its own rate: entries appended
	// straight to the attacker's recording, three times what the stream
	// holds.
	info, err := l.Bus.Timeline.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	per := int(info.State.Bytes / max(info.State.Msgs, 1))
	n := 3 * stream / per
	st := record.State{Preset: "search-cache", Speed: "1", Spot: &record.Spot{Host: "h3"}}
	var wg sync.WaitGroup
	var next atomic.Int64
	start = time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				l.S.rooms.timeline.Append(t.Context(), attacker, 0, "spotlight", st, nil)
			}
		}()
	}
	wg.Wait()
	info, _ = l.Bus.Timeline.Info(t.Context())
	t.Logf("%d entries of about %d B appended to room %s in %v: the stream holds %d entries, %d bytes",
		n, per, attacker, time.Since(start).Round(time.Millisecond), info.State.Msgs, info.State.Bytes)

	st2, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+victim+"/recording.json", "", victim, "", "")
	var rec recording.Recording
	if st2 != 200 || json.Unmarshal([]byte(body), &rec) != nil {
		t.Fatalf("the victim's recording: %d %s", st2, webtest.Head(body, 300))
	}
	if len(rec.Entries) != len(before) {
		t.Errorf("the victim's recording has %d entries after the flood, had %d: %s", len(rec.Entries), len(before), webtest.Head(body, 300))
	}
	last, err := l.S.rooms.timeline.Last(t.Context(), attacker)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := l.S.rooms.timeline.Read(t.Context(), attacker)
	t.Logf("the flooding room's recording keeps %d entries (its last at sequence %d)", len(entries), last)
	if err != nil || len(entries) > roombus.RoomEntries {
		t.Errorf("the flooding room's recording: %d entries, %v; want at most %d", len(entries), err, roombus.RoomEntries)
	}
}

// Item 4: one address clearing its cookie answers a poll 60 times at once
// (then 12 a minute): as many identities as a class behind one NAT, which
// the server cannot tell apart. The instructor sees where the answers
// come from: the count of addresses and the most from one, on their
// question panel and in the question's JSON (with the key).
func TestRoomPollSources(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	q := openQuestion(t, l, code, key)
	presenter := roomtest.OpenStreamKey(t, l.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`), code, key)
	webtest.WaitFor(t, presenter, "the first redraw", roomtest.Charted)
	answer := func(from, name string) {
		t.Helper()
		req, _ := http.NewRequest("POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=3", nil)
		req.AddCookie(&http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: att(t, l, code, name)})
		res, err := clientFrom(t, from).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 204 {
			t.Fatalf("answer of %s from %s: %d", name, from, res.StatusCode)
		}
	}
	for i := range 60 { // the stuffing: 60 identities of one address
		answer("127.0.0.2", fmt.Sprintf("stuffed-%d", i))
	}
	for i := range 5 { // the class, each at its own address
		answer(fmt.Sprintf("127.0.0.%d", 10+i), fmt.Sprintf("attendee-%d", i))
	}
	roomtest.WaitUntil(t, "65 answers counted", func() bool {
		n, _ := l.S.rooms.answerCount(code, q.ID, "")
		return n == 65
	})
	const want = "65 answers from 6 addresses, up to 60 from one"
	webtest.WaitFor(t, presenter, "the sources on the instructor's panel", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, `id="room-question"`) && strings.Contains(ev.Data, want)
	})
	st, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/question", "", code, key, "")
	var out struct {
		Count     int `json:"count"`
		Addresses int `json:"addresses"`
		MostFrom  int `json:"mostFromOne"`
	}
	if st != 200 || json.Unmarshal([]byte(body), &out) != nil || out.Count != 65 || out.Addresses != 6 || out.MostFrom != 60 {
		t.Errorf("the question with the key: %d %s", st, body)
	}
	// Without the key, nothing of where the answers come from.
	if st, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/question", "", code, "", ""); st != 200 || strings.Contains(body, "addresses") {
		t.Errorf("the question without the key: %d %s", st, body)
	}
}
