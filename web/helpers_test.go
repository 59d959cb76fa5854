package web

import (
	"io"
	"log/slog"
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
