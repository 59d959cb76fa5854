package web

import (
	"errors"
	"io"
	"net/http"

	"outlierlab/engine/envoyconf"
)

// errKind is what is wrong with a request, and so how it is answered:
// kindStatus is the one table from kinds to HTTP statuses. An error gets
// its kind where it is made (withKind), or from what it is (kindOf).
type errKind uint8

const (
	// kindBadValue: a value out of range or of the wrong type, named with
	// its field and what is allowed ("max_ejection_percent: 101 is out of
	// range (allowed 0–100 %)").
	kindBadValue errKind = iota
	// kindMalformed: a request the route cannot read (not JSON, not a tab
	// id), or an address that is not a working lab link.
	kindMalformed
	// kindNotFound: an unknown preset, lesson, step or command.
	kindNotFound
	// kindConflict: a command this page does not take (a preset on a
	// lesson page).
	kindConflict
	// kindTooLarge: a body over the server's limit.
	kindTooLarge
	// kindURITooLong: an address over the lab's limit.
	kindURITooLong
	// kindInternal: no request could cause it (a preset that fails with
	// its own settings).
	kindInternal
	// kindForbidden: a room's instructor command without the room's key.
	kindForbidden
	// kindFull: a room limit of this server is reached.
	kindFull
	// kindTooMany: a client address's limit is reached (too many attendee
	// streams of a room, too many guessed room codes).
	kindTooMany
)

var kindStatus = [...]int{
	kindBadValue:   http.StatusUnprocessableEntity,
	kindMalformed:  http.StatusBadRequest,
	kindNotFound:   http.StatusNotFound,
	kindConflict:   http.StatusConflict,
	kindTooLarge:   http.StatusRequestEntityTooLarge,
	kindURITooLong: http.StatusRequestURITooLong,
	kindInternal:   http.StatusInternalServerError,
	kindForbidden:  http.StatusForbidden,
	kindFull:       http.StatusServiceUnavailable,
	kindTooMany:    http.StatusTooManyRequests,
}

// kindError is an error with its kind; its text is the error's own.
type kindError struct {
	kind errKind
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// withKind gives err a kind.
func withKind(k errKind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: k, err: err}
}

// kindOf is err's kind: the one withKind gave it, else what the error is
// (an unknown preset, a query over the limit, a field-named bad value),
// else unknown: the caller says whose fault an error of no known kind is
// where it stands (a run of a request's inputs: the request's; a preset's
// own run: the server's).
func kindOf(err error, unknown errKind) errKind {
	var ke *kindError
	var ie *inputError
	var fe *envoyconf.FieldError
	var me *http.MaxBytesError
	switch {
	case errors.As(err, &me):
		// Before the kind a handler gave a body it could not read: a body
		// cut at its limit (limitBodies) is too large, not malformed.
		return kindTooLarge
	case errors.As(err, &ke):
		return ke.kind
	case errors.Is(err, errUnknownPreset):
		return kindNotFound
	case errors.Is(err, errQueryTooLong):
		return kindURITooLong
	case errors.As(err, &ie), errors.As(err, &fe):
		return kindBadValue
	}
	return unknown
}

// writeError answers a request that failed with err in plain text: the
// status of its kind (unknown for an error of no known kind, see kindOf)
// and one line per problem, each naming the field and what is allowed.
func writeError(w http.ResponseWriter, err error, unknown errKind) {
	httpError(w, kindStatus[kindOf(err, unknown)], errorText(err))
}

// httpError answers with plain text: msg and a newline.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
