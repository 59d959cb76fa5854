package envoyconf

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/protoc-gen-validate/validate"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"outlierlab/engine"
)

// Kind is the JSON/YAML shape of a field's value.
type Kind int

const (
	// Uint32 is a google.protobuf.UInt32Value: a whole number, written bare (34).
	Uint32 Kind = iota + 1
	// Duration is a google.protobuf.Duration: seconds with an "s" suffix ("30s", "1.5s").
	Duration
	// Bool is a bool or google.protobuf.BoolValue: true or false.
	Bool
)

func (k Kind) String() string {
	switch k {
	case Uint32:
		return "uint32"
	case Duration:
		return "duration"
	case Bool:
		return "bool"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Field describes one OutlierDetection field for UIs (sliders, forms) and
// for `outlierlab run -set`. Everything but Help is derived from the proto
// descriptor, its protoc-gen-validate rules and engine.DefaultConfig().
type Field struct {
	Name    string // snake_case, as written in Envoy YAML
	Kind    Kind
	Default string // Envoy's default in the form a user would type it: "5", "10s", "true"
	// Min and Max bound a Uint32 field: Max is 100 for the percentages that
	// Envoy's PGV rules limit with lte 100, else 4294967295. Both are 0 for
	// Duration and Bool fields (see Allowed).
	Min, Max uint64
	// Allowed is the accepted range in words, e.g. "0–100",
	// "0.001s–9223372036s", "true or false".
	Allowed string
	// Unit is what a number counts: "s" for a Duration, "%" for a field
	// limited to 100, else what the field counts ("errors", "req",
	// "hosts"; "" for success_rate_stdev_factor, a factor × 1000).
	Unit string
	// Positive is set for a Duration that must be above 0s (PGV gt: 0s):
	// its least value is 0.001s (see checkDurations).
	Positive bool
	Help     string
}

// MaxDurationSeconds is Envoy's limit for durations it converts to milliseconds
// (DurationUtil::durationToMilliseconds → validateDurationAsMilliseconds):
// seconds must fit int64 nanoseconds, INT64_MAX / 1e9 = 9223372036.
const MaxDurationSeconds = math.MaxInt64 / 1_000_000_000

// help and units are the hand-written parts of the metadata: the proto's
// comments are not in the Go descriptor. fields_test checks help covers
// every field.
var help = map[string]string{
	"consecutive_5xx":                             "Consecutive 5xx responses (or, unsplit, local-origin failures) that eject a host. 0 disables the detector.",
	"interval":                                    "Time between ejection sweeps; success-rate and failure-percentage run, and hosts are unejected, only at sweeps.",
	"base_ejection_time":                          "Ejection time unit: a host is ejected for base_ejection_time × its backoff (+1 at each ejection, −1 at each sweep it spends back in service), capped by max_ejection_time.",
	"max_ejection_percent":                        "Most hosts (as % of all hosts in the cluster) that may be ejected at once.",
	"enforcing_consecutive_5xx":                   "% chance that a consecutive-5xx detection actually ejects.",
	"enforcing_success_rate":                      "% chance that a success-rate detection actually ejects.",
	"success_rate_minimum_hosts":                  "Hosts that need enough request volume in an interval before success-rate detection runs at all.",
	"success_rate_request_volume":                 "Requests a host needs in one interval to take part in success-rate detection.",
	"success_rate_stdev_factor":                   "k × 1000 in the success-rate threshold mean − k·stdev (1900 means 1.9).",
	"consecutive_gateway_failure":                 "Consecutive 502/503/504 responses that detect a gateway-failure outlier. 0 disables the detector.",
	"enforcing_consecutive_gateway_failure":       "% chance that a consecutive-gateway-failure detection actually ejects (default 0: detect only).",
	"split_external_local_origin_errors":          "Count locally originated errors (connect failures, timeouts) separately from upstream responses.",
	"consecutive_local_origin_failure":            "Consecutive local-origin failures that eject a host (split mode only). 0 disables the detector.",
	"enforcing_consecutive_local_origin_failure":  "% chance that a consecutive-local-origin-failure detection actually ejects (split mode only).",
	"enforcing_local_origin_success_rate":         "% chance that a local-origin success-rate detection actually ejects (split mode only).",
	"failure_percentage_threshold":                "Failure % at or above which a host with enough volume is a failure-percentage outlier.",
	"enforcing_failure_percentage":                "% chance that a failure-percentage detection actually ejects (default 0: detect only).",
	"enforcing_failure_percentage_local_origin":   "% chance that a local-origin failure-percentage detection actually ejects (default 0: detect only).",
	"failure_percentage_minimum_hosts":            "Hosts with enough request volume (failure_percentage_request_volume) needed before failure-percentage detection runs.",
	"failure_percentage_request_volume":           "Requests a host needs in one interval to take part in failure-percentage detection.",
	"max_ejection_time":                           "Cap on base_ejection_time × backoff. Default max(300s, base_ejection_time); must not be below base_ejection_time.",
	"max_ejection_time_jitter":                    "Upper bound of a random extra ejection time, drawn at each ejection (may push past max_ejection_time).",
	"successful_active_health_check_uneject_host": "A passing active health check unejects an ejected host (only with an active health checker).",
	"always_eject_one_host":                       "Allow an ejection whenever no host is ejected, whatever max_ejection_percent says.",
	"detect_degraded_hosts":                       "Mark hosts that answer with x-envoy-degraded as degraded (deprioritised, not ejected).",
}

// units is what the whole-number fields that are not percentages count
// (the percentages and durations get theirs from their rules).
var units = map[string]string{
	"consecutive_5xx":                   "errors",
	"consecutive_gateway_failure":       "errors",
	"consecutive_local_origin_failure":  "errors",
	"success_rate_request_volume":       "req",
	"failure_percentage_request_volume": "req",
	"success_rate_minimum_hosts":        "hosts",
	"failure_percentage_minimum_hosts":  "hosts",
}

// fieldInfo is the package's view of one proto field.
type fieldInfo struct {
	Field
	desc   protoreflect.FieldDescriptor
	goName string // Go struct field name, which is what PGV's Field() reports
}

type fieldTable struct {
	list     []*fieldInfo
	byName   map[string]*fieldInfo // snake_case and lowerCamel JSON names
	byGoName map[string]*fieldInfo
	names    []string // snake_case names, proto order
	// clusterKeys holds the snake_case and JSON names of every field of
	// config.cluster.v3.Cluster, to recognise a pasted cluster.
	clusterKeys map[string]bool
	err         error
}

var (
	tableOnce sync.Once
	table     fieldTable
)

func fields() *fieldTable {
	tableOnce.Do(func() { table = buildFieldTable() })
	if table.err != nil {
		// The descriptor is compiled into the binary; failing here means the
		// proto changed shape under us, which the tests catch.
		panic("envoyconf: " + table.err.Error())
	}
	return &table
}

func buildFieldTable() fieldTable {
	t := fieldTable{
		byName:      map[string]*fieldInfo{},
		byGoName:    map[string]*fieldInfo{},
		clusterKeys: map[string]bool{},
	}
	goNames := protoGoNames()
	defaults, err := renderedFields(engine.DefaultConfig())
	if err != nil {
		t.err = err
		return t
	}
	fds := (&clusterv3.OutlierDetection{}).ProtoReflect().Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		name := string(fd.Name())
		if name == "monitors" {
			// [#not-implemented-hide:] in Envoy: accepted, does nothing.
			continue
		}
		fi, err := newFieldInfo(fd, goNames[name])
		if err != nil {
			t.err = err
			return t
		}
		fi.Default = defaults[name]
		t.list = append(t.list, fi)
		t.names = append(t.names, name)
		t.byName[name] = fi
		t.byName[fd.JSONName()] = fi
		t.byGoName[fi.goName] = fi
	}
	cd := (&clusterv3.Cluster{}).ProtoReflect().Descriptor().Fields()
	for i := range cd.Len() {
		t.clusterKeys[string(cd.Get(i).Name())] = true
		t.clusterKeys[cd.Get(i).JSONName()] = true
	}
	return t
}

// protoGoNames maps proto field names to Go field names through the
// generated struct tags, exactly as protoc-gen-go wrote them
// ("Consecutive_5Xx").
func protoGoNames() map[string]string {
	goNames := map[string]string{}
	rt := reflect.TypeFor[clusterv3.OutlierDetection]()
	for i := range rt.NumField() {
		sf := rt.Field(i)
		for part := range strings.SplitSeq(sf.Tag.Get("protobuf"), ",") {
			if name, ok := strings.CutPrefix(part, "name="); ok {
				goNames[name] = sf.Name
			}
		}
	}
	return goNames
}

// newFieldInfo reads one field's kind, range and unit from its descriptor
// and its protoc-gen-validate rules.
func newFieldInfo(fd protoreflect.FieldDescriptor, goName string) (*fieldInfo, error) {
	name := string(fd.Name())
	fi := &fieldInfo{desc: fd, goName: goName}
	fi.Name = name
	fi.Help = help[name]
	fi.Kind = kindOf(fd)
	if fi.Kind == 0 || fi.goName == "" {
		return nil, fmt.Errorf("OutlierDetection field %s has an unexpected type %v", name, fd.Kind())
	}
	rules, _ := proto.GetExtension(fd.Options(), validate.E_Rules).(*validate.FieldRules)
	switch fi.Kind {
	case Uint32:
		fi.Min, fi.Max = 0, math.MaxUint32
		if r := rules.GetUint32(); r != nil {
			if r.Lte != nil {
				fi.Max = uint64(r.GetLte())
			}
			if r.Gte != nil {
				fi.Min = uint64(r.GetGte())
			}
		}
		fi.Allowed = fmt.Sprintf("%d–%d", fi.Min, fi.Max)
		fi.Unit = units[name]
		if fi.Max == 100 {
			fi.Unit = "%"
		}
	case Duration:
		fi.Unit = "s"
		if gt := rules.GetDuration().GetGt(); gt != nil && gt.AsDuration() == 0 {
			fi.Positive = true
			// > 0s from PGV, and whole milliseconds after Envoy's
			// truncation (see checkDurations).
			fi.Allowed = fmt.Sprintf("0.001s–%ds", MaxDurationSeconds)
		} else {
			fi.Allowed = fmt.Sprintf("0s–%ds", MaxDurationSeconds)
		}
		if name == "max_ejection_time" {
			fi.Allowed += ", ≥ base_ejection_time"
		}
	case Bool:
		fi.Allowed = "true or false"
	}
	return fi, nil
}

// kindOf is the JSON shape of a field's value (0 for one outlierlab does
// not know).
func kindOf(fd protoreflect.FieldDescriptor) Kind {
	if fd.Kind() == protoreflect.BoolKind {
		return Bool
	}
	if fd.Kind() != protoreflect.MessageKind {
		return 0
	}
	switch fd.Message().FullName() {
	case "google.protobuf.UInt32Value":
		return Uint32
	case "google.protobuf.Duration":
		return Duration
	case "google.protobuf.BoolValue":
		return Bool
	}
	return 0
}

// Fields lists every OutlierDetection field outlierlab understands, in the
// proto's field order (monitors, which Envoy does not implement, is left out).
func Fields() []Field {
	t := fields()
	out := make([]Field, len(t.list))
	for i, fi := range t.list {
		out[i] = fi.Field
	}
	return out
}

// FieldNames returns the snake_case field names in proto order.
func FieldNames() []string { return append([]string(nil), fields().names...) }

// LookupField returns the metadata of a field by its snake_case (or
// lowerCamel JSON) name.
func LookupField(name string) (Field, bool) {
	fi, ok := fields().byName[name]
	if !ok {
		return Field{}, false
	}
	return fi.Field, true
}

// FieldValues is every field's value in cfg, in the form a user types it
// and ApplyFields reads it ("5", "10s", "1.5s", "true"), by snake_case name.
func FieldValues(cfg engine.Config) map[string]string {
	all, err := renderedFields(cfg)
	if err != nil {
		// ToProto only builds valid messages, which protojson renders.
		panic("envoyconf: " + err.Error())
	}
	t := fields()
	out := make(map[string]string, len(t.names))
	for _, name := range t.names {
		out[name] = all[name]
	}
	return out
}

// renderedFields renders cfg the way protojson writes it and returns each
// field's value in user form: "5", "10s", "1.5s", "true".
func renderedFields(cfg engine.Config) (map[string]string, error) {
	members, err := protoJSONMembers(ToProto(cfg))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(members))
	for _, m := range members {
		out[m.key] = userForm(m.value)
	}
	return out, nil
}

// protoJSONMembers marshals msg with protojson (snake_case names, every
// field written, proto field order) and returns its top-level members.
func protoJSONMembers(msg proto.Message) ([]member, error) {
	data, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(msg)
	if err != nil {
		return nil, err
	}
	members, isObject, err := objectMembers(data)
	if err != nil || !isObject {
		return nil, fmt.Errorf("protojson output is not an object: %v", err)
	}
	return members, nil
}

// userForm turns a protojson value into what a user types: strings lose
// their quotes and durations lose protojson's trailing zeros ("1.500s" → "1.5s").
func userForm(raw []byte) string {
	s := string(raw)
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
		if rest, ok := strings.CutSuffix(s, "s"); ok && strings.Contains(rest, ".") {
			rest = strings.TrimRight(rest, "0")
			rest = strings.TrimSuffix(rest, ".")
			s = rest + "s"
		}
	}
	return s
}
