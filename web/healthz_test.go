package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/roombus"
)

// Before the bus is open (here: no NATS at the address yet) the lab is
// served, the rooms answer 503, /healthz is live and /healthz?ready is
// not; once NATS is there, the replica opens the bus by itself and serves
// rooms.
func TestBusUpAfterReplica(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	bus, err := roombus.OpenBus(roombus.BusOptions{URL: fmt.Sprintf("nats://127.0.0.1:%d", port)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	s, err := New(Options{Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	ts := webtest.Serve(t, s)
	get := func(path string) (int, string) {
		t.Helper()
		return roomtest.Call(t, "GET", ts.URL+path, "", "", "", "")
	}
	for _, c := range []struct {
		path string
		want int
		text string
	}{
		{"/", 200, ""}, {"/lab", 200, ""}, {"/healthz", 200, "ok"},
		{"/healthz?ready", 503, "the room bus is not ready yet"},
		{"/r/K7QX2M", 503, "the room bus is not ready yet"},
	} {
		if st, body := get(c.path); st != c.want || !strings.Contains(body, c.text) {
			t.Errorf("GET %s before the bus: %d %q, want %d %q", c.path, st, body, c.want, c.text)
		}
	}
	if st, body := roomtest.Call(t, "POST", ts.URL+"/rooms", `{"preset":"search-cache"}`, "", "", ""); st != 503 || !strings.Contains(body, "not ready") {
		t.Errorf("POST /rooms before the bus: %d %s", st, body)
	}

	// A room page's stream waits for the bus (an error status would stop
	// Datastar for good): open, no event yet.
	waiting := webtest.OpenStream(t, ts.URL, roomtest.Sig(roomtest.TabFollower, "K7QX2M", "follow", ""))

	// NATS comes up on that port (one server: the bucket gets one copy).
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ns.Start()
	t.Cleanup(ns.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := bus.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("bus open %v after NATS started", time.Since(start).Round(time.Millisecond))
	if st, body := get("/healthz?ready"); st != 200 {
		t.Errorf("ready: %d %s", st, body)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/rooms", strings.NewReader(`{"preset":"search-cache"}`))
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("POST /rooms once the bus is open: %v %v", err, res)
	}
	res.Body.Close()
	if bus.Replicas != 1 {
		t.Errorf("one server's bucket: %d copies", bus.Replicas)
	}
	// The waiting stream, the bus open, finds its room gone and says so.
	webtest.WaitFor(t, waiting, "the waiting stream's answer", func(ev webtest.Event) bool { return strings.Contains(ev.Data, "K7QX2M</span> has ended") })
}

// Issue 33, item 7: the bus down once open (its NATS stopped) makes the
// replica not ready at once, and the rooms' writes 503 with Retry-After
// (the first after the reconnect grace, the next at once), naming the
// room bus; NATS back (same port and store), the
// replica is ready again and the room takes writes.
func TestReadyFollowsBus(t *testing.T) {
	opts := &server.Options{Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir()}
	ns := webtest.StartNATS(t, opts)
	bus, log, _ := roomtest.StartBus(t, roombus.BusOptions{URL: ns.ClientURL()})
	s, err := New(Options{Bus: bus, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ts := webtest.Serve(t, s)
	code, key := roomtest.CreateRoom(t, ts.URL, `{"preset":"search-cache"}`)
	if st, body := roomtest.Call(t, "GET", ts.URL+"/healthz?ready", "", "", "", ""); st != 200 {
		t.Fatalf("ready with the bus up: %d %s", st, body)
	}
	spotlight := func() (*http.Response, string, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/r/"+code+"/spotlight?host=h5", nil)
		req.AddCookie(&http.Cookie{Name: "olab_key_" + code, Value: key})
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b), time.Since(start)
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	roomtest.WaitUntil(t, "the replica's connection lost", func() bool { return !bus.Conn().IsConnected() })
	if st, body := roomtest.Call(t, "GET", ts.URL+"/healthz?ready", "", "", "", ""); st != 503 || !strings.Contains(body, "room bus is down") {
		t.Errorf("ready with NATS stopped: %d %q, want 503 naming the room bus", st, body)
	}
	if st, _ := roomtest.Call(t, "GET", ts.URL+"/healthz", "", "", "", ""); st != 200 {
		t.Errorf("live with NATS stopped: %d", st)
	}
	// The first write waits out the reconnect grace (a NATS node of a
	// cluster gone, the client is on another within it), the next is
	// refused at once: a bus down costs an attendee the grace once, never
	// a hang. The margins are for a loaded machine (CI at load 19 took
	// 2.0 s for the first).
	for i, most := range []time.Duration{roombus.ReconnectGrace + 2*time.Second, time.Second} {
		if res, body, took := spotlight(); res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "room bus") || took > most {
			t.Errorf("room write %d with NATS stopped: %d (Retry-After %q) %q after %v, want 503 with Retry-After, naming the room bus, within %v",
				i+1, res.StatusCode, res.Header.Get("Retry-After"), strings.TrimSpace(body), took.Round(time.Millisecond), most)
		}
	}

	back := time.Now()
	webtest.StartNATS(t, opts)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		st, body := roomtest.Call(t, "GET", ts.URL+"/healthz?ready", "", "", "", "")
		if st == 200 {
			break
		}
		if time.Since(back) > 30*time.Second {
			t.Fatalf("not ready 30 s after NATS came back: %d %s", st, body)
		}
		<-tick.C
	}
	t.Logf("ready %v after NATS came back", time.Since(back).Round(time.Millisecond))
	if res, body, _ := spotlight(); res.StatusCode != 200 {
		t.Errorf("a room write once ready again: %d %s", res.StatusCode, body)
	}
}
