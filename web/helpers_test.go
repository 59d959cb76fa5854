package web

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"outlierlab/web/internal/webtest"
	"testing"
)

// newTestServer is a Server with a quiet logger.
func newTestServer(t testing.TB) *Server {
	t.Helper()
	s, err := New(Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// startTestServer is a lab on a test HTTP server, both closed when the test
// ends.
func startTestServer(t testing.TB) (*Server, *httptest.Server) {
	t.Helper()
	lab := newTestServer(t)
	ts := webtest.Serve(t, lab)
	return lab, ts
}
