package room

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/tabid"
)

// Issue 19's attacks on a workshop, run against a real server (an
// httptest server on a loopback socket, its own embedded bus): what a
// hostile attendee on the workshop's network sends, and what a real class
// behind one NAT must still be able to do. Each logs its figures.

// randomHex is n random bytes in hex: a made-up id.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clientFrom is an HTTP client whose connections leave from the loopback
// address local (127.0.0.x: another machine, as the server's limits see
// it) and that keeps cookies, as a browser does.
func clientFrom(t testing.TB, local string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Jar: jar, Transport: tr, Timeout: 20 * time.Second}
}

// browserOf is the browser identity (web/tabid) in c's cookie jar for
// base: the one a page of the lab set, else one c takes now, as a script
// may.
func browserOf(t testing.TB, c *http.Client, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == tabid.Cookie {
			return ck.Value
		}
	}
	b := tabid.NewBrowser()
	c.Jar.SetCookies(u, []*http.Cookie{{Name: tabid.Cookie, Value: b, Path: "/"}})
	return b
}

// call sends method u with a JSON body from client c and returns the
// status and body.
func call(t testing.TB, c *http.Client, method, u, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// mintAttendees is n identities of room code as its page would issue them
// (identity.go), without n page loads.
func mintAttendees(t testing.TB, l *roomLab, code string, n int) []*http.Cookie {
	out := make([]*http.Cookie, 0, n)
	for i := range n {
		out = append(out, &http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: att(t, l, code, fmt.Sprintf("attendee-%d", i))})
	}
	return out
}

// openQuestion opens "How many hosts are ejected at 60 s?" in the room.
func openQuestion(t testing.TB, l *roomLab, code, key string) record.Question {
	t.Helper()
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":60}`, code, key, "")
	var q record.Question
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("open a question: %d %s", st, body)
	}
	return q
}

// Defect 3: made-up identities answer nothing; a class of 50 behind one
// address loads the page and answers within 10 s; the same address
// minting identities as fast as it can gets no more than a class's worth.
func TestRoomAttackPollStuffing(t *testing.T) {
	if testing.Short() {
		t.Skip("a class of 50 and an address minting identities: make test runs it, make check does not")
	}
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	q := openQuestion(t, l, code, key)
	attacker := clientFrom(t, "127.0.0.2")

	// 500 answers, each under an identity the client made up: the old
	// attendee cookie, a forged room cookie, or a tab id.
	accepted := 0
	start := time.Now()
	for i := range 500 {
		req, _ := http.NewRequest("POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=5", strings.NewReader(`{"tab":"`+randomHex(16)+`"}`))
		req.Header.Set("Content-Type", "application/json")
		switch i % 3 {
		case 0:
			req.AddCookie(&http.Cookie{Name: "olab_att", Value: randomHex(16)})
		case 1:
			req.AddCookie(&http.Cookie{Name: "olab_att_" + code, Value: randomHex(16) + "." + randomHex(16)})
		}
		res, err := attacker.Transport.RoundTrip(req) // no jar: every answer its own made-up identity
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == 204 {
			accepted++
		}
		res.Body.Close()
	}
	t.Logf("500 answers under made-up identities in %v: %d accepted", time.Since(start).Round(time.Millisecond), accepted)
	if accepted != 0 {
		t.Errorf("%d of 500 answers under made-up identities were accepted, want 0", accepted)
	}

	// A class of 50 behind one NAT address: each browser loads the room's
	// page, then answers.
	nat := "127.0.0.3"
	start = time.Now()
	var wg sync.WaitGroup
	var answered atomic.Int32
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clientFrom(t, nat)
			// A page the bus was too slow for (a 503 on a machine loaded
			// far past its cores) is loaded again, as its visitor would:
			// what is asserted is that the limits refuse no one.
			st, body := call(t, c, "GET", l.TS.URL+"/r/"+code, "")
			for try := 0; st == http.StatusServiceUnavailable && try < 3; try++ {
				t.Logf("attendee %d: the room's page: %d %s (loading it again)", i, st, webtest.Head(body, 120))
				st, body = call(t, c, "GET", l.TS.URL+"/r/"+code, "")
			}
			if st != 200 {
				t.Errorf("attendee %d: the room's page: %d %s", i, st, webtest.Head(body, 200))
				return
			}
			if st, body := call(t, c, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a="+fmt.Sprint(i%4), `{}`); st != 204 {
				t.Errorf("attendee %d: answer: %d %s", i, st, body)
				return
			}
			answered.Add(1)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("a class of 50 behind one address: %d answered in %v", answered.Load(), took.Round(time.Millisecond))
	// How long it took is logged, not asserted (a loaded machine decides
	// that); what matters is that no one of the 50 was refused.
	if answered.Load() != 50 {
		t.Errorf("a class of 50 behind one address: %d answered, want 50", answered.Load())
	}

	// The attacker as a browser: page loads as fast as it can, each with a
	// fresh cookie jar, each followed by an answer.
	minted := 0
	mintStart := time.Now()
	for range 500 {
		c := clientFrom(t, "127.0.0.2")
		if st, _ := call(t, c, "GET", l.TS.URL+"/r/"+code, ""); st != 200 {
			continue
		}
		if st, _ := call(t, c, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=9", `{}`); st == 204 {
			minted++
		}
	}
	_, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/question", "", code, "", "")
	t.Logf("500 fresh browsers from one address: %d answers accepted; the question: %s", minted, strings.TrimSpace(body))
	// The room's budget of identities per address (60), however long it
	// tries (it was a burst of 60, then 12 a minute: issue 34, item 8).
	if minted > DefaultIDsPerAddress {
		t.Errorf("one address minted %d answering identities in %v, want at most the room's budget, %d", minted, time.Since(mintStart).Round(time.Millisecond), DefaultIDsPerAddress)
	}
}

// Defect 4: a poll takes every attendee's answer: 1 000 attendees, 500
// of them streaming from this replica (-max-attendees; the others answer
// as from another replica's pages), all answer; each answer is accepted
// well within the bus's timeout, every page's count reaches 1 000, and
// the reveal counts them all.
//
// A TestScale test is judged on time, so make test runs it beside the
// browser tests, without the race detector (which makes the bus 20 times
// slower). Under -race (go test -race by hand) it opens fewer streams and
// only logs its times: in CI at load 10 the race run's slowest answer
// took 6.2 s, the machine's and the detector's time, not the room's.
func TestScaleRoomPoll(t *testing.T) {
	if testing.Short() {
		t.Skip("1 000 attendees answering at once: make test runs it, make check does not")
	}
	here, n, inflight := 500, 1000, 16
	if webtest.RaceEnabled {
		// 500 streams under the race detector take minutes to open.
		here, inflight = 100, 4
	}
	l := startRoomLab(t, roombus.BusOptions{}, Limits{AttendeesPerAddress: here}) // the test's attendees share one address
	l.S.lab.SetClientLimits(1_000_000, 1_000_000)
	l.S.lab.SetStreamsPerAddress(here)
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	q := openQuestion(t, l, code, key)
	ids := mintAttendees(t, l, code, n)
	streams := make([]<-chan webtest.Event, here)
	for i := range here {
		streams[i] = roomtest.OpenStreamCtx(t, t.Context(), l.TS.URL, roomtest.Sig(webtest.TabOf(randomHex(16)), code, "follow", `"preset":"search-cache"`), ids[i])
	}
	for i, ev := range streams {
		webtest.WaitFor(t, ev, fmt.Sprintf("stream %d's question", i), func(ev webtest.Event) bool { return strings.Contains(ev.Data, `id="room-q-count"`) })
	}
	c := clientFrom(t, "127.0.0.4")
	var wg sync.WaitGroup
	var ok atomic.Int32
	var slowest atomic.Int64
	var firstErr sync.Once
	sem := make(chan struct{}, inflight)
	start := time.Now()
	for i, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req, _ := http.NewRequest("POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a="+fmt.Sprint(i%3), nil)
			req.AddCookie(id)
			t0 := time.Now()
			res, err := c.Transport.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			d := time.Since(t0)
			for cur := slowest.Load(); int64(d) > cur && !slowest.CompareAndSwap(cur, int64(d)); cur = slowest.Load() {
			}
			if res.StatusCode == 204 {
				ok.Add(1)
			} else {
				firstErr.Do(func() { t.Errorf("answer %d: %d %s", i, res.StatusCode, b) })
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for i, ev := range streams {
		webtest.WaitFor(t, ev, fmt.Sprintf("stream %d's count at %d", i, n), func(ev webtest.Event) bool {
			return strings.Contains(ev.Data, fmt.Sprintf(`<span id="room-q-count">%d</span> answered`, n))
		})
	}
	t.Logf("%d attendees answered (%d streaming here): %d accepted in %v, slowest answer %v; every page counted %d after %v",
		n, here, ok.Load(), took.Round(time.Millisecond), time.Duration(slowest.Load()).Round(time.Millisecond), n, time.Since(start).Round(time.Millisecond))
	if int(ok.Load()) != n {
		t.Fatalf("%d of %d answers accepted", ok.Load(), n)
	}
	if s := time.Duration(slowest.Load()); s >= roombus.Timeout {
		if webtest.RaceEnabled {
			t.Logf("not judged under -race: the slowest answer took %v, the bus's timeout", s)
		} else {
			t.Errorf("the slowest answer took %v, the bus's timeout", s)
		}
	}
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, "")
	var revealed record.Question
	if st != 200 || json.Unmarshal([]byte(body), &revealed) != nil || revealed.Total != n {
		t.Fatalf("reveal: %d %s", st, webtest.Head(body, 300))
	}
	sum := 0
	for _, b := range revealed.Hist {
		sum += b.N
	}
	if sum != n {
		t.Errorf("the histogram counts %d answers, want %d: %+v", sum, n, revealed.Hist)
	}
}

// Defect 5: follower streams crafted without a page visit do not fill the
// room; neither do streams from one address with identities it got from
// the page; an attendee at another address still gets in.
func TestRoomAttackFill(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of follower streams: make test runs it, make check does not")
	}
	const room = 150
	l := startRoomLab(t, roombus.BusOptions{}, Limits{MaxAttendees: room})
	l.S.lab.SetClientLimits(1_000_000, 1_000_000) // the attack is on the room's limits, not on new tabs
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	attacker := clientFrom(t, "127.0.0.5")
	attacker.Timeout = 0
	refusals := map[string]bool{}
	// A stream of a new tab of c's browser (a script names one of its own
	// when it has none: a tab id is no key to the room either way).
	open := func(c *http.Client) int {
		b := browserOf(t, c, l.TS.URL)
		sig := roomtest.Sig(tabid.New(b), code, "follow", `"preset":"search-cache"`)
		res, err := c.Do(webtest.StreamRequest(ctx, l.TS.URL, "/lab/stream", sig, &http.Cookie{Name: tabid.Cookie, Value: b}))
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			refusals[fmt.Sprintf("%d %s", res.StatusCode, strings.TrimSpace(string(b)))] = true
			return res.StatusCode
		}
		go func() { _, _ = io.Copy(io.Discard, res.Body); res.Body.Close() }()
		return 200
	}
	crafted := 0
	for range room {
		if open(attacker) == 200 {
			crafted++
		}
	}
	// The attacker's cookie jar now loads pages for identities and opens
	// every stream it can with each.
	withID := 0
	for range 60 {
		c := clientFrom(t, "127.0.0.5")
		c.Timeout = 0
		if st, _ := call(t, c, "GET", l.TS.URL+"/r/"+code, ""); st != 200 {
			continue
		}
		for range 10 {
			if open(c) == 200 {
				withID++
			}
		}
	}
	t.Logf("one address, room of %d: %d crafted follower streams, %d more with identities from the page", room, crafted, withID)
	if crafted != 0 {
		t.Errorf("%d crafted follower streams (no identity) were let in, want 0", crafted)
	}
	if withID > 100 {
		t.Errorf("one address held %d attendee streams, want at most 100", withID)
	}
	// The refusals name what is missing or the limit.
	for _, want := range []string{
		"403 attendee: this browser has no attendee identity for workshop " + code,
		"429 too many attendee streams of this room from your address (allowed 100 per address and room on this server)",
	} {
		found := false
		for r := range refusals {
			found = found || strings.HasPrefix(r, want)
		}
		if !found {
			t.Errorf("no refusal %q among %v", want, refusals)
		}
	}
	real := clientFrom(t, "127.0.0.6")
	real.Timeout = 0
	if st, body := call(t, real, "GET", l.TS.URL+"/r/"+code, ""); st != 200 {
		t.Fatalf("a real attendee's page: %d %s", st, webtest.Head(body, 200))
	}
	if st := open(real); st != 200 {
		t.Errorf("a real attendee's stream: %d, want 200", st)
	}
}

// Defect 7: guessing codes on the room API is as slow as guessing them on
// the room's pages: after a burst of 60 misses the address gets 429 for
// every code, live or not, so 404 against 200 tells nothing more.
func TestRoomAttackEnumeration(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	attacker := clientFrom(t, "127.0.0.7")
	routes := []struct{ method, path string }{
		{"GET", "/question"}, {"POST", "/recording/pause"}, {"POST", "/answer"}, {"GET", "/recording.json"},
		{"POST", "/summon"}, {"POST", "/recording/stream"}, {"POST", "/questions"}, {"POST", "/spotlight"}, {"POST", "/identities"},
		{"GET", "/handout"},
	}
	statuses := map[int]int{}
	start := time.Now()
	for i := range 200 {
		rt := routes[i%len(routes)]
		st, _ := call(t, attacker, rt.method, l.TS.URL+"/r/"+record.NewCode()+rt.path, `{"tab":"`+randomHex(16)+`"}`)
		statuses[st]++
	}
	st, _ := call(t, attacker, "GET", l.TS.URL+"/r/"+code+"/question", "")
	t.Logf("200 guessed codes on the room API from one address: statuses %v; then the live room: %d", statuses, st)
	// A burst of 60 (JoinBurst), then one a second (JoinsPerMinute).
	if limit := 60 + 1 + int(time.Since(start).Seconds()); statuses[404] > limit {
		t.Errorf("%d of 200 guesses were answered 404 (which tells a code is free), want at most %d", statuses[404], limit)
	}
	if st != 429 {
		t.Errorf("the live room's question after the guesses: %d, want 429 (as for a free code)", st)
	}
	if st, body := call(t, clientFrom(t, "127.0.0.8"), "GET", l.TS.URL+"/r/"+code+"/question", ""); st != 200 {
		t.Errorf("the live room's question from another address: %d %s", st, body)
	}
}

// A command whose signals name a room is a request of that room: guessing
// codes through /lab/cmd counts as on the room API.
func TestRoomGuessesByCommand(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{JoinsPerMinute: 3, JoinBurst: 3})
	code, _ := l.CreateRoom(t, "")
	var got []int
	for range 5 {
		st, _ := roomtest.Post(t, l.TS.URL, "rejoin", roomtest.Sig(webtest.TabOf(randomHex(16)), record.NewCode(), "follow", ""), "", "")
		got = append(got, st)
	}
	st, _ := roomtest.Post(t, l.TS.URL, "rejoin", roomtest.Sig(webtest.TabOf(randomHex(16)), code, "follow", ""), code, "")
	if fmt.Sprint(got) != "[404 404 404 429 429]" || st != 429 {
		t.Errorf("rejoin on 5 guessed codes: %v, then on the live room: %d; want [404 404 404 429 429], 429", got, st)
	}
}
