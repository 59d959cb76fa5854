package course

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Ms is a time in a run, in milliseconds since the run started. In lesson
// files it is written as a Go duration string ("40s", "2m30s") or "end" (the
// last frame of the run), because that is how the learner reads the time
// axis; a bare number is refused so that "40" never silently means 40 ms.
type Ms int64

// End stands for the last frame of the run, whatever the run's length.
const End Ms = math.MaxInt64

// WholeRun is the cursor that shows every frame: the headless report and the
// tests evaluate checks at it.
const WholeRun int64 = math.MaxInt64

// UnmarshalJSON reads "40s", "2m" or "end".
func (m *Ms) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a time must be a quoted duration like \"40s\" or \"end\", not %s", b)
	}
	v, err := ParseMs(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads ("40s", "end").
func (m Ms) MarshalJSON() ([]byte, error) {
	if m == End {
		return json.Marshal("end")
	}
	return json.Marshal((time.Duration(m) * time.Millisecond).String())
}

// ParseMs reads "40s", "1m30s", "1500ms" or "end".
func ParseMs(s string) (Ms, error) {
	s = strings.TrimSpace(s)
	if s == "end" {
		return End, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time like \"40s\" or \"end\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	if d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%q is not a whole number of milliseconds", s)
	}
	return Ms(d.Milliseconds()), nil
}

// String is the time as the page writes it: "40 s", "1.5 s", "end".
func (m Ms) String() string {
	if m == End {
		return "end"
	}
	return fmtSeconds(int64(m))
}

// fmtSeconds writes milliseconds as seconds the way the charts' axis does:
// "40 s", "1.5 s".
func fmtSeconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s"
}
