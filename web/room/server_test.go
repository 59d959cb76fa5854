package room

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"outlierlab/plans"
	"outlierlab/web/asset"
	"outlierlab/web/guard"
	"outlierlab/web/internal/browsertest"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/tabrelay"
)

// Options are a test server's: the server's own (web.Options) that the
// rooms and the lab under them take.
type Options struct {
	Log     *slog.Logger
	Bus     *roombus.Bus
	Rooms   Limits
	Now     func() time.Time
	Lessons fs.FS
	Plans   fs.FS
}

// testServer is the rooms on the lab, on a router as the web server mounts
// them: the guards every request passes, the lab's routes, the rooms', the
// static files and the not-found page (the tools, /metrics and /healthz are
// web's, tested there).
type testServer struct {
	*Workshops
	assets *asset.Assets
}

// newServer is a test server over o, with the repository's static files and a
// quiet logger unless o names its own.
func newServer(o Options) (*testServer, error) {
	a, err := asset.LoadAssets(os.DirFS("..")) // web/static
	if err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l, err := lab.NewLab(lab.LabOptions{Assets: a, Now: o.Now, Log: o.Log, Lessons: o.Lessons})
	if err != nil {
		return nil, err
	}
	if o.Plans == nil && o.Lessons == nil {
		o.Plans = plans.FS
	}
	if o.Bus != nil { // as web.New wires it
		l.SetRelay(tabrelay.New(o.Bus, o.Log))
	}
	ws, err := New(l, o.Plans, o.Bus, o.Rooms, o.Log)
	if err != nil {
		return nil, err
	}
	return &testServer{Workshops: ws, assets: a}, nil
}

// Handler is the test server's router.
func (s *testServer) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer, guard.SecurityHeaders, guard.SameOrigin().Handler, guard.LimitBodies(s.lab.MaxBody, nil), middleware.GetHead)
	s.lab.Routes(r)
	s.Workshops.Routes(r)
	r.Handle("/static/*", s.assets)
	r.NotFound(s.lab.Pages.NotFoundHandler)
	s.lab.SetForwardHandler(r)
	return r
}

// Shutdown ends the lab's streams (webtest.Servable).
func (s *testServer) Shutdown() { s.lab.Shutdown() }

// newTestServer is a test server without a bus (no rooms: the plans'
// handouts and pages).
func newTestServer(t testing.TB) *testServer {
	t.Helper()
	s, err := newServer(Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// roomLab is the rooms' test server as a replica (roomtest.Replica): its
// own room bus and its log in a buffer.
type roomLab = roomtest.Replica[*testServer]

func startRoomLab(t testing.TB, bo roombus.BusOptions, lim Limits) *roomLab {
	t.Helper()
	return roomtest.StartReplica(t, bo, func(log *slog.Logger, bus *roombus.Bus) (*testServer, error) {
		return newServer(Options{Log: log, Bus: bus, Rooms: lim})
	})
}

// att is the identity named name in room code as the server would issue
// it (the same on every replica), without a page load: for tests of many
// attendees behind one address. It returns the cookie's value.
func att(t testing.TB, l *roomLab, code, name string) string {
	t.Helper()
	rec, _, err := l.S.rooms.lookup(t.Context(), code)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:record.AttendeeIDBytes])
	return id + "." + rec.AttendeeTag(code, id)
}

// browser is a headless Chromium on a test server (browsertest.Browser).
type browser = browsertest.Browser
