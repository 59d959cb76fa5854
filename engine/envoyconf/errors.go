package envoyconf

import (
	"errors"
	"strings"
)

// FieldError is the one error type this package returns (alone, or several
// joined with errors.Join). It names the field the way people write it in
// Envoy YAML (snake_case, e.g. "max_ejection_percent"), never the Go or
// CamelCase name that protoc-gen-validate reports, so a user can find the
// line to fix.
//
// Error() reads "FIELD: VALUE REASON (allowed ALLOWED)", leaving out the
// parts that are empty, for example
//
//	max_ejection_percent: 101 is out of range (allowed 0–100)
type FieldError struct {
	// Field is the snake_case field name. It is a dotted path for fields
	// outside outlier_detection ("common_lb_config.healthy_panic_threshold.value"),
	// and empty for errors about the whole document (a YAML syntax error).
	Field string
	// Value is the offending value as the user wrote it (JSON form: strings
	// keep their quotes) or as the proto holds it ("101", "10s"). May be empty.
	Value string
	// Allowed describes what would have been accepted ("0–100", "> 0s",
	// "true or false", a list of field names). May be empty.
	Allowed string
	// Reason says what is wrong, phrased to follow Value ("is out of range").
	Reason string
	// Note, when set, follows the rest after "; ": what another reader of
	// the same proto does with it (checkGRPC, GRPCNotes).
	Note string

	// cause is the underlying protojson / protoc-gen-validate / YAML error,
	// kept for errors.As and debugging; its text is not part of Error().
	cause error
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Value != "" {
		b.WriteString(e.Value)
		b.WriteString(" ")
	}
	b.WriteString(e.Reason)
	if e.Allowed != "" {
		b.WriteString(" (allowed ")
		b.WriteString(e.Allowed)
		b.WriteString(")")
	}
	if e.Note != "" {
		b.WriteString("; ")
		b.WriteString(e.Note)
	}
	return b.String()
}

// Unwrap returns the protojson, protoc-gen-validate or YAML error this one
// was made from, if any (for example a cluster/v3.OutlierDetectionValidationError).
func (e *FieldError) Unwrap() error { return e.cause }

// FieldErrors lists every *FieldError inside err (which may be a single
// FieldError or an errors.Join of several), in order. UIs use it to mark
// each offending field; it returns nil for a nil error.
func FieldErrors(err error) []*FieldError {
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) && fe == err {
		return []*FieldError{fe}
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*FieldError
		for _, e := range joined.Unwrap() {
			out = append(out, FieldErrors(e)...)
		}
		return out
	}
	if errors.As(err, &fe) {
		return []*FieldError{fe}
	}
	return nil
}

// joinFieldErrors returns nil, the single error itself (so callers can
// type-assert the common case), or all of them joined.
func joinFieldErrors(errs []*FieldError) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}
