// Package roomtest is what the tests of the rooms, in web/room and in web,
// do to a replica over HTTP: create a room, send a tab's commands and the
// rooms' calls, open a tab's stream and read it as events. It knows the
// rooms only as a browser does (their routes, signals and cookies, named
// as web/room/record names them).
package roomtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
)

// Tabs of the tests: an instructor's, two followers', a projector's, all
// of the tests' browser (webtest.Browser, whose cookie every call here
// sends unless it is given another).
var (
	TabPresenter = webtest.TabOf("presenter-tab-0000000001")
	TabFollower  = webtest.TabOf("follower-tab-00000000001")
	TabFollower2 = webtest.TabOf("follower-tab-00000000002")
	TabProjector = webtest.TabOf("projector-tab-0000000001")
)

// StartBus is a room bus on bo, logging into the returned buffer, closed
// when the test ends.
func StartBus(t testing.TB, bo roombus.BusOptions) (*roombus.Bus, *slog.Logger, *webtest.SyncBuffer) {
	t.Helper()
	logs := &webtest.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	bo.Log = log
	bus, err := roombus.StartBus(bo)
	if err != nil {
		t.Fatalf("StartBus: %v", err)
	}
	t.Cleanup(bus.Close)
	return bus, log, logs
}

// CreateRoom posts /rooms at base for JSON with body and returns the code
// and key.
func CreateRoom(t testing.TB, base, body string) (code, key string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/rooms", strings.NewReader(body))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]string
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /rooms: status %d, %v", res.StatusCode, err)
	}
	return out["code"], out["key"]
}

// Sig is a room tab's signals: the lab's (rest, without braces) and
// the room's.
func Sig(tab, code, role, rest string) string {
	s := fmt.Sprintf(`{"tab":%q,"room":%q,"roomRole":%q`, tab, code, role)
	if rest != "" {
		s += "," + rest
	}
	return s + "}"
}

// Post sends a command with signals (and the key cookie, if any) and
// returns the status and body.
func Post(t testing.TB, base, verb, signals, code, key string) (int, string) {
	t.Helper()
	return Call(t, "POST", base+"/lab/cmd/"+verb, signals, code, key, "")
}

// WaitEach waits until every part has been in a signals patch, in one
// patch or in several.
func WaitEach(t testing.TB, events <-chan webtest.Event, what string, parts ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, p := range parts {
		left[p] = true
	}
	webtest.WaitFor(t, events, what, func(ev webtest.Event) bool {
		for p := range left {
			if SignalPatch(p)(ev) {
				delete(left, p)
			}
		}
		return len(left) == 0
	})
}

// SignalPatch reports whether ev patches signals containing every part.
func SignalPatch(parts ...string) func(webtest.Event) bool {
	return func(ev webtest.Event) bool {
		if ev.Type != "datastar-patch-signals" {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(ev.Data, p) {
				return false
			}
		}
		return true
	}
}

// ExpectNone reads events for d and fails if one satisfies bad.
func ExpectNone(t testing.TB, events <-chan webtest.Event, d time.Duration, what string, bad func(webtest.Event) bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev, open := <-events:
			if !open {
				return
			}
			if bad(ev) {
				t.Fatalf("%s: %s", what, webtest.Head(ev.Data, 300))
			}
		case <-timeout:
			return
		}
	}
}

// AttendeeCookie is the identity a browser gets from the room's page at
// base (its first visit: no cookie sent).
func AttendeeCookie(t testing.TB, base, code string) *http.Cookie {
	t.Helper()
	res, err := http.Get(base + "/r/" + code)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == record.AttendeeCookiePrefix+code {
			return c
		}
	}
	t.Fatalf("the room's page (%d) gave no %s cookie", res.StatusCode, record.AttendeeCookiePrefix+code)
	return nil
}

// OpenRoomStream opens an attendee's stream (signals name the room, a
// follower or the projector) with the identity the room's page gives, as
// a browser does; id is the attendee's.
func OpenRoomStream(t *testing.T, base, code, signals string) <-chan webtest.Event {
	t.Helper()
	ev, _ := OpenRoomStreamCtx(t, t.Context(), base, code, signals)
	return ev
}

func OpenRoomStreamCtx(t *testing.T, ctx context.Context, base, code, signals string) (events <-chan webtest.Event, id string) {
	t.Helper()
	c := AttendeeCookie(t, base, code)
	id, _, _ = strings.Cut(c.Value, ".")
	return OpenStreamCtx(t, ctx, base, signals, c), id
}

// Charted reports whether ev is a redraw's last event, the charts.
func Charted(ev webtest.Event) bool { return strings.Contains(ev.Data, "applyCharts(") }

// Call sends method path with body (JSON), the instructor key cookie
// if key is set, and the attendee identity cookie if att (its value, from
// the room package's roomLab.att) is set.
func Call(t testing.TB, method, url, body, code, key, att string) (int, string) {
	t.Helper()
	st, _, b, _ := CallTimed(t, method, url, body, code, key, att)
	return st, b
}

// CallTimed is Call with the answer's headers and how long it took.
func CallTimed(t testing.TB, method, url, body, code, key, att string) (int, http.Header, string, time.Duration) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(webtest.BrowserCookie())
	if key != "" {
		req.AddCookie(&http.Cookie{Name: "olab_key_" + code, Value: key})
	}
	if att != "" {
		req.AddCookie(&http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: att})
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b), time.Since(start)
}

func WaitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if !webtest.Eventually(5*time.Second, ok) {
		t.Fatalf("%s: not within 5 s", what)
	}
}

// OpenStreamCtx opens a tab's stream that ends with ctx; with key, the
// instructor's key cookie goes with it.
func OpenStreamCtx(t *testing.T, ctx context.Context, base, signals string, cookies ...*http.Cookie) <-chan webtest.Event {
	t.Helper()
	return OpenSSE(t, ctx, base, "/lab/stream", signals, cookies...)
}

// OpenSSE opens the event stream at path (the lab's, a recording's
// player's) with signals, as a page does, until ctx ends; a status but 200
// fails the test.
func OpenSSE(t *testing.T, ctx context.Context, base, path, signals string, cookies ...*http.Cookie) <-chan webtest.Event {
	t.Helper()
	res, err := http.DefaultClient.Do(webtest.StreamRequest(ctx, base, path, signals, cookies...))
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("stream %s: status %d %s", path, res.StatusCode, webtest.Head(string(b), 300))
	}
	events := make(chan webtest.Event, 4096)
	go webtest.ReadEvents(res.Body, events)
	return events
}

func OpenStreamKey(t *testing.T, base, signals, code, key string) <-chan webtest.Event {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return OpenStreamCtx(t, ctx, base, signals, &http.Cookie{Name: "olab_key_" + code, Value: key})
}

// PatchOf is an event that patches the element with attribute id (as
// written, `id="room-board"`) and holds every part.
func PatchOf(id string, parts ...string) func(webtest.Event) bool {
	return func(ev webtest.Event) bool {
		if !strings.Contains(ev.Data, id) {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(ev.Data, p) {
				return false
			}
		}
		return true
	}
}
