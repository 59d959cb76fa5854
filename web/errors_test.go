package web

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
)

// Every kind has its status, and an error's kind comes from withKind
// first, then from what the error is, then from the caller's default.
func TestErrorKinds(t *testing.T) {
	for k := kindBadValue; k <= kindInternal; k++ {
		if int(k) >= len(kindStatus) || kindStatus[k] < 400 {
			t.Errorf("kind %d has no error status", k)
		}
	}
	bad := &inputError{Field: "hosts", Msg: "500 is out of range (allowed 1–50 hosts)"}
	_, fieldErr := envoyconf.ApplyFields(engine.DefaultConfig(), map[string]string{"max_ejection_percent": "300"})
	if fieldErr == nil {
		t.Fatal("a cap of 300% passes Envoy's validation")
	}
	other := errors.New("the engine broke")
	for _, tt := range []struct {
		name    string
		err     error
		unknown errKind
		status  int
	}{
		{"a field-named bad value", bad, kindInternal, http.StatusUnprocessableEntity},
		{"Envoy's field validation", fieldErr, kindInternal, http.StatusUnprocessableEntity},
		{"bad values joined", errors.Join(bad, fieldErr), kindInternal, http.StatusUnprocessableEntity},
		{"an unknown preset", fmt.Errorf("building: %w", errUnknownPreset), kindBadValue, http.StatusNotFound},
		{"a query over the limit", fmt.Errorf("%w: 9000 bytes", errQueryTooLong), kindBadValue, http.StatusRequestURITooLong},
		{"a kind given wins", withKind(kindNotFound, bad), kindBadValue, http.StatusNotFound},
		{"a conflict", withKind(kindConflict, bad), kindBadValue, http.StatusConflict},
		{"a body over the limit", withKind(kindTooLarge, other), kindBadValue, http.StatusRequestEntityTooLarge},
		{"malformed", withKind(kindMalformed, other), kindInternal, http.StatusBadRequest},
		{"no known kind: the request's", other, kindBadValue, http.StatusUnprocessableEntity},
		{"no known kind: the server's", other, kindInternal, http.StatusInternalServerError},
	} {
		if got := kindStatus[kindOf(tt.err, tt.unknown)]; got != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.status)
		}
	}
	if withKind(kindNotFound, nil) != nil {
		t.Error("withKind(nil) is not nil")
	}

	// A lab address: a bad value makes a malformed link (400); an error no
	// address could cause (it set nothing) is the server's.
	set := labLink{Values: map[string]float64{"hosts": 6}}
	for _, tt := range []struct {
		name string
		err  error
		link labLink
		want errKind
	}{
		{"bad value", bad, set, kindMalformed},
		{"bad value, nothing set", bad, labLink{}, kindMalformed},
		{"unknown preset", errUnknownPreset, labLink{}, kindNotFound},
		{"too long", errQueryTooLong, set, kindURITooLong},
		{"the preset fails with its own settings", other, labLink{}, kindInternal},
		{"the address's settings fail", other, set, kindMalformed},
		{"the address's injection fails", other, labLink{Inject: "h3@60s"}, kindMalformed},
		{"the address's time fails", other, labLink{TMs: 5000}, kindMalformed},
	} {
		if got := linkErrorKind(tt.err, tt.link); got != tt.want {
			t.Errorf("%s: kind %d, want %d", tt.name, got, tt.want)
		}
	}
}
