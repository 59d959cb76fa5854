package lab

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
)

// Every kind has its status, and an error's kind comes from withKind
// first, then from what the error is, then from the caller's default.
func TestErrorKinds(t *testing.T) {
	t.Parallel()
	for k := httperr.KindBadValue; k <= httperr.KindInternal; k++ {
		if int(k) >= len(httperr.Status) || httperr.Status[k] < 400 {
			t.Errorf("kind %d has no error status", k)
		}
	}
	bad := &httperr.FieldError{Field: "hosts", Msg: "500 is out of range (allowed 1–50 hosts)"}
	_, fieldErr := envoyconf.ApplyFields(engine.DefaultConfig(), map[string]string{"max_ejection_percent": "300"})
	if fieldErr == nil {
		t.Fatal("a cap of 300% passes Envoy's validation")
	}
	other := errors.New("the engine broke")
	for _, tt := range []struct {
		name    string
		err     error
		unknown httperr.Kind
		status  int
	}{
		{"a field-named bad value", bad, httperr.KindInternal, http.StatusUnprocessableEntity},
		{"Envoy's field validation", fieldErr, httperr.KindInternal, http.StatusUnprocessableEntity},
		{"bad values joined", errors.Join(bad, fieldErr), httperr.KindInternal, http.StatusUnprocessableEntity},
		{"an unknown preset", fmt.Errorf("building: %w", tabstate.ErrUnknownPreset), httperr.KindBadValue, http.StatusNotFound},
		{"a query over the limit", fmt.Errorf("%w: 9000 bytes", httperr.ErrQueryTooLong), httperr.KindBadValue, http.StatusRequestURITooLong},
		{"a kind given wins", httperr.WithKind(httperr.KindNotFound, bad), httperr.KindBadValue, http.StatusNotFound},
		{"a conflict", httperr.WithKind(httperr.KindConflict, bad), httperr.KindBadValue, http.StatusConflict},
		{"a body over the limit", httperr.WithKind(httperr.KindTooLarge, other), httperr.KindBadValue, http.StatusRequestEntityTooLarge},
		{"malformed", httperr.WithKind(httperr.KindMalformed, other), httperr.KindInternal, http.StatusBadRequest},
		{"no known kind: the request's", other, httperr.KindBadValue, http.StatusUnprocessableEntity},
		{"no known kind: the server's", other, httperr.KindInternal, http.StatusInternalServerError},
	} {
		if got := httperr.Status[httperr.KindOf(tt.err, tt.unknown)]; got != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.status)
		}
	}
	if httperr.WithKind(httperr.KindNotFound, nil) != nil {
		t.Error("withKind(nil) is not nil")
	}

	// A lab address: a bad value makes a malformed link (400); an error no
	// address could cause (it set nothing) is the server's.
	set := tabstate.LabLink{Values: map[string]float64{"hosts": 6}}
	for _, tt := range []struct {
		name string
		err  error
		link tabstate.LabLink
		want httperr.Kind
	}{
		{"bad value", bad, set, httperr.KindMalformed},
		{"bad value, nothing set", bad, tabstate.LabLink{}, httperr.KindMalformed},
		{"unknown preset", tabstate.ErrUnknownPreset, tabstate.LabLink{}, httperr.KindNotFound},
		{"too long", httperr.ErrQueryTooLong, set, httperr.KindURITooLong},
		{"the preset fails with its own settings", other, tabstate.LabLink{}, httperr.KindInternal},
		{"the address's settings fail", other, set, httperr.KindMalformed},
		{"the address's injection fails", other, tabstate.LabLink{Inject: "h3@60s"}, httperr.KindMalformed},
		{"the address's time fails", other, tabstate.LabLink{TMs: 5000}, httperr.KindMalformed},
	} {
		if got := linkErrorKind(tt.err, tt.link); got != tt.want {
			t.Errorf("%s: kind %d, want %d", tt.name, got, tt.want)
		}
	}
}
