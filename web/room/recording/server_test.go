package recording

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/view"
)

// The recordings' tests write a room's timeline themselves, with no room:
// testRooms finds a room for every code that is one. Finding a room
// (codes guessed, rooms gone, the page's 404) is web/room's, and so are
// the tests of a recording of a live workshop (web/room/replay_test.go).
type testRooms struct{}

func (testRooms) Page(w http.ResponseWriter, r *http.Request) (string, bool) { return codeOf(w, r) }
func (testRooms) API(w http.ResponseWriter, r *http.Request) (string, bool)  { return codeOf(w, r) }

// Board: these rooms run no plan, so no challenge scene.
func (testRooms) Board(string, []record.TimelineEntry) *view.RoomChallenge { return nil }

func codeOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	code, ok := record.NormalCode(chi.URLParam(r, "code"))
	if !ok {
		http.NotFound(w, r)
	}
	return code, ok
}

// newRecordings are the recordings on a lab of the repository's lessons
// and static files, with the clock now (nil: the wall's) and the timeline
// on bus (nil: none).
func newRecordings(t *testing.T, now func() time.Time, bus *roombus.Bus) *Recordings {
	t.Helper()
	l := roomtest.Lab(t, lab.LabOptions{Now: now})
	var tl *Timeline
	if bus != nil {
		tl = NewTimeline(bus, l.Now, l.Log)
	}
	return New(l, testRooms{}, tl)
}

// clockRecordings are recordings whose clock reads *now (the test moves
// it), with no timeline: the tests give the players their entries.
func clockRecordings(t *testing.T, now *time.Time) *Recordings {
	return newRecordings(t, func() time.Time { return *now }, nil)
}

// serve is s on a test server: the lab's routes and the recording's.
func serve(t *testing.T, s *Recordings) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	s.lab.Routes(r)
	s.Routes(r)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	return ts
}

// startTimeline is recordings over a bus of their own.
func startTimeline(t *testing.T) *Recordings {
	t.Helper()
	bus, _, _ := roomtest.StartBus(t, roombus.BusOptions{})
	return newRecordings(t, nil, bus)
}
