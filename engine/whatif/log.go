// Package whatif replays an Envoy access log through the detector: "what
// would outlier detection have done last night with this config?"
//
// Each line becomes the result Envoy's router reports to the outlier
// detector for the request's last attempt, on the host that attempt went
// to (envoy-semantics.md §3.4, router.cc and upstream_request.cc); the
// detector ticks every interval from the first line's second. What a log
// cannot show is said, not guessed: earlier attempts of a retried request
// are counted but not replayed, and a line on a host this config has
// ejected is left out (Envoy would have sent that request elsewhere).
package whatif

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Format is the access-log format a line was read in.
type Format string

const (
	// FormatEnvoy is Envoy's default text format (13 fields, ending with
	// "%UPSTREAM_HOST%").
	FormatEnvoy Format = "envoy"
	// FormatIstio is istiod's default text format (EnvoyTextLogFormat in
	// pilot/pkg/model/telemetry_logging.go: 22 fields, with
	// %RESPONSE_CODE_DETAILS% and %UPSTREAM_CLUSTER_RAW%).
	FormatIstio Format = "istio"
	// FormatJSON is one JSON object per line (Envoy's json_format, or
	// Istio's EnvoyJSONLogFormatIstio), keys such as start_time,
	// response_code, response_flags, upstream_host and, when present,
	// upstream_request_attempt_count.
	FormatJSON Format = "json"
)

// Entry is one request as the log shows it.
type Entry struct {
	Line   int
	Format Format
	// Start is %START_TIME%; Answer is when the upstream answered (see
	// answerTime), the time the detector is given the result.
	Start, Answer time.Time
	Code          int // %RESPONSE_CODE%, 0 when no response was sent
	Flags         []string
	Host          string // %UPSTREAM_HOST%, "" for "-"
	Cluster       string // %UPSTREAM_CLUSTER_RAW% or upstream_cluster, "" if absent
	// Attempts is %UPSTREAM_REQUEST_ATTEMPT_COUNT%, 0 when the log does
	// not have it.
	Attempts   int
	DurationMs int64 // %DURATION%, -1 if "-"
}

// LineError is one line that did not parse.
type LineError struct {
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

func (e LineError) String() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// Log is a parsed access log.
type Log struct {
	Entries []Entry
	// Unparsed counts the lines that did not parse; Errors holds the
	// first MaxLineErrors of them.
	Unparsed int
	Errors   []LineError
	Lines    int // non-blank lines read
}

// Limits of ParseLog.
const (
	MaxLineErrors = 5
	MaxLineBytes  = 1 << 20
	MaxEntries    = 5_000_000
)

// ParseLog reads an access log, a line at a time, in any of the formats
// (each line on its own: a log may mix them). A line that does not parse
// is counted and the run goes on; only a read error, a line longer than
// MaxLineBytes or more than MaxEntries lines stop it.
func ParseLog(r io.Reader) (*Log, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	log := &Log{}
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		log.Lines++
		e, err := parseLine(text)
		if err != nil {
			log.Unparsed++
			if len(log.Errors) < MaxLineErrors {
				log.Errors = append(log.Errors, LineError{Line: n, Text: clip(text, 200), Reason: err.Error()})
			}
			continue
		}
		if len(log.Entries) == MaxEntries {
			return nil, fmt.Errorf("line %d: more than %d requests; replay a shorter stretch of the log", n, MaxEntries)
		}
		e.Line = n
		log.Entries = append(log.Entries, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n+1, MaxLineBytes)
		}
		return nil, err
	}
	return log, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func parseLine(text string) (Entry, error) {
	if strings.HasPrefix(text, "{") {
		return parseJSONLine(text)
	}
	f, err := splitFields(text)
	if err != nil {
		return Entry{}, err
	}
	var e Entry
	var duration, service string
	switch len(f) {
	case 13:
		e.Format, duration, service, e.Host = FormatEnvoy, f[6], f[7], f[12]
	case 22:
		e.Format, duration, service, e.Host, e.Cluster = FormatIstio, f[9], f[10], f[15], f[16]
	default:
		return Entry{}, fmt.Errorf("%d fields; Envoy's default format has 13 and Istio's 22 (or write one JSON object per line)", len(f))
	}
	return e.fill(f[0], f[2], f[3], duration, service, "")
}

// splitFields cuts a text line into its fields: [bracketed], "quoted"
// (Envoy does not escape quotes inside them) and bare words.
func splitFields(s string) ([]string, error) {
	var out []string
	for s = strings.TrimLeftFunc(s, unicode.IsSpace); s != ""; s = strings.TrimLeftFunc(s, unicode.IsSpace) {
		var end string
		switch s[0] {
		case '[':
			end = "]"
		case '"':
			end = `"`
		}
		if end == "" {
			i := strings.IndexFunc(s, unicode.IsSpace)
			if i < 0 {
				i = len(s)
			}
			out, s = append(out, s[:i]), s[i:]
			continue
		}
		i := strings.Index(s[1:], end)
		if i < 0 {
			return nil, fmt.Errorf("a %c field is not closed", s[0])
		}
		out, s = append(out, s[1:1+i]), s[2+i:]
	}
	return out, nil
}

// fill reads the fields every format has.
func (e Entry) fill(start, code, flags, duration, service, attempts string) (Entry, error) {
	var err error
	if e.Start, err = parseTime(start); err != nil {
		return Entry{}, err
	}
	if e.Code, err = strconv.Atoi(code); err != nil || e.Code < 0 || e.Code > 999 {
		return Entry{}, fmt.Errorf("RESPONSE_CODE %q is not an HTTP status (0–999)", code)
	}
	if flags != "" && flags != "-" {
		e.Flags = strings.Split(flags, ",")
	}
	if e.Host == "-" {
		e.Host = ""
	}
	if e.Cluster == "-" {
		e.Cluster = ""
	}
	e.DurationMs = -1
	if duration != "" && duration != "-" {
		if e.DurationMs, err = strconv.ParseInt(duration, 10, 64); err != nil || e.DurationMs < 0 {
			return Entry{}, fmt.Errorf("DURATION %q is not a number of milliseconds", duration)
		}
	}
	if attempts != "" && attempts != "-" {
		if e.Attempts, err = strconv.Atoi(attempts); err != nil || e.Attempts < 0 {
			return Entry{}, fmt.Errorf("UPSTREAM_REQUEST_ATTEMPT_COUNT %q is not a count", attempts)
		}
	}
	e.Answer = answerTime(e.Start, service, e.DurationMs)
	return e, nil
}

// answerTime is when the router reported the result: the router reports
// a response when its headers arrive, which X-ENVOY-UPSTREAM-SERVICE-TIME
// measures from the upstream request's start; with no such header (the
// upstream never answered: a connect failure, a timeout) the request's
// DURATION is the best bound the log has.
func answerTime(start time.Time, service string, durationMs int64) time.Time {
	if ms, err := strconv.ParseInt(service, 10, 64); err == nil && ms >= 0 {
		return start.Add(time.Duration(ms) * time.Millisecond)
	}
	if durationMs > 0 {
		return start.Add(time.Duration(durationMs) * time.Millisecond)
	}
	return start
}

// parseTime reads %START_TIME%: Envoy's default "2024-05-01T12:00:00.123Z"
// (any RFC 3339 time), or seconds since the epoch ("%s.%3f").
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e11 {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e3))*1e6).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("START_TIME %q is not a time (want RFC 3339, e.g. 2024-05-01T12:00:00.123Z, or seconds since the epoch)", s)
}

// jsonKeys maps a JSON key, folded (lower case, letters and digits only),
// to what it holds.
var jsonKeys = map[string]string{
	"starttime": "start", "timestamp": "start",
	"responsecode": "code", "status": "code",
	"responseflags":   "flags",
	"upstreamhost":    "host",
	"upstreamcluster": "cluster", "upstreamclusterraw": "cluster",
	"upstreamrequestattemptcount": "attempts",
	"duration":                    "duration",
	"upstreamservicetime":         "service", "respxenvoyupstreamservicetime": "service",
}

func parseJSONLine(text string) (Entry, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return Entry{}, fmt.Errorf("not valid JSON: %v", err)
	}
	v := map[string]string{}
	for k, val := range obj {
		if name, ok := jsonKeys[foldKey(k)]; ok {
			switch x := val.(type) {
			case string:
				v[name] = x
			case float64:
				v[name] = strconv.FormatFloat(x, 'f', -1, 64)
			case nil:
				v[name] = "-"
			}
		}
	}
	for _, need := range []string{"start", "code", "host"} {
		if _, ok := v[need]; !ok {
			return Entry{}, fmt.Errorf("no %s key (want start_time, response_code, response_flags, upstream_host)", map[string]string{"start": "start_time", "code": "response_code", "host": "upstream_host"}[need])
		}
	}
	e := Entry{Format: FormatJSON, Host: v["host"], Cluster: v["cluster"]}
	return e.fill(v["start"], v["code"], v["flags"], v["duration"], v["service"], v["attempts"])
}

func foldKey(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
