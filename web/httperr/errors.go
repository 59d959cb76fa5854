// Package httperr is what a request did wrong and how it is answered: an
// error's kind (Kind, given where the error is made) and the one table
// from kinds to HTTP statuses; a field-named bad value (FieldError) and
// the one parser of numbers from outside (Number); the plain-text answer
// naming each field and what it allows (Write, Text). Every handler of
// the lab, its rooms and its what-if pages answers through it, so an error
// text is written once.
package httperr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"outlierlab/engine/envoyconf"
)

// Kind is what is wrong with a request, and so how it is answered:
// Status is the one table from kinds to HTTP statuses. An error gets
// its kind where it is made (WithKind), or from what it is (KindOf).
type Kind uint8

const (
	// KindBadValue: a value out of range or of the wrong type, named with
	// its field and what is allowed ("max_ejection_percent: 101 is out of
	// range (allowed 0–100 %)").
	KindBadValue Kind = iota
	// KindMalformed: a request the route cannot read (not JSON, not a tab
	// id), or an address that is not a working lab link.
	KindMalformed
	// KindNotFound: an unknown preset, lesson, step or command.
	KindNotFound
	// KindConflict: a command this page does not take (a preset on a
	// lesson page).
	KindConflict
	// KindTooLarge: a body over the server's limit.
	KindTooLarge
	// KindURITooLong: an address over the lab's limit.
	KindURITooLong
	// KindInternal: no request could cause it (a preset that fails with
	// its own settings).
	KindInternal
	// KindForbidden: a room's instructor command without the room's key.
	KindForbidden
	// KindFull: a room limit of this server is reached.
	KindFull
	// KindTooMany: a client address's limit is reached (too many attendee
	// streams of a room, too many guessed room codes).
	KindTooMany
	// KindUnavailable: what the request needs is down for now (the room
	// bus: NATS or its JetStream not answering); answered with
	// Retry-After (RetryAfter).
	KindUnavailable
	// KindOverBudget: work past the heavy-work budget (web/budget): a run
	// heavier than one request may make, a sweep of too many runs. The
	// request is well formed and its values in range, so 422 as a bad
	// value, and its text names the setting to change and a value that
	// fits.
	KindOverBudget
	// KindMethod: a method the path does not take (the answer's Allow
	// header names those it does).
	KindMethod
)

var Status = [...]int{
	KindBadValue:   http.StatusUnprocessableEntity,
	KindMalformed:  http.StatusBadRequest,
	KindNotFound:   http.StatusNotFound,
	KindConflict:   http.StatusConflict,
	KindTooLarge:   http.StatusRequestEntityTooLarge,
	KindURITooLong: http.StatusRequestURITooLong,
	KindInternal:   http.StatusInternalServerError,
	KindForbidden:  http.StatusForbidden,
	KindFull:       http.StatusServiceUnavailable,
	KindTooMany:    http.StatusTooManyRequests,
	// 503 as KindFull, but the server is not full: it cannot reach what
	// it needs, and says when to ask again.
	KindUnavailable: http.StatusServiceUnavailable,
	KindOverBudget:  http.StatusUnprocessableEntity,
	KindMethod:      http.StatusMethodNotAllowed,
}

// RetryAfter is the Retry-After, in seconds, that Write sends with an
// error of a kind (none for 0): a room bus that is down reconnects every
// second, and an instructor's page that asks again in two finds it back
// as soon as it is.
var RetryAfter = [...]int{
	KindUnavailable: 2,
}

// kindError is an error with its kind; its text is the error's own.
type kindError struct {
	kind Kind
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// WithKind gives err a kind.
func WithKind(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: k, err: err}
}

// KindOf is err's kind: the one withKind gave it, else what the error is
// (an unknown preset, a query over the limit, a field-named bad value),
// else unknown: the caller says whose fault an error of no known kind is
// where it stands (a run of a request's inputs: the request's; a preset's
// own run: the server's).
func KindOf(err error, unknown Kind) Kind {
	var ke *kindError
	var ie *FieldError
	var fe *envoyconf.FieldError
	var me *http.MaxBytesError
	switch {
	case errors.As(err, &me):
		// Before the kind a handler gave a body it could not read: a body
		// cut at its limit (guard.LimitBodies) is too large, not malformed.
		return KindTooLarge
	case errors.As(err, &ke):
		return ke.kind
	case errors.As(err, &ie), errors.As(err, &fe):
		return KindBadValue
	}
	return unknown
}

// Write answers a request that failed with err in plain text: the
// status of its kind (unknown for an error of no known kind, see KindOf)
// and one line per problem, each naming the field and what is allowed.
// An internal error's text is for the operator, not the user: it goes to
// the request's log line (Recorder) and the answer is InternalText. A
// Retry-After set before (a queue's own wait) is kept.
func Write(w http.ResponseWriter, err error, unknown Kind) {
	k := KindOf(err, unknown)
	if int(k) < len(RetryAfter) && RetryAfter[k] > 0 && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter[k]))
	}
	plain(w, Status[k], Shown(w, err, unknown))
}

// Shown is the text a user is shown of err, an error of the request
// answered on w: its own (Text), or for an internal one InternalText,
// its own text given to the request's log (Recorder). A page that has
// sent its status already (a streamed work page) shows it in the page.
func Shown(w http.ResponseWriter, err error, unknown Kind) string {
	if KindOf(err, unknown) == KindInternal {
		record(w, err)
		return InternalText
	}
	return Text(err)
}

// InternalText is the whole answer to a request that failed through no
// fault of its own: what went wrong is in the server's log, with the
// request, never in the answer (it may name the server's insides).
const InternalText = "something went wrong inside the server (it is logged with this request); try again, and tell the lab's operator if it keeps happening"

// A Recorder keeps an internal error for the request's log line: the
// server's request log (web's observe) is one. Write finds it among the
// writers that wrap the response, through their Unwrap, as
// http.ResponseController finds a Flusher.
type Recorder interface{ RecordInternal(err error) }

func record(w http.ResponseWriter, err error) {
	for w != nil {
		if r, ok := w.(Recorder); ok {
			r.RecordInternal(err)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// plain answers with plain text: msg and a newline.
func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// FieldError is a bad value from a request, named by its field. Its text is
// what the 4xx body says: "max_ejection_percent: 101 is out of range
// (allowed 0–100 %)".
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Text is the body of a 4xx answer: one line per field error, each
// naming the field and, where there is one, the allowed range.
func Text(err error) string {
	var lines []string
	var collect func(error)
	collect = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				collect(e)
			}
			return
		}
		if me, ok := errors.AsType[*http.MaxBytesError](err); ok {
			// One text for a body cut at its limit, wherever it was read.
			lines = append(lines, BodyTooLarge(me.Limit).Error())
			return
		}
		if fes := envoyconf.FieldErrors(err); len(fes) > 0 {
			for _, fe := range fes {
				lines = append(lines, fe.Error())
			}
			return
		}
		lines = append(lines, err.Error())
	}
	collect(err)
	return strings.Join(lines, "\n")
}

// MessageNumber writes a number for an error message: as the lab writes it when
// it is short, else in exponent form cut to a readable length, so that a
// 309-digit value is not echoed back in full.
func MessageNumber(v float64) string {
	s := FormatNumber(v)
	if len(s) <= 24 {
		return s
	}
	return Truncate(strconv.FormatFloat(v, 'g', 6, 64), 24)
}

func ClipJSON(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

func FormatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// BodyTooLarge is the one text for a body over its route's limit.
func BodyTooLarge(limit int64) error {
	return WithKind(KindTooLarge, fmt.Errorf("body: larger than this route takes (allowed at most %d bytes)", limit))
}

// Errorf is fmt.Errorf's error, of kind k.
func Errorf(k Kind, format string, args ...any) error {
	return WithKind(k, fmt.Errorf(format, args...))
}

// ErrQueryTooLong is answered with 414.
var ErrQueryTooLong = WithKind(KindURITooLong, errors.New("query too long"))
