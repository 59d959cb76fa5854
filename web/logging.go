package web

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// NewLogger is the lab's logger: format "json" writes one JSON object a
// line (for a log collector), anything else key=value text.
func NewLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// observe writes one log line per request (method, path, status,
// duration, bytes, outcome) and counts commands by verb and status. It is
// the outermost middleware, so the line is written even when the handler
// panics (a recovered 500, or the abort that ends streams at shutdown).
// The status is the one the handler sent; the outcome says whether the
// visitor got the whole answer: "complete", "write failed" (a write to
// the connection failed: a write deadline, a reset; the error is logged),
// "client gone" (the request's context ended first) or "aborted" (the
// handler broke the connection: panic(http.ErrAbortHandler)).
//
// The line is written when the handler returns, before net/http sends
// what is left in the connection's buffer: an answer of a few KiB is all
// there, and its writes succeeded. Issue 34: such an answer made past the
// write deadline never left, and the line said "complete". The deadline
// is known here (the server's WriteTimeout from the request's start, or
// the last one a handler set through http.ResponseController): once it
// has passed, nothing more is sent, and the line says "write failed".
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ew := &errWriter{ResponseWriter: w}
		if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 {
			ew.deadline = start.Add(srv.WriteTimeout)
		}
		ww := middleware.NewWrapResponseWriter(ew, r.ProtoMajor)
		defer func() {
			p := recover()
			if p != nil {
				defer panic(p) // net/http ends the connection, quietly for ErrAbortHandler
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK // nothing written: net/http answers 200
			}
			countCommand(r, status)
			countRequest(r, status, time.Since(start))
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Duration("duration", time.Since(start)),
				slog.Int("bytes", ww.BytesWritten()),
			}
			level := slog.LevelInfo
			if ew.err == nil && p == nil && !ew.deadline.IsZero() && time.Now().After(ew.deadline) {
				ew.err = fmt.Errorf("the write deadline passed %v before the answer was sent", time.Since(ew.deadline).Round(time.Millisecond))
			}
			switch {
			case p != nil:
				attrs = append(attrs, slog.String("outcome", "aborted"))
				if p != http.ErrAbortHandler {
					level = slog.LevelError
					attrs = append(attrs, slog.String("panic", fmt.Sprint(p)))
				}
			case ew.err != nil:
				level = slog.LevelWarn
				attrs = append(attrs, slog.String("outcome", "write failed"), slog.String("err", ew.err.Error()))
			case r.Context().Err() != nil:
				attrs = append(attrs, slog.String("outcome", "client gone"))
			default:
				attrs = append(attrs, slog.String("outcome", "complete"))
			}
			s.Log.LogAttrs(r.Context(), level, "request", attrs...)
		}()
		next.ServeHTTP(ww, r)
	})
}

// errWriter keeps the first error a write to the connection returned,
// and the write deadline, for the request's log line. It passes Flush
// and SetWriteDeadline on and unwraps for http.ResponseController.
type errWriter struct {
	http.ResponseWriter
	err      error
	deadline time.Time // zero: none
}

func (e *errWriter) SetWriteDeadline(t time.Time) error {
	err := http.NewResponseController(e.ResponseWriter).SetWriteDeadline(t)
	if err == nil {
		e.deadline = t
	}
	return err
}

func (e *errWriter) Write(b []byte) (int, error) {
	n, err := e.ResponseWriter.Write(b)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

func (e *errWriter) Flush() {
	if err := http.NewResponseController(e.ResponseWriter).Flush(); err != nil && e.err == nil && !errors.Is(err, http.ErrNotSupported) {
		e.err = err
	}
}

func (e *errWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
