package web

import (
	"context"
	"fmt"
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
		return roomCall(t, "GET", ts.URL+path, "", "", "", "")
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
	if st, body := roomCall(t, "POST", ts.URL+"/rooms", `{"preset":"search-cache"}`, "", "", ""); st != 503 || !strings.Contains(body, "not ready") {
		t.Errorf("POST /rooms before the bus: %d %s", st, body)
	}

	// A room page's stream waits for the bus (an error status would stop
	// Datastar for good): open, no event yet.
	waiting := webtest.OpenStream(t, ts.URL, roomSig(roomtest.TabFollower, "K7QX2M", "follow", ""))

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
