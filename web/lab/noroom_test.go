package lab

import (
	"context"
	"net/http"
	"testing"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/internal/webtest"
)

// roomsNotCalled is a lab's Rooms that fails the test when a tab's
// command or stream reaches it.
type roomsNotCalled struct{ t *testing.T }

func (f roomsNotCalled) Command(*http.Request, *Session, string, []byte, func() error) error {
	f.t.Error("a command of a tab in no room went through the rooms")
	return nil
}
func (f roomsNotCalled) Rejoin(*Session) error { return nil }
func (f roomsNotCalled) Stream(*http.Request, *Session) (Follow, error) {
	f.t.Error("a stream of a tab in no room went through the rooms")
	return nil, nil
}
func (roomsNotCalled) WaitReady(context.Context) error                              { return nil }
func (roomsNotCalled) Gone(*datastar.ServerSentEventGenerator, *http.Request) error { return nil }
func (roomsNotCalled) StartStrip(bool) templ.Component                              { return nil }

// A tab in no room walks no room code (issue 37): its commands and its
// stream are the lab's alone, though the lab has rooms.
func TestTabInNoRoomWalksNoRoomCode(t *testing.T) {
	t.Parallel()
	s, ts := startTestServer(t)
	s.SetRooms(roomsNotCalled{t})
	events := webtest.OpenStream(t, ts.URL, `{"tab":"`+webtest.Tab+`","preset":"search-cache"}`)
	webtest.WaitFor(t, events, "the first redraw", func(e webtest.Event) bool { return e.Type == "datastar-patch-elements" })
	webtest.PostCommand(t, ts.URL, "play", "")
	webtest.PostCommand(t, ts.URL, "pause", "")
}
