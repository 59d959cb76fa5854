package web

import (
	"log/slog"
	"testing"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/room"
	"outlierlab/web/roombus"
)

// roomLab is the whole server as a replica (roomtest.Replica: its own room
// bus and its log in a buffer): the rooms as they are deployed, beside the
// tools, /metrics and /healthz (the rooms' own tests are web/room's).
type roomLab = roomtest.Replica[*Server]

func startRoomLab(t testing.TB, bo roombus.BusOptions, lim room.Limits) *roomLab {
	t.Helper()
	return roomtest.StartReplica(t, bo, func(log *slog.Logger, bus *roombus.Bus) (*Server, error) {
		return New(Options{Log: log, Bus: bus, Rooms: lim})
	})
}
