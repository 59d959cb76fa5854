// Package eventlog reads Envoy's outlier detection event log: the file
// named by cluster_manager.outlier_detection.event_log_path, one JSON
// line of envoy.data.cluster.v3.OutlierDetectionEvent per ejection and
// return (EventLoggerImpl::logEject and logUneject in
// source/common/upstream/outlier_detection_impl.cc, which write the proto
// with MessageUtil::getJsonStringFromMessageOrError and
// always_print_primitive_fields on).
//
// Lines are decoded with go-control-plane's own types (protojson). What
// the reader cannot take as Envoy wrote it is counted and shown with its
// line number, never guessed: a line that is not an event, an action or
// ejection type the proto does not name, a line of another cluster.
package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	datav3 "github.com/envoyproxy/go-control-plane/envoy/data/cluster/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"outlierlab/engine"
)

// Action is what Envoy did to the host.
type Action string

const (
	// Eject is an EJECT line: an ejection (enforced), or a detection the
	// enforcing_* draw let pass (enforced false), or a degradation.
	Eject Action = "eject"
	// Uneject is an UNEJECT line: the host came back (at an interval tick,
	// or at a passing active health check), or stopped being degraded.
	Uneject Action = "uneject"
)

// Event is one line of the event log, as the lab reads it.
type Event struct {
	Line    int       `json:"line"`
	Time    time.Time `json:"time"`
	Cluster string    `json:"cluster"`
	// Host is upstream_url without a "tcp://" scheme: Envoy writes
	// host->address()->asString() ("10.0.0.5:8080"), the proto's comment
	// shows a URL, and access logs name the host as %UPSTREAM_HOST% does.
	Host   string `json:"host"`
	Action Action `json:"action"`
	// Detector is the ejection type of an EJECT. An UNEJECT line never
	// sets it (logUneject leaves type at 0, so Envoy prints
	// CONSECUTIVE_5XX whatever ejected the host): it is "" here.
	Detector string `json:"detector,omitempty"`
	// Enforced: the host was ejected. false is a detection the enforcing_*
	// draw did not enforce (ejectHost logs it with enforced false).
	Enforced bool `json:"enforced"`
	// NumEjections is the host's lifetime ejection count as
	// setCommonEventParams reads it: after the increment for an enforced
	// EJECT, unchanged for an unenforced one; reset when the host leaves
	// the cluster and is added again.
	NumEjections uint32 `json:"num_ejections"`
	// SecsSinceLastAction, nil when Envoy wrote none: for an EJECT, whole
	// seconds since the host's last return (none if it never returned);
	// for an UNEJECT, since its last ejection.
	SecsSinceLastAction *uint64 `json:"secs_since_last_action,omitempty"`
	// SuccessRate holds eject_success_rate_event (success-rate types) or
	// eject_failure_percentage_event (failure-percentage types, host rate
	// only); Envoy stores the doubles as uint32, truncated.
	SuccessRate *SuccessRate `json:"success_rate,omitempty"`
}

// SuccessRate is the detector's numbers as the event carries them (0–100).
type SuccessRate struct {
	Host uint32 `json:"host"`
	// ClusterAverage and Threshold are set for success-rate ejections only.
	ClusterAverage *uint32 `json:"cluster_average,omitempty"`
	Threshold      *uint32 `json:"threshold,omitempty"`
}

// Problem is one line the reader set aside, or read with a warning.
type Problem struct {
	Line   int    `json:"line"`
	Kind   string `json:"kind"` // one of the Kind* constants
	Reason string `json:"reason"`
	Text   string `json:"text,omitempty"`
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Reason) }

// Kinds of Problem.
const (
	// KindBadLine: not a JSON object, or not an OutlierDetectionEvent.
	KindBadLine = "bad_line"
	// KindUnknownAction: action or type is not one the proto names.
	KindUnknownAction = "unknown_action"
	// KindUnknownField: a field the proto lacks (a newer Envoy?); the line
	// is read without it.
	KindUnknownField = "unknown_field"
	// KindOtherCluster: an event of another cluster than the one chosen.
	KindOtherCluster = "other_cluster"
)

// Log is a read event log.
type Log struct {
	// Cluster is the cluster whose events were kept.
	Cluster string  `json:"cluster"`
	Events  []Event `json:"events"`
	Lines   int     `json:"lines"`
	Counts  Counts  `json:"counts"`
	// Problems holds the first MaxProblems lines set aside or warned of.
	Problems []Problem `json:"problems,omitempty"`
}

// Counts counts each kind of Problem.
type Counts struct {
	BadLines       int `json:"bad_lines"`
	UnknownActions int `json:"unknown_actions"`
	UnknownFields  int `json:"unknown_fields"`
	OtherCluster   int `json:"other_cluster"`
}

// Skipped is the number of lines not kept (unknown fields are kept).
func (c Counts) Skipped() int { return c.BadLines + c.UnknownActions + c.OtherCluster }

// Limits of Parse.
const (
	MaxProblems  = 20
	MaxLineBytes = 64 << 10
	MaxEvents    = 1_000_000
)

// ErrNoEvents is returned (wrapped) when no line is a usable event of the
// cluster.
var ErrNoEvents = errors.New("no usable event")

// Parse reads an event log. cluster chooses the events kept; "" keeps the
// cluster most lines name (the first such in the file on a tie), and the
// others are counted as other_cluster. A line that cannot be read is
// counted and the reading goes on; a read error, a line over MaxLineBytes,
// more than MaxEvents events, or no usable event at all stop it.
func Parse(r io.Reader, cluster string) (*Log, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 16<<10), MaxLineBytes)
	log := &Log{Events: []Event{}}
	var all []Event
	n := 0
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		log.Lines++
		e, warn, p := parseLine(text)
		if p != nil {
			p.Line = n
			log.add(*p)
			continue
		}
		if warn != nil {
			warn.Line = n
			log.add(*warn)
		}
		if len(all) == MaxEvents {
			return nil, fmt.Errorf("line %d: more than %d events; read a shorter stretch of the log", n, MaxEvents)
		}
		e.Line = n
		all = append(all, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n+1, MaxLineBytes)
		}
		return nil, err
	}
	log.Cluster = cluster
	if cluster == "" {
		log.Cluster = mostNamed(all)
	}
	for _, e := range all {
		if e.Cluster != log.Cluster {
			log.add(Problem{Line: e.Line, Kind: KindOtherCluster, Reason: fmt.Sprintf("cluster %q, not %q", e.Cluster, log.Cluster)})
			continue
		}
		log.Events = append(log.Events, e)
	}
	sort.SliceStable(log.Events, func(i, j int) bool { return log.Events[i].Time.Before(log.Events[j].Time) })
	sort.SliceStable(log.Problems, func(i, j int) bool { return log.Problems[i].Line < log.Problems[j].Line })
	if len(log.Events) == 0 {
		what := fmt.Sprintf("%d lines", log.Lines)
		if cluster != "" {
			what += fmt.Sprintf(", none of cluster %q", cluster)
		}
		return log, fmt.Errorf("%w in the event log (%s; %d bad, %d with an unknown action, %d of another cluster)",
			ErrNoEvents, what, log.Counts.BadLines, log.Counts.UnknownActions, log.Counts.OtherCluster)
	}
	return log, nil
}

func (l *Log) add(p Problem) {
	switch p.Kind {
	case KindBadLine:
		l.Counts.BadLines++
	case KindUnknownAction:
		l.Counts.UnknownActions++
	case KindUnknownField:
		l.Counts.UnknownFields++
	case KindOtherCluster:
		l.Counts.OtherCluster++
	}
	if len(l.Problems) < MaxProblems {
		l.Problems = append(l.Problems, p)
	}
}

// mostNamed is the cluster most events name, the earliest on a tie.
func mostNamed(events []Event) string {
	count := map[string]int{}
	best := ""
	for _, e := range events {
		count[e.Cluster]++
		if count[e.Cluster] > count[best] || best == "" {
			best = e.Cluster
		}
	}
	return best
}

// parseLine reads one line: the event, or a warning with it, or the
// problem that sets the line aside.
func parseLine(text []byte) (Event, *Problem, *Problem) {
	bad := func(kind, format string, a ...any) (Event, *Problem, *Problem) {
		return Event{}, nil, &Problem{Kind: kind, Reason: fmt.Sprintf(format, a...), Text: clip(string(text), 200)}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(text, &raw); err != nil {
		return bad(KindBadLine, "not a JSON object: %v", err)
	}
	// protojson takes an unknown enum name as an error, or (discarding
	// unknowns) as the zero value: EJECT and CONSECUTIVE_5XX. Either
	// would be a guess, so action and type are checked first, by name or
	// number, against the proto's own enum maps; so is their presence
	// (Envoy always prints both).
	for _, f := range []struct {
		key   string
		names map[string]int32
		nums  map[int32]string
	}{
		{"action", datav3.Action_value, datav3.Action_name},
		{"type", datav3.OutlierEjectionType_value, datav3.OutlierEjectionType_name},
	} {
		v, ok := raw[f.key]
		if !ok {
			if f.key == "type" && actionIs(raw, "UNEJECT") {
				continue // an UNEJECT's type means nothing
			}
			return bad(KindBadLine, "no %q field (Envoy writes it on every line)", f.key)
		}
		if !knownEnum(v, f.names, f.nums) {
			return bad(KindUnknownAction, "%s %s is not one of %s", f.key, compact(v), enumNames(f.nums))
		}
	}
	for _, key := range []string{"timestamp", "cluster_name", "upstream_url"} {
		if _, ok := raw[key]; !ok {
			if _, ok := raw[jsonName(key)]; !ok {
				return bad(KindBadLine, "no %q field (Envoy writes it on every line)", key)
			}
		}
	}
	var pe datav3.OutlierDetectionEvent
	var warn *Problem
	if err := protojson.Unmarshal(text, &pe); err != nil {
		if !strings.Contains(err.Error(), "unknown field") {
			return bad(KindBadLine, "not an envoy.data.cluster.v3.OutlierDetectionEvent: %s", protoErr(err))
		}
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(text, &pe); err != nil {
			return bad(KindBadLine, "not an envoy.data.cluster.v3.OutlierDetectionEvent: %s", protoErr(err))
		}
		warn = &Problem{Kind: KindUnknownField, Reason: protoErr(err) + " (read without it)"}
	}
	// The proto's validation asks every event for one of its sub-events,
	// which Envoy's own UNEJECT lines never carry (logUneject sets none):
	// only an EJECT is held to it.
	if pe.GetAction() == datav3.Action_EJECT {
		if err := pe.Validate(); err != nil {
			return bad(KindBadLine, "invalid event: %v", err)
		}
	} else if pe.GetClusterName() == "" || pe.GetUpstreamUrl() == "" || pe.GetTimestamp() == nil {
		return bad(KindBadLine, "invalid event: cluster_name, upstream_url and timestamp are required")
	}
	e, err := FromProto(&pe)
	if err != nil {
		return bad(KindBadLine, "%v", err)
	}
	return e, warn, nil
}

// FromProto is the lab's view of one event.
func FromProto(pe *datav3.OutlierDetectionEvent) (Event, error) {
	if pe.GetTimestamp() == nil || pe.GetUpstreamUrl() == "" {
		return Event{}, errors.New("no timestamp or upstream_url")
	}
	e := Event{
		Time:         pe.GetTimestamp().AsTime().UTC(),
		Cluster:      pe.GetClusterName(),
		Host:         strings.TrimPrefix(pe.GetUpstreamUrl(), "tcp://"),
		NumEjections: pe.GetNumEjections(),
		Enforced:     pe.GetEnforced(),
	}
	if s := pe.GetSecsSinceLastAction(); s != nil {
		v := s.GetValue()
		e.SecsSinceLastAction = &v
	}
	if pe.GetAction() == datav3.Action_UNEJECT {
		e.Action = Uneject
		return e, nil
	}
	e.Action = Eject
	t, ok := EjectionType(pe.GetType())
	if !ok {
		return Event{}, fmt.Errorf("type %s is not an ejection type the lab models", pe.GetType())
	}
	e.Detector = t
	if sr := pe.GetEjectSuccessRateEvent(); sr != nil {
		avg, thr := sr.GetClusterAverageSuccessRate(), sr.GetClusterSuccessRateEjectionThreshold()
		e.SuccessRate = &SuccessRate{Host: sr.GetHostSuccessRate(), ClusterAverage: &avg, Threshold: &thr}
	}
	if fp := pe.GetEjectFailurePercentageEvent(); fp != nil {
		e.SuccessRate = &SuccessRate{Host: fp.GetHostSuccessRate()}
	}
	return e, nil
}

// EjectionType is the lab's name of Envoy's OutlierEjectionType
// (engine.EjectionType.String: "consecutive_5xx", …, "degraded").
func EjectionType(t datav3.OutlierEjectionType) (string, bool) {
	name, ok := datav3.OutlierEjectionType_name[int32(t)]
	if !ok {
		return "", false
	}
	lab, ok := engine.ParseEjectionType(strings.ToLower(name))
	if !ok {
		return "", false
	}
	return lab.String(), true
}

// ProtoType is the inverse of EjectionType.
func ProtoType(detector string) (datav3.OutlierEjectionType, bool) {
	v, ok := datav3.OutlierEjectionType_value[strings.ToUpper(detector)]
	return datav3.OutlierEjectionType(v), ok
}

func actionIs(raw map[string]json.RawMessage, name string) bool {
	var s string
	if json.Unmarshal(raw["action"], &s) == nil {
		return s == name
	}
	var n int32
	return json.Unmarshal(raw["action"], &n) == nil && datav3.Action_name[n] == name
}

// knownEnum: protojson takes an enum as its name or its number.
func knownEnum(v json.RawMessage, names map[string]int32, nums map[int32]string) bool {
	var s string
	if json.Unmarshal(v, &s) == nil {
		_, ok := names[s]
		return ok
	}
	var n int32
	if json.Unmarshal(v, &n) == nil {
		_, ok := nums[n]
		return ok
	}
	return false
}

func enumNames(nums map[int32]string) string {
	keys := make([]int32, 0, len(nums))
	for k := range nums {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = nums[k]
	}
	return strings.Join(names, ", ")
}

// jsonName is protojson's lowerCamelCase name of a proto field name.
func jsonName(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// protoErr drops protojson's "proto: " prefix and its unstable spacing.
func protoErr(err error) string {
	s := strings.TrimPrefix(err.Error(), "proto:")
	return strings.Join(strings.Fields(s), " ")
}

func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return clip(b.String(), 60)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
