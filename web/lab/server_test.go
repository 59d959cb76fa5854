package lab

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"outlierlab/web/asset"
	"outlierlab/web/internal/webtest"
)

// testServer is the lab alone, on a router as the web server mounts it:
// the lab's routes and its not-found page (the server's own middleware,
// the rooms and the tools are web's, tested there).
type testServer struct{ *Lab }

// Handler is the lab's routes.
func (s *testServer) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.GetHead)
	s.Routes(r)
	r.NotFound(s.Pages.NotFoundHandler)
	return r
}

// newServer is a lab over o, with the repository's static files and a
// quiet logger unless o names its own.
func newServer(o LabOptions) (*testServer, error) {
	if o.Assets == nil {
		a, err := asset.LoadAssets(os.DirFS("..")) // web/static
		if err != nil {
			return nil, err
		}
		o.Assets = a
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l, err := NewLab(o)
	if err != nil {
		return nil, err
	}
	return &testServer{l}, nil
}

// newTestServer is a lab on the course.
func newTestServer(t testing.TB) *testServer {
	t.Helper()
	s, err := newServer(LabOptions{})
	if err != nil {
		t.Fatalf("NewLab: %v", err)
	}
	return s
}

// startTestServer is a lab on a test HTTP server, both closed when the
// test ends.
func startTestServer(t testing.TB) (*testServer, *httptest.Server) {
	t.Helper()
	s := newTestServer(t)
	ts := webtest.Serve(t, s)
	return s, ts
}

// frozenTab stops s's clock (the returned pointer moves it) and returns a
// poster of the test tab's commands, each a 204 or the test fails: its
// body is the tab's signals, sig (`"preset":"search-cache"`), then rest.
func frozenTab(t *testing.T, s *testServer, sig string) (post func(verb, rest string), now *time.Time) {
	t.Helper()
	at := s.Now()
	s.Now = func() time.Time { return at }
	h := s.Handler()
	return func(verb, rest string) {
		t.Helper()
		res := webtest.Do(t, h, "POST", "/lab/cmd/"+verb, `{"tab":"`+webtest.Tab+`",`+sig+rest+`}`)
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("%s: status %d: %s", verb, res.StatusCode, webtest.Body(t, res))
		}
	}, &at
}
