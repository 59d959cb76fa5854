package httperr

import (
	"errors"
	"go/ast"
	"go/token"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"outlierlab/web/internal/gosrc"
)

// Every error answer of the web layer goes through a kind: Write (or a
// page rendered with Status[k]) picks its status from the one table, so
// no handler outside this package names an error status itself. The
// test reads every Go file of web/ but this package's, the tests and the
// tests' helpers (web/internal), and fails on an http.Status* constant of
// 400 or more, an http.Error call, or a WriteHeader given a number.
func TestNoHandPickedStatus(t *testing.T) {
	// The statuses a handler may name: success and redirects.
	fine := map[string]bool{
		"StatusOK": true, "StatusCreated": true, "StatusAccepted": true, "StatusNoContent": true,
		"StatusPartialContent": true, "StatusMovedPermanently": true, "StatusFound": true,
		"StatusSeeOther": true, "StatusNotModified": true, "StatusTemporaryRedirect": true,
		"StatusPermanentRedirect": true, "StatusText": true,
	}
	gosrc.Each(t, "..", 100, []string{"../httperr", "../internal", "../static", "../workshopday"}, func(fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "http" {
					if strings.HasPrefix(n.Sel.Name, "Status") && !fine[n.Sel.Name] {
						t.Errorf("%s: http.%s: an error status picked by hand (give the error a kind: httperr.Write, httperr.Status[k])", fset.Position(n.Pos()), n.Sel.Name)
					}
					if n.Sel.Name == "Error" {
						t.Errorf("%s: http.Error answers outside the kinds table (httperr.Write)", fset.Position(n.Pos()))
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WriteHeader" && len(n.Args) == 1 {
					if lit, ok := n.Args[0].(*ast.BasicLit); ok {
						if v, _ := strconv.Atoi(lit.Value); v >= 400 {
							t.Errorf("%s: WriteHeader(%s): an error status picked by hand", fset.Position(n.Pos()), lit.Value)
						}
					}
				}
			}
			return true
		})
	})
}

// Every kind has an error status.
func TestEveryKindHasAStatus(t *testing.T) {
	for k := KindBadValue; k <= KindMethod; k++ {
		if int(k) >= len(Status) || Status[k] < 400 {
			t.Errorf("kind %d has no error status", k)
		}
	}
}

// recorder is a request log's writer (httperr.Recorder) under another
// wrapper, as the server's middleware stack has it.
type recorder struct {
	*httptest.ResponseRecorder
	internal error
}

func (r *recorder) RecordInternal(err error) { r.internal = err }

type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Write answers an internal error with the fixed sentence and gives its
// text to the request's log, found through the wrappers; any other kind
// is answered with its own text and logs nothing.
func TestWriteInternal(t *testing.T) {
	for _, c := range []struct {
		err                error
		unknown            Kind
		status             int
		body, logged       string
		retryAfter, preset string
	}{
		{err: errors.New("nats: connection closed at 10.0.0.7:4222"), unknown: KindInternal, status: 500, body: InternalText, logged: "nats: connection closed at 10.0.0.7:4222"},
		{err: WithKind(KindInternal, errors.New("a preset fails")), unknown: KindBadValue, status: 500, body: InternalText, logged: "a preset fails"},
		{err: &FieldError{Field: "seed", Msg: "0 is out of range (allowed 1–1000)"}, unknown: KindInternal, status: 422, body: "seed: 0 is out of range (allowed 1–1000)"},
		{err: errors.New("bus down"), unknown: KindUnavailable, status: 503, body: "bus down", retryAfter: "2"},
		{err: errors.New("queue full"), unknown: KindUnavailable, status: 503, body: "queue full", preset: "9", retryAfter: "9"},
	} {
		rec := &recorder{ResponseRecorder: httptest.NewRecorder()}
		if c.preset != "" {
			rec.Header().Set("Retry-After", c.preset)
		}
		Write(wrapper{rec}, c.err, c.unknown)
		logged := ""
		if rec.internal != nil {
			logged = rec.internal.Error()
		}
		if rec.Code != c.status || rec.Body.String() != c.body+"\n" || logged != c.logged || rec.Header().Get("Retry-After") != c.retryAfter {
			t.Errorf("Write(%v): %d %q, logged %q, Retry-After %q; want %d %q, logged %q, Retry-After %q",
				c.err, rec.Code, rec.Body, logged, rec.Header().Get("Retry-After"), c.status, c.body, c.logged, c.retryAfter)
		}
	}
}
