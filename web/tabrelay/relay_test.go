package tabrelay

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"outlierlab/web/internal/webtest"
)

// testBus is a replica's side of the bus: a connection to the test's
// NATS server, open once ready is closed.
type testBus struct {
	nc    *nats.Conn
	ready chan struct{}
}

func (b *testBus) Ready() bool {
	select {
	case <-b.ready:
		return true
	default:
		return false
	}
}

func (b *testBus) Conn() *nats.Conn { return b.nc }

func (b *testBus) WaitReady(ctx context.Context) error {
	select {
	case <-b.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// replicas are n relays on one NATS server (in-process, a free loopback
// port), each with its own connection, as n replicas are; open says
// whether each one's bus is open from the start.
func replicas(t *testing.T, open ...bool) ([]*Relay, []*testBus) {
	t.Helper()
	ns := webtest.StartNATS(t, &server.Options{Port: server.RANDOM_PORT})
	var relays []*Relay
	var buses []*testBus
	for _, o := range open {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		b := &testBus{nc: nc, ready: make(chan struct{})}
		if o {
			close(b.ready)
		}
		relays = append(relays, New(b, slog.New(slog.NewTextHandler(io.Discard, nil))))
		buses = append(buses, b)
	}
	return relays, buses
}

// seen is what the holder's handler was given.
type seen struct {
	method, uri, body, ctype, cookie, remote, host string
	forwarded                                      bool
}

// holder is a handler that records its request and answers 409 with a
// header and a body, as a command's refusal does.
func holder(got chan<- seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), string(b), r.Header.Get("Content-Type"), r.Header.Get("Cookie"), r.RemoteAddr, r.Host, Forwarded(r)}
		w.Header().Set("X-Answer", "yes")
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, "max_ejection_percent: not now")
	})
}

// A command that lands on a replica without the tab's stream is served by
// the replica that holds it, as it was sent (method, address and query,
// body, headers, client address, host), marked forwarded; its answer is
// written back as the holder wrote it.
func TestForward(t *testing.T) {
	rs, _ := replicas(t, true, true)
	got := make(chan seen, 1)
	release := rs[0].Hold("tab-1", holder(got))
	defer release()

	req := httptest.NewRequest("POST", "http://lab.example/lab/cmd/set?x=1", strings.NewReader("ignored: the body is passed"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "olab_browser=abc")
	req.RemoteAddr = "192.0.2.7:5555"
	w := httptest.NewRecorder()
	if err := rs[1].Forward(w, req, "tab-1", []byte(`{"tab":"tab-1"}`)); err != nil {
		t.Fatal(err)
	}
	want := seen{"POST", "/lab/cmd/set?x=1", `{"tab":"tab-1"}`, "application/json", "olab_browser=abc", "192.0.2.7:5555", "lab.example", true}
	if s := <-got; s != want {
		t.Errorf("the holder served\n%+v\nwant\n%+v", s, want)
	}
	if w.Code != http.StatusConflict || w.Header().Get("X-Answer") != "yes" || w.Body.String() != "max_ejection_percent: not now" {
		t.Errorf("answer written back: %d %v %q", w.Code, w.Header(), w.Body.String())
	}
	if w.Header().Get(hdrStatus) != "" {
		t.Error("the relay's own status header reached the answer")
	}
}

// No replica holds the tab (none ever did, its streams ended, or its bus
// is not open): ErrNoHolder, and nothing written. A tab with two streams
// on a replica is held until both end; a stream's release twice counts once.
func TestNoHolder(t *testing.T) {
	rs, buses := replicas(t, true, true, false)
	forward := func(from int) error {
		w := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/lab/cmd/play", nil)
		err := rs[from].Forward(w, req, "tab-2", []byte(`{}`))
		if err == ErrNoHolder && (w.Body.Len() > 0 || len(w.Header()) > 0) {
			t.Errorf("no holder, yet an answer was written: %v %q", w.Header(), w.Body.String())
		}
		return err
	}
	got := make(chan seen, 4)
	var a, b func()
	for _, tt := range []struct {
		step string
		do   func()
		want error
	}{
		{"none held", func() {}, ErrNoHolder},
		{"two streams, one released twice", func() {
			a, b = rs[0].Hold("tab-2", holder(got)), rs[0].Hold("tab-2", holder(got))
			a()
			a() // counts once
		}, nil},
		{"both released", func() { b() }, ErrNoHolder},
		{"held again", func() { t.Cleanup(rs[0].Hold("tab-2", holder(got))) }, nil},
	} {
		tt.do()
		if err := forward(1); err != tt.want {
			t.Errorf("%s: %v, want %v", tt.step, err, tt.want)
		}
		if tt.want == nil {
			if s := <-got; !s.forwarded {
				t.Errorf("%s: served unmarked", tt.step)
			}
		}
	}
	// The third replica's bus never opens: it waits a moment, then says so.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	if err := rs[2].Forward(w, httptest.NewRequest("POST", "/lab/cmd/play", nil).WithContext(ctx), "tab-2", nil); err != ErrNoHolder || buses[2].Ready() {
		t.Errorf("forward on a bus not open: %v, want ErrNoHolder", err)
	}
}

// A stream held while its replica's bus was not open yet is subscribed
// once it opens: a command forwarded then reaches it.
func TestHoldBeforeTheBus(t *testing.T) {
	rs, buses := replicas(t, false, true)
	got := make(chan seen, 1)
	defer rs[0].Hold("tab-3", holder(got))()
	close(buses[0].ready)
	subscribed := func() bool {
		rs[0].mu.Lock()
		defer rs[0].mu.Unlock()
		return rs[0].held[subject("tab-3")].sub != nil && !rs[0].waiting
	}
	deadline := time.Now().Add(10 * time.Second)
	for !subscribed() {
		if time.Now().After(deadline) {
			t.Fatal("not subscribed within 10 s of the bus opening")
		}
		time.Sleep(5 * time.Millisecond)
	}
	w := httptest.NewRecorder()
	if err := rs[1].Forward(w, httptest.NewRequest("POST", "/lab/cmd/step", nil), "tab-3", []byte(`{}`)); err != nil || w.Code != http.StatusConflict {
		t.Fatalf("forward after the bus opened: %v, status %d", err, w.Code)
	}
	if s := <-got; !s.forwarded || s.uri != "/lab/cmd/step" {
		t.Errorf("the holder served %+v", s)
	}
}

// A tab's subject never carries its id (the tab's only credential), and
// two tabs have two.
func TestSubject(t *testing.T) {
	a, b := subject("0123456789abcdef-secret"), subject("0123456789abcdef-secreu")
	if a == b || strings.Contains(a, "secret") || !strings.HasPrefix(a, "outlierlab.tab.") || len(a) != len("outlierlab.tab.")+32 {
		t.Errorf("subjects %q, %q", a, b)
	}
}
