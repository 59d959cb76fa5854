package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/room/recording"
	"outlierlab/web/roombus"
)

// callTimed is roomtest.Call with the answer's headers and how long it took.
var callTimed = roomtest.CallTimed

// putCap writes the room's cap straight on the bus, as another replica's
// move would land there, trying again (each try bounded) while a cluster
// just back elects its leaders.
func putCap(t testing.TB, urls, code string, limit int) {
	t.Helper()
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	try := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, roombus.RoomBucket)
		if err != nil {
			return err
		}
		e, err := kv.Get(ctx, code)
		if err != nil {
			return err
		}
		var rec record.Record
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.State.Cfg == nil {
			rec.State.Cfg = map[string]float64{}
		}
		rec.State.Cfg["max_ejection_percent"] = float64(limit)
		b, _ := json.Marshal(rec)
		_, err = kv.Update(ctx, code, b, e.Revision())
		return err
	}
	var last error
	if !webtest.Eventually(30*time.Second, func() bool { last = try(); return last == nil }) {
		t.Fatalf("put the room's cap on the bus: %v", last)
	}
}

// Issue 33, item 7: the whole bus goes (every server of a 3-node
// cluster) under a room followed by ten attendees across two replicas,
// then comes back. While it is down, the room's writes (the instructor's
// scene move, spotlight and question, an attendee's answer) answer 503
// with Retry-After within 2 s (the first on each replica after what is
// left of the reconnect grace), naming the room bus, and the replicas are
// not ready; the instructor's slider answers as quickly (its own tab
// keeps the move). Once it is back they are ready again, the state the
// bus holds reaches every follower without a move, and so does the first
// move.
func TestBusOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node NATS cluster stopped and started: make test runs it, make check does not")
	}
	c := startNATSCluster(t, 3)
	la := startRoomLab(t, roombus.BusOptions{URL: c.urls()}, Limits{})
	lb := startRoomLab(t, roombus.BusOptions{URL: c.urls()}, Limits{})
	labs := []*roomLab{la, lb}
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	_, plan, planKey, body := startPlanRoom(t, la, "plan:lightning")
	if plan == "" {
		t.Fatalf("a plan's room: %s", body)
	}
	q := openQuestion(t, la, code, key)
	var followers []<-chan webtest.Event
	for i := range 10 {
		l := labs[i%2]
		tab := webtest.TabOf(fmt.Sprintf("follower-tab-%011d", i))
		f := roomtest.OpenStreamCtx(t, t.Context(), l.TS.URL, roomtest.Sig(tab, code, "follow", `"preset":"search-cache"`), roomtest.AttendeeCookie(t, l.TS.URL, code))
		webtest.WaitFor(t, f, "a follower's first redraw", roomtest.Charted)
		followers = append(followers, f)
	}
	seq := 0
	move := func(base string, limit int) (int, string, time.Duration) {
		seq++
		start := time.Now()
		st, body := roomtest.Post(t, base, "set", roomtest.Sig(roomtest.TabPresenter, code, "present", fmt.Sprintf(`"preset":"search-cache","seq":%d,"cfg":{"max_ejection_percent":%d}`, seq, limit)), code, key)
		return st, body, time.Since(start)
	}
	everyFollower := func(what string, limit int) {
		t.Helper()
		for i, f := range followers {
			webtest.WaitFor(t, f, fmt.Sprintf("%s on follower %d (replica %c)", what, i, "ab"[i%2]), roomtest.SignalPatch(fmt.Sprintf(`"max_ejection_percent":%d`, limit)))
		}
	}
	if st, body, _ := move(la.TS.URL, 22); st != 204 {
		t.Fatalf("a move: %d %s", st, body)
	}
	everyFollower("the first move", 22)

	for i := range c.servers {
		c.kill(i)
	}
	for _, l := range labs {
		roomtest.WaitUntil(t, "the replica's connection lost", func() bool { return !l.Bus.Conn().IsConnected() })
	}
	att := att(t, la, code, "attendee-01")
	for _, w := range []struct{ name, base, path, body, code, key, att string }{
		{"a scene move", la.TS.URL, "/r/" + plan + "/scene?scene=1", "", plan, planKey, ""},
		{"a spotlight", la.TS.URL, "/r/" + code + "/spotlight?host=h5", "", code, key, ""},
		{"a question", lb.TS.URL, "/r/" + code + "/questions", `{"qkind":"ejected","qhost":"h3","qat":30}`, code, key, ""},
		{"an answer", lb.TS.URL, "/r/" + code + "/answer", `{"q":"` + q.ID + `","qans":3}`, code, "", att},
	} {
		// The first write on a replica may wait out what is left of the
		// reconnect grace (roombus.ReconnectGrace since the loss); then
		// writes are refused at once.
		most := 2 * time.Second
		if w.base == lb.TS.URL && w.name == "a question" || w.name == "a scene move" {
			most += roombus.ReconnectGrace
		}
		st, h, body, took := callTimed(t, "POST", w.base+w.path, w.body, w.code, w.key, w.att)
		if st != 503 || h.Get("Retry-After") == "" || !strings.Contains(body, "room bus") || took > most {
			t.Errorf("%s with the bus down: %d (Retry-After %q) %q after %v; want 503 with Retry-After, naming the room bus, within %v",
				w.name, st, h.Get("Retry-After"), strings.TrimSpace(body), took.Round(time.Millisecond), most)
		}
	}
	// The instructor's slider: not a 204 for a move nobody follows.
	if st, body, took := move(la.TS.URL, 30); st != 503 || !strings.Contains(body, "room bus") || took > 2*time.Second {
		t.Errorf("the instructor's slider with the bus down: %d %q after %v, want 503 naming the room bus within 2 s", st, body, took.Round(time.Millisecond))
	}
	for i, l := range labs {
		if err := l.Bus.Health(); !errors.Is(err, roombus.ErrDown) {
			t.Errorf("replica %c with the bus down: ready (%v)", "ab"[i], err)
		}
	}

	back := time.Now()
	for i := range c.servers {
		c.restart(i)
	}
	c.waitLeader()
	// The room's state changes on the bus as the replicas come back
	// (another replica's move): every follower has it, with no move here.
	putCap(t, c.urls(), code, 33)
	for _, l := range labs {
		if !webtest.Eventually(30*time.Second, func() bool { return l.Bus.Health() == nil }) {
			t.Fatalf("the bus is not ready 30 s after it came back: %v", l.Bus.Health())
		}
	}
	t.Logf("both replicas ready %v after NATS came back", time.Since(back).Round(time.Millisecond))
	everyFollower("the room's state once the bus is back", 33)
	var st int
	for st != 204 {
		st, body, _ = move(la.TS.URL, 37)
		if st != 204 && st != 503 {
			t.Fatalf("a move once the bus is back: %d %s", st, body)
		}
	}
	everyFollower("the first move accepted once the bus is back", 37)
}

// The bus's one NATS server (an external one, or a replica's embedded
// server the others use) stops and starts again on its store, with ten
// followers across two replicas: the watches' consumers went with it.
// Once the replicas are ready, the room's state as the bus then holds it
// reaches every follower without a move, and so does the next move. (It
// did not within 10 s: the watches waited for nats.go to notice.)
func TestBusOutageOneServer(t *testing.T) {
	opts := &server.Options{Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir()}
	ns := webtest.StartNATS(t, opts)
	url := ns.ClientURL()
	la := startRoomLab(t, roombus.BusOptions{URL: url}, Limits{})
	lb := startRoomLab(t, roombus.BusOptions{URL: url}, Limits{})
	labs := []*roomLab{la, lb}
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	var followers []<-chan webtest.Event
	for i := range 10 {
		l := labs[i%2]
		f := roomtest.OpenStreamCtx(t, t.Context(), l.TS.URL, roomtest.Sig(webtest.TabOf(fmt.Sprintf("follower-tab-%011d", i)), code, "follow", `"preset":"search-cache"`), roomtest.AttendeeCookie(t, l.TS.URL, code))
		webtest.WaitFor(t, f, "a follower's first redraw", roomtest.Charted)
		followers = append(followers, f)
	}
	everyFollower := func(what string, limit int) {
		t.Helper()
		for i, f := range followers {
			webtest.WaitFor(t, f, fmt.Sprintf("%s on follower %d (replica %c)", what, i, "ab"[i%2]), roomtest.SignalPatch(fmt.Sprintf(`"max_ejection_percent":%d`, limit)))
		}
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	for _, l := range labs {
		roomtest.WaitUntil(t, "the replica's connection lost", func() bool { return !l.Bus.Conn().IsConnected() })
	}
	back := time.Now()
	webtest.StartNATS(t, opts)
	for _, l := range labs {
		if !webtest.Eventually(30*time.Second, func() bool { return l.Bus.Health() == nil }) {
			t.Fatalf("the bus is not ready 30 s after NATS came back: %v", l.Bus.Health())
		}
	}
	t.Logf("both replicas ready %v after NATS came back", time.Since(back).Round(time.Millisecond))
	putCap(t, url, code, 33)
	everyFollower("the room's state once the bus is back", 33)
	if st, body := roomtest.Post(t, la.TS.URL, "set", roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache","seq":1,"cfg":{"max_ejection_percent":37}`), code, key); st != 204 {
		t.Fatalf("a move once the bus is back: %d %s", st, body)
	}
	everyFollower("the first move once the bus is back", 37)
}

// natsProxy is a TCP proxy between a replica and NATS that can hold back
// what the server sends, from the moment the client's bytes carry a mark
// (a subject) until released: an answer lost in the network for a while.
type natsProxy struct {
	t      testing.TB
	ln     net.Listener
	target string

	mu    sync.Mutex
	cond  *sync.Cond
	mark  string
	marks int // times the client's bytes carried mark
	held  bool
}

func startNATSProxy(t testing.TB, target string) *natsProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &natsProxy{t: t, ln: ln, target: strings.TrimPrefix(target, "nats://")}
	p.cond = sync.NewCond(&p.mu)
	t.Cleanup(func() { ln.Close(); p.release() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(c, s, true)
			go p.pipe(s, c, false)
		}
	}()
	return p
}

func (p *natsProxy) url() string { return "nats://" + p.ln.Addr().String() }

// holdAfter holds the server's bytes back from the first time the
// client's carry mark, and counts the times they do.
func (p *natsProxy) holdAfter(mark string) {
	p.mu.Lock()
	p.mark, p.marks = mark, 0
	p.mu.Unlock()
}

func (p *natsProxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.marks
}

func (p *natsProxy) release() {
	p.mu.Lock()
	p.mark, p.held = "", false
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *natsProxy) pipe(from, to net.Conn, fromClient bool) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 64<<10)
	var tail string // the end of the last read, for a mark cut in two
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		if fromClient && p.mark != "" {
			seen := tail + string(buf[:n])
			if k := strings.Count(seen, p.mark) - strings.Count(tail, p.mark); k > 0 {
				p.marks += k
				p.held = true
			}
			tail = seen[max(0, len(seen)-len(p.mark)):]
		}
		for !fromClient && p.held {
			p.cond.Wait()
		}
		p.mu.Unlock()
		if _, err := to.Write(buf[:n]); err != nil {
			return
		}
	}
}

// Issue 33: a recording's entry whose publication timed out (the server
// stored it, its answer came too late) and was published again was
// recorded twice. Here the server's answer to the spotlight's entry is
// held back until the entry has been published a second time: the
// recording has it once.
func TestTimelineRetryRecordsOnce(t *testing.T) {
	t.Parallel()
	ns := webtest.StartNATS(t, &server.Options{Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir()})
	p := startNATSProxy(t, ns.ClientURL())
	l := startRoomLab(t, roombus.BusOptions{URL: p.url()}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)

	p.holdAfter(roombus.TimelineSubject + code)
	type answer struct {
		status int
		body   string
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", l.TS.URL+"/r/"+code+"/spotlight?host=h5", nil)
		req.AddCookie(&http.Cookie{Name: "olab_key_" + code, Value: key})
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		done <- answer{status: res.StatusCode, body: string(b)}
	}()
	if !webtest.Eventually(20*time.Second, func() bool { return p.count() >= 2 }) {
		t.Fatalf("the spotlight's entry was published %d times in 20 s, its answer held back; want a retry", p.count())
	}
	p.release()
	select {
	case a := <-done:
		if a.err != nil || a.status != 200 {
			t.Fatalf("the spotlight: %d %s %v", a.status, a.body, a.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the spotlight did not answer within 20 s of the bus answering again")
	}
	st, body := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/recording.json", "", code, key, "")
	var rec recording.Recording
	if st != 200 || json.Unmarshal([]byte(body), &rec) != nil {
		t.Fatalf("recording: %d %s", st, body)
	}
	var kinds []string
	for _, e := range rec.Entries {
		kinds = append(kinds, e.Kind)
	}
	if k := strings.Join(kinds, " "); k != "start spotlight" {
		t.Errorf("the recording's entries: %s, want start spotlight (the retried entry once)", k)
	}
}
