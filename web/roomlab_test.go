package web

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"outlierlab/web/internal/browsertest"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// roomLab is the whole server with its own room bus (embedded, in-process
// unless the options say otherwise) and its log in a buffer: the rooms as
// they are deployed, beside the tools, /metrics and /healthz (the rooms'
// own tests are web/room's).
type roomLab struct {
	s    *Server
	ts   *httptest.Server
	bus  *roombus.Bus
	logs *webtest.SyncBuffer
}

func startRoomLab(t testing.TB, bo roombus.BusOptions, lim room.Limits) *roomLab {
	t.Helper()
	bus, log, logs := roomtest.StartBus(t, bo)
	s, err := New(Options{Log: log, Bus: bus, Rooms: lim})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Last registered runs first: streams end, the server closes, then
	// the bus.
	ts := webtest.Serve(t, s)
	return &roomLab{s: s, ts: ts, bus: bus, logs: logs}
}

// createRoom posts /rooms for JSON with body and returns the code and key.
func (l *roomLab) createRoom(t testing.TB, body string) (code, key string) {
	t.Helper()
	return roomtest.CreateRoom(t, l.ts.URL, body)
}

// The tests' helpers over HTTP (roomtest), by the names the tests use.
var (
	roomSig        = roomtest.Sig
	roomPost       = roomtest.Post
	roomCall       = roomtest.Call
	charted        = roomtest.Charted
	openRoomStream = roomtest.OpenRoomStream
	waitUntil      = roomtest.WaitUntil
)

const raceEnabled = webtest.RaceEnabled

// roomLaptops are n laptops on base (browsertest.Laptops).
func roomLaptops(t *testing.T, base string, n int) []*browser { return browsertest.Laptops(t, base, n) }

// roomBrowser is a new browser context (its own cookies) in a running
// Chromium, recording requests to other hosts and console errors, for 90 s.
func roomBrowser(t *testing.T, bctx context.Context, base string) *browser {
	return browsertest.Tab(t, bctx, base, 90*time.Second)
}

// tabFor is roomBrowser for a test that needs its tab for longer.
func tabFor(t *testing.T, bctx context.Context, base string, limit time.Duration) *browser {
	return browsertest.Tab(t, bctx, base, limit)
}

// shot saves a screenshot where people can look at it after the run.
func shot(t *testing.T, b *browser, name string) { browsertest.Shot(t, b, name) }
