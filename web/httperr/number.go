package httperr

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Span is the range a number from a request may take, with its unit for
// the error text: {0, 300, "s"} reads "allowed 0–300 s".
type Span struct {
	Lo, Hi float64
	Unit   string
}

func (sp Span) String() string {
	s := FormatNumber(sp.Lo) + "–" + FormatNumber(sp.Hi)
	if sp.Unit != "" {
		s += " " + sp.Unit
	}
	return s
}

// Number reads a number a request carries for field (a query value,
// a form field, a string signal) and checks it against sp. It is the one
// parser for numbers from outside that are not a control's: strconv
// accepts "NaN", "Inf" and "1e999" (as +Inf), and NaN fails every
// comparison, so a range check alone lets it through — and a NaN turned
// into milliseconds is MinInt64. Refusing NaN and ±Inf here, and keeping
// every value inside a finite Span, means a later integer conversion
// cannot overflow.
func Number(field, text string, sp Span) (float64, error) {
	text = strings.TrimSpace(text)
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, &FieldError{Field: field, Msg: fmt.Sprintf("%q is not a number (allowed %s)", Truncate(text, 20), sp)}
	}
	if f < sp.Lo || f > sp.Hi {
		return 0, &FieldError{Field: field, Msg: fmt.Sprintf("%s is out of range (allowed %s)", MessageNumber(f), sp)}
	}
	return f, nil
}

// NumberJSON reads a JSON number, or a string holding one (a page's
// input sends "60"), as Number does.
func NumberJSON(field string, raw json.RawMessage, sp Span) (float64, error) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return 0, &FieldError{Field: field, Msg: fmt.Sprintf("is missing or not a number (allowed %s)", sp)}
	}
	switch x := v.(type) {
	case float64:
		return Number(field, strconv.FormatFloat(x, 'g', -1, 64), sp)
	case string:
		return Number(field, x, sp)
	}
	return 0, &FieldError{Field: field, Msg: fmt.Sprintf("%s is not a number (allowed %s)", Truncate(ClipJSON(raw), 20), sp)}
}
