package web

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// NewLogger is the lab's logger: format "json" writes one JSON object a
// line (for a log collector), anything else key=value text. Either way a
// duration is written as a number with its unit in its key: "duration"
// becomes duration_ms, milliseconds as a number with three decimals
// (slog's own JSON would write nanoseconds with no unit, its text "1.5s").
func NewLogger(w io.Writer, format string) *slog.Logger {
	o := &slog.HandlerOptions{ReplaceAttr: durationMillis}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// durationMillis writes a time.Duration attribute as KEY_ms, a number.
func durationMillis(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return Millis(a.Key+"_ms", a.Value.Duration())
	}
	return a
}

// Millis is d as an attribute in milliseconds, to the microsecond.
func Millis(key string, d time.Duration) slog.Attr {
	return slog.Float64(key, math.Round(float64(d)/1e3)/1e3)
}

// observe writes one log line per request (method, path, the client's
// address as the per-address limits count it, status, duration_ms, bytes
// sent, outcome) and counts commands by verb and status. It is
// the outermost middleware, so the line is written even when the handler
// panics (a recovered 500, or the abort that ends streams at shutdown).
// The status is the one the handler sent; the outcome says whether the
// visitor got the whole answer: "complete", "internal error" (the
// answer was httperr's fixed sentence; the error is logged, at level
// ERROR), "write failed" (a write to
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
		s.inflight.Store(r, start)
		ew := &errWriter{ResponseWriter: w}
		if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 {
			ew.deadline = start.Add(srv.WriteTimeout)
		}
		ww := middleware.NewWrapResponseWriter(ew, r.ProtoMajor)
		defer func() {
			s.inflight.Delete(r)
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
				slog.String("client", s.lab.PeerAddr(r)),
				slog.Int("status", status),
				Millis("duration_ms", time.Since(start)),
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
			case ew.internal != nil:
				// httperr.Write answered a fixed sentence; the why is here.
				level = slog.LevelError
				attrs = append(attrs, slog.String("outcome", "internal error"), slog.String("err", ew.internal.Error()))
			case ew.err != nil:
				level = slog.LevelWarn
				attrs = append(attrs, slog.String("outcome", "write failed"), slog.String("err", ew.err.Error()))
			case r.Context().Err() != nil:
				attrs = append(attrs, slog.String("outcome", "client gone"))
			default:
				attrs = append(attrs, slog.String("outcome", "complete"))
			}
			s.lab.Log.LogAttrs(r.Context(), level, "request", attrs...)
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
	internal error     // what httperr.Write kept from the user (RecordInternal)
}

// RecordInternal keeps an internal error for the request's log line
// (httperr.Recorder).
func (e *errWriter) RecordInternal(err error) { e.internal = err }

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

// LogInFlight writes a line at WARN, msg, for every request being answered
// now, oldest first (method, path, client, how long it has run): at
// shutdown, the requests the grace period did not let finish. It answers
// how many.
func (s *Server) LogInFlight(msg string) int {
	type req struct {
		r     *http.Request
		start time.Time
	}
	var all []req
	s.inflight.Range(func(k, v any) bool {
		all = append(all, req{k.(*http.Request), v.(time.Time)})
		return true
	})
	slices.SortFunc(all, func(a, b req) int { return cmp.Compare(a.start.UnixNano(), b.start.UnixNano()) })
	for _, q := range all {
		s.lab.Log.LogAttrs(q.r.Context(), slog.LevelWarn, msg,
			slog.String("method", q.r.Method),
			slog.String("path", q.r.URL.Path),
			slog.String("client", s.lab.PeerAddr(q.r)),
			Millis("duration_ms", time.Since(q.start)))
	}
	return len(all)
}
