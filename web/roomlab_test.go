package web

import (
	"net/http/httptest"
	"testing"

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
