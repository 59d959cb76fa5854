package web

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"outlierlab/web/httperr"
	"outlierlab/web/internal/webtest"
)

// A server started without the room bus answers every route of the rooms
// alike: 404, saying it runs no workshops (issue 37: it was 404, 503, 409
// or a 404 page depending on the route).
func TestNoWorkshopsOneAnswer(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	for _, c := range []struct{ method, target, body string }{
		{"POST", "/rooms", ""},
		{"POST", "/r/K7QX2M/spotlight", `{}`},
		{"POST", "/r/K7QX2M/explore", `{}`},
		{"GET", "/r/K7QX2M", ""},
		{"GET", "/r/K7QX2M/present", ""},
		{"POST", "/lab/cmd/play", `{"tab":"` + webtest.Tab + `","room":"K7QX2M"}`},
	} {
		res := webtest.Do(t, h, c.method, c.target, c.body)
		body := webtest.Body(t, res)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "runs no workshops") {
			t.Errorf("%s %s: %d %q, want 404 saying the server runs no workshops", c.method, c.target, res.StatusCode, webtest.Head(body, 200))
		}
	}
}

// An internal error reaches the request's log line, with the request, at
// level ERROR; the user is shown the fixed sentence, never its text.
func TestInternalErrorLoggedNotShown(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var logged bytes.Buffer
	s := newTestServer(t)
	s.lab.Log = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil))
	h := s.observe(compress()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httperr.Write(w, errors.New("dial tcp 10.0.0.7:4222: connection refused"), httperr.KindInternal)
	})))
	res := webtest.Do(t, h, "GET", "/broken?x=1", "")
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError || string(body) != httperr.InternalText+"\n" {
		t.Errorf("the user got %d %q, want 500 %q", res.StatusCode, body, httperr.InternalText)
	}
	mu.Lock()
	line := logged.String()
	mu.Unlock()
	for _, want := range []string{"level=ERROR", "path=/broken", "status=500", `outcome="internal error"`, `err="dial tcp 10.0.0.7:4222: connection refused"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the log line lacks %s: %s", want, line)
		}
	}
}
