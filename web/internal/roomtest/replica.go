package roomtest

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/roombus"
)

// A Replica is a test server S with its own room bus (embedded,
// in-process unless the bus's options say otherwise) and its log in a
// buffer. web/room's tests run the rooms on the lab (their own test
// server), web's the whole server beside the tools, /metrics and
// /healthz: one helper over both, so the two stay the same replica.
type Replica[S webtest.Servable] struct {
	S    S
	TS   *httptest.Server
	Bus  *roombus.Bus
	Logs *webtest.SyncBuffer
}

// StartReplica starts a bus on bo, then the server newServer makes on it
// (logging into the replica's buffer), served over HTTP until the test
// ends.
func StartReplica[S webtest.Servable](t testing.TB, bo roombus.BusOptions, newServer func(log *slog.Logger, bus *roombus.Bus) (S, error)) *Replica[S] {
	t.Helper()
	bus, log, logs := StartBus(t, bo)
	s, err := newServer(log, bus)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Last registered runs first: streams end, the server closes, then
	// the bus.
	ts := webtest.Serve(t, s)
	return &Replica[S]{S: s, TS: ts, Bus: bus, Logs: logs}
}

// CreateRoom posts /rooms for JSON with body and returns the code and key.
func (l *Replica[S]) CreateRoom(t testing.TB, body string) (code, key string) {
	t.Helper()
	return CreateRoom(t, l.TS.URL, body)
}
