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
	Help    string
}

// Envoy's limit for durations it converts to milliseconds
// (DurationUtil::durationToMilliseconds → validateDurationAsMilliseconds):
// seconds must fit int64 nanoseconds, INT64_MAX / 1e9 = 9223372036.
const maxDurationSeconds = math.MaxInt64 / 1_000_000_000

// help is the one hand-written part of the metadata: the proto's comments
// are not in the Go descriptor. fields_test checks it covers every field.
var help = map[string]string{
	"consecutive_5xx":                             "Consecutive 5xx responses (or, unsplit, local-origin failures) that eject a host. 0 disables the detector.",
	"interval":                                    "Time between ejection sweeps; success-rate and failure-percentage run, and hosts are unejected, only at sweeps.",
	"base_ejection_time":                          "Ejection time unit: a host is ejected for base_ejection_time × its ejection backoff, capped by max_ejection_time.",
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

// fieldInfo is the package's view of one proto field.
type fieldInfo struct {
	Field
	desc   protoreflect.FieldDescriptor
	goName string // Go struct field name, which is what PGV's Field() reports
	// gtZero is set for durations whose PGV rule is gt: 0s.
	gtZero bool
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
	// Map proto field names to Go field names through the generated struct
	// tags, exactly as protoc-gen-go wrote them ("Consecutive_5Xx").
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
	defaults, err := renderedFields(engine.DefaultConfig())
	if err != nil {
		t.err = err
		return t
	}

	md := (&clusterv3.OutlierDetection{}).ProtoReflect().Descriptor()
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		name := string(fd.Name())
		if name == "monitors" {
			// [#not-implemented-hide:] in Envoy: accepted, does nothing.
			continue
		}
		fi := &fieldInfo{desc: fd, goName: goNames[name]}
		fi.Name = name
		fi.Help = help[name]
		switch {
		case fd.Kind() == protoreflect.BoolKind:
			fi.Kind = Bool
		case fd.Kind() == protoreflect.MessageKind:
			switch fd.Message().FullName() {
			case "google.protobuf.UInt32Value":
				fi.Kind = Uint32
			case "google.protobuf.Duration":
				fi.Kind = Duration
			case "google.protobuf.BoolValue":
				fi.Kind = Bool
			}
		}
		if fi.Kind == 0 || fi.goName == "" {
			t.err = fmt.Errorf("OutlierDetection field %s has an unexpected type %v", name, fd.Kind())
			return t
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
		case Duration:
			if gt := rules.GetDuration().GetGt(); gt != nil && gt.AsDuration() == 0 {
				fi.gtZero = true
				// > 0s from PGV, and whole milliseconds after Envoy's
				// truncation (see checkDurations).
				fi.Allowed = fmt.Sprintf("0.001s–%ds", maxDurationSeconds)
			} else {
				fi.Allowed = fmt.Sprintf("0s–%ds", maxDurationSeconds)
			}
			if name == "max_ejection_time" {
				fi.Allowed += ", ≥ base_ejection_time"
			}
		case Bool:
			fi.Allowed = "true or false"
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
