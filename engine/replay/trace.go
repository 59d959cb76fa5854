// Package replay runs the trace format of shared/spec/replay.md: a script of
// results, ticks and membership changes fed to the detector one step at a
// time, the way Envoy's own outlier_detection_impl_test.cc drives it.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"outlierlab/engine"
)

// Trace is one replay file.
type Trace struct {
	Name   string `json:"name"`
	Source string `json:"source,omitempty"`
	// Dialect is "envoy" (the default when absent) or "grpc": the same
	// config read the way grpc-go reads it from xDS (gRFC A50), RPC
	// outcomes as ext steps (shared/conformance/grpc/README.md). Its
	// snapshots list the counters the dialect keeps under Envoy's names:
	// ejections_active is grpc-go's numEndpointsEjected (so it shows the
	// double-ejection leak, engine/doc.go G1), the enforced, overflow and
	// detected counters count what the A91 metrics and log lines report.
	Dialect string `json:"dialect,omitempty"`
	// Clock is the clock a grpc trace's ticks sit on: "exact" (the
	// default) when each tick is the sweep at exactly that time, as under
	// testing/synctest, where the recorded grpc-go traces were taken;
	// "real" when each tick stands for a sweep of a real process, which
	// starts a little late (engine.GRPCRealClock). Envoy's uneject test
	// (duration <= elapsed) reads the same on both, so an envoy trace
	// takes no clock.
	Clock  string          `json:"clock,omitempty"`
	Config json.RawMessage `json:"config"`
	Hosts  []string        `json:"hosts"`
	Random uint64          `json:"random"`
	Steps  []Step          `json:"steps"`
	Expect *Output         `json:"expect,omitempty"`
}

// Step is one line of the script; exactly one action is set.
type Step struct {
	AtMs       int64       `json:"at_ms"`
	HTTP       *HTTPStep   `json:"http,omitempty"`
	Local      *ResultStep `json:"local,omitempty"`
	Ext        *ResultStep `json:"ext,omitempty"`
	Tick       bool        `json:"tick,omitempty"`
	ActiveHC   *HCStep     `json:"active_hc,omitempty"`
	AddHost    *string     `json:"add_host,omitempty"`
	RemoveHost *string     `json:"remove_host,omitempty"`
	Snapshot   *string     `json:"snapshot,omitempty"`
}

type HTTPStep struct {
	Host  string `json:"host"`
	Code  int    `json:"code"`
	Times *int   `json:"times,omitempty"`
	// Degraded: the response carries x-envoy-degraded. The router
	// (Filter::onUpstreamHeaders, router.cc) reports it as
	// ExtOriginRequestDegraded with the code, unless the code is a 5xx:
	// "ejection has priority over degradation", and a 5xx is
	// ExtOriginRequestFailed whatever its headers.
	Degraded bool `json:"degraded,omitempty"`
}

type ResultStep struct {
	Host   string `json:"host"`
	Result string `json:"result"`
	Times  *int   `json:"times,omitempty"`
}

type HCStep struct {
	Host    string `json:"host"`
	Healthy bool   `json:"healthy"`
}

// Output is what a replay prints for one trace, and what "expect" holds.
type Output struct {
	Name      string     `json:"name,omitempty"`
	Events    []Event    `json:"events"`
	Snapshots []Snapshot `json:"snapshots"`
	// Notes (grpc traces only) name each value of the config Envoy would
	// refuse and say what grpc-go does with it instead
	// (envoyconf.GRPCNotes). An expectation's notes are not compared.
	Notes []string `json:"notes,omitempty"`
}

// Event is one detector decision in the replay format.
type Event struct {
	AtMs     int64  `json:"at_ms"`
	Host     string `json:"host"`
	Event    string `json:"event"`
	Detector string `json:"detector,omitempty"`
}

// Snapshot is the detector's state at a "snapshot" step.
type Snapshot struct {
	Label   string   `json:"label"`
	AtMs    int64    `json:"at_ms"`
	Ejected []string `json:"ejected"`
	// Degraded names the current hosts carrying Envoy's
	// DEGRADED_OUTLIER_DETECTION flag (detect_degraded_hosts), sorted;
	// left out when there are none.
	Degraded []string          `json:"degraded,omitempty"`
	Stats    map[string]uint64 `json:"stats"`
}

// maxTimes bounds "times" so a malformed trace cannot make replay spin for
// hours; Envoy's tests never send more than a few hundred results per step.
const maxTimes = 10_000_000

var localResults = []string{"connect_failed", "timeout", "connect_success", "connect_success_final"}
var extResults = []string{"request_failed", "request_success"}

// Parse reads and checks one trace. Errors name the step and the field.
func Parse(r io.Reader) (*Trace, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var t Trace
	if err := dec.Decode(&t); err != nil {
		return nil, describeJSONError(err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the trace object")
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	return &t, nil
}

// ParseBytes is Parse over a byte slice.
func ParseBytes(b []byte) (*Trace, error) { return Parse(bytes.NewReader(b)) }

func describeJSONError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return fmt.Errorf("field %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
	case errors.Is(err, io.EOF):
		return errors.New("empty file: expected a trace object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not valid JSON: the document ends in the middle of a value")
	}
	// DisallowUnknownFields reports `json: unknown field "x"`.
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// CheckNotEmpty refuses a trace that replays nothing ("{}"): with no
// steps, or without a "hosts" field and no host added by a step, a trace
// file is a mistake, not one whose result is empty. An explicit
// "hosts": [] is a cluster with no hosts, which Envoy's own tests drive
// (EmptySuccessRate: ticks over an empty cluster find nothing), and is
// kept. Parse leaves this to the caller, so a config can be checked on its
// own.
func (t *Trace) CheckNotEmpty() error {
	if len(t.Steps) == 0 {
		return errors.New("steps: the trace has no steps (allowed 1 or more)")
	}
	if t.Hosts != nil {
		return nil
	}
	for _, s := range t.Steps {
		if s.AddHost != nil {
			return nil
		}
	}
	return errors.New(`hosts: missing, and no step adds a host (list them, or write "hosts": [] for a cluster with no hosts)`)
}

func (t *Trace) check() error {
	if len(t.Config) == 0 || string(t.Config) == "null" {
		t.Config = json.RawMessage("{}")
	}
	dialect, err := t.dialect()
	if err != nil {
		return err
	}
	if _, err := t.grpcClock(dialect); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, h := range t.Hosts {
		if h == "" {
			return fmt.Errorf("hosts[%d]: empty host name", i)
		}
		if seen[h] {
			return fmt.Errorf("hosts[%d]: duplicate host %q", i, h)
		}
		seen[h] = true
	}
	last := int64(0)
	for i := range t.Steps {
		s := &t.Steps[i]
		where := fmt.Sprintf("steps[%d]", i)
		if s.AtMs < 0 {
			return fmt.Errorf("%s.at_ms: %d is negative (allowed ≥ 0)", where, s.AtMs)
		}
		if s.AtMs < last {
			return fmt.Errorf("%s.at_ms: %d is before the previous step's %d (steps must be in non-decreasing at_ms order)", where, s.AtMs, last)
		}
		last = s.AtMs
		n := 0
		for _, set := range []bool{s.HTTP != nil, s.Local != nil, s.Ext != nil, s.Tick, s.ActiveHC != nil, s.AddHost != nil, s.RemoveHost != nil, s.Snapshot != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: has %d actions; exactly one of http, local, ext, tick, active_hc, add_host, remove_host, snapshot is allowed", where, n)
		}
		if dialect == engine.DialectGRPC {
			if err := checkGRPCStep(where, s); err != nil {
				return err
			}
		}
		if err := checkAction(where, s); err != nil {
			return err
		}
	}
	return nil
}

// checkAction checks the one action a step holds.
func checkAction(where string, s *Step) error {
	switch {
	case s.HTTP != nil:
		if s.HTTP.Code < 100 || s.HTTP.Code > 999 {
			return fmt.Errorf("%s.http.code: %d is out of range (allowed 100–999)", where, s.HTTP.Code)
		}
		if err := checkTimes(where+".http.times", s.HTTP.Times); err != nil {
			return err
		}
		if s.HTTP.Host == "" {
			return fmt.Errorf("%s.http.host: missing", where)
		}
	case s.Local != nil:
		if err := checkResult(where+".local", s.Local, localResults); err != nil {
			return err
		}
	case s.Ext != nil:
		if err := checkResult(where+".ext", s.Ext, extResults); err != nil {
			return err
		}
	case s.ActiveHC != nil:
		if s.ActiveHC.Host == "" {
			return fmt.Errorf("%s.active_hc.host: missing", where)
		}
	case s.AddHost != nil:
		if *s.AddHost == "" {
			return fmt.Errorf("%s.add_host: empty host name", where)
		}
	case s.RemoveHost != nil:
		if *s.RemoveHost == "" {
			return fmt.Errorf("%s.remove_host: empty host name", where)
		}
	}
	return nil
}

// dialect reads the "dialect" field; absent means Envoy.
func (t *Trace) dialect() (engine.Dialect, error) {
	if t.Dialect == "" {
		return engine.DialectEnvoy, nil
	}
	d, err := engine.ParseDialect(t.Dialect)
	if err != nil {
		return 0, fmt.Errorf("dialect: %v", err)
	}
	return d, nil
}

// grpcClock reads the "clock" field; absent means exact.
func (t *Trace) grpcClock(dialect engine.Dialect) (engine.GRPCClock, error) {
	if t.Clock == "" {
		return engine.GRPCExactClock, nil
	}
	if dialect != engine.DialectGRPC {
		return 0, fmt.Errorf("clock: %q is for the grpc dialect; the envoy dialect's ticks mean the same on any clock (checkHostForUneject tests duration <= elapsed)", t.Clock)
	}
	c, err := engine.ParseGRPCClock(t.Clock)
	if err != nil {
		return 0, fmt.Errorf("clock: %v", err)
	}
	return c, nil
}

// checkGRPCStep refuses the steps that have no meaning for grpc-go's
// detector: it sees only whether an RPC ended OK (ext steps), and has no
// local-origin results and no health-check uneject (A50).
func checkGRPCStep(where string, s *Step) error {
	switch {
	case s.HTTP != nil:
		return fmt.Errorf("%s.http: the grpc dialect takes RPC outcomes as ext steps (request_success or request_failed), not HTTP codes", where)
	case s.Local != nil:
		return fmt.Errorf("%s.local: the grpc dialect has no local-origin results; use ext steps (request_success or request_failed)", where)
	case s.ActiveHC != nil:
		return fmt.Errorf("%s.active_hc: the grpc dialect has no active health check uneject (gRFC A50)", where)
	}
	return nil
}

func checkTimes(field string, times *int) error {
	if times == nil {
		return nil
	}
	if *times < 1 || *times > maxTimes {
		return fmt.Errorf("%s: %d is out of range (allowed 1–%d)", field, *times, maxTimes)
	}
	return nil
}

func checkResult(where string, r *ResultStep, allowed []string) error {
	if r.Host == "" {
		return fmt.Errorf("%s.host: missing", where)
	}
	ok := false
	for _, a := range allowed {
		ok = ok || a == r.Result
	}
	if !ok {
		return fmt.Errorf("%s.result: %q is not one of %s", where, r.Result, strings.Join(allowed, ", "))
	}
	return checkTimes(where+".times", r.Times)
}

func times(p *int) int {
	if p == nil {
		return 1
	}
	return *p
}
