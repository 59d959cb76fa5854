package envoyconf

import (
	"errors"
	"fmt"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"outlierlab/engine"
)

// The gRPC dialect reads the same config.cluster.v3.OutlierDetection the
// way grpc-go's xDS client does (google.golang.org/grpc v1.85.0):
//
//   - the CDS resource is unmarshalled as a proto (proto.Unmarshal in
//     unmarshalClusterResource) and never run through protoc-gen-validate,
//     so Envoy's PGV rules (interval > 0s, enforcing_* ≤ 100, …) do not
//     apply;
//   - outlierConfigFromCluster (internal/xds/xdsclient/xdsresource/
//     unmarshal_cds.go) NACKs the cluster for an interval,
//     base_ejection_time or max_ejection_time that is not a valid Duration
//     (CheckValid) or is negative, and for max_ejection_percent,
//     enforcing_success_rate, failure_percentage_threshold or
//     enforcing_failure_percentage above 100; it reads nothing else of the
//     block but the success-rate and failure-percentage fields;
//   - the balancer's ParseConfig (internal/xds/balancer/outlierdetection/
//     balancer.go) checks the same again on the JSON it is given.
//
// Nothing else is refused: max_ejection_time below base_ejection_time,
// 0s durations, durations below a millisecond and any value of a field
// grpc-go does not read are accepted. ParseJSONGRPC and ApplyFieldsGRPC
// read a block so; GRPCNotes says what Envoy would have refused in it and
// what grpc-go does instead.

// grpcIgnoredFields are the outlier_detection fields grpc-go's xDS client
// does not read (outlierConfigFromCluster builds its config from interval,
// the ejection times, max_ejection_percent and the success-rate and
// failure-percentage fields only).
var grpcIgnoredFields = map[string]bool{
	"consecutive_5xx": true, "enforcing_consecutive_5xx": true,
	"consecutive_gateway_failure": true, "enforcing_consecutive_gateway_failure": true,
	"split_external_local_origin_errors": true, "consecutive_local_origin_failure": true,
	"enforcing_consecutive_local_origin_failure": true, "enforcing_local_origin_success_rate": true,
	"enforcing_failure_percentage_local_origin": true, "max_ejection_time_jitter": true,
	"successful_active_health_check_uneject_host": true, "always_eject_one_host": true,
	"detect_degraded_hosts": true, "monitors": true,
}

// grpcRefuses is the note on every refusal of the gRPC dialect.
const grpcRefuses = "grpc-go's xDS client NACKs the cluster for it (outlierConfigFromCluster)"

// ParseJSONGRPC reads a JSON (or YAML) outlier_detection object as
// grpc-go's xDS client reads the same proto: decoded as Envoy decodes it
// (protojson: unknown fields and wrong types are errors, since no proto
// could carry them), then checked by checkGRPC only; unset fields take the
// defaults, which are A50's and Envoy's alike for the fields grpc-go reads.
// A whole cluster or a DestinationRule is refused: grpc-go checks the rest
// of a Cluster by rules of its own, which outlierlab does not model.
func ParseJSONGRPC(data []byte) (engine.Config, error) {
	doc, err := yamlDocument(data)
	if err != nil {
		return engine.Config{}, err
	}
	members, isObject, err := objectMembers(doc)
	switch {
	case err != nil:
		return engine.Config{}, &FieldError{Reason: "the document is not valid JSON: " + err.Error(), cause: err}
	case !isObject && isNull(doc):
		return engine.DefaultConfig(), nil
	case !isObject:
		return engine.Config{}, &FieldError{Value: jsonKind(doc), Reason: "is not a mapping: the config must be an outlier_detection object",
			Allowed: "a mapping of outlier_detection fields"}
	}
	if kind := documentKind(members); kind != SourceOutlierDetection {
		return engine.Config{}, &FieldError{Reason: fmt.Sprintf("is %s, not an outlier_detection object: the gRPC dialect reads the block as grpc-go's outlierConfigFromCluster takes it from a Cluster, and does not model grpc-go's checks of the rest", sourceWords(kind)),
			Allowed: "a mapping of outlier_detection fields"}
	}
	return parseOutlierDetectionGRPC(members)
}

func sourceWords(s Source) string {
	if s == SourceDestinationRule {
		return "an Istio DestinationRule"
	}
	return "a whole Envoy cluster"
}

// parseOutlierDetectionGRPC is parseOutlierDetection with grpc-go's checks
// in place of Envoy's.
func parseOutlierDetectionGRPC(members []member) (engine.Config, error) {
	od, errs := decodeOutlierDetection(members)
	errs = append(errs, checkGRPC(od)...)
	if len(errs) > 0 {
		return engine.Config{}, joinFieldErrors(errs)
	}
	return toConfig(od), nil
}

// checkGRPC is outlierConfigFromCluster's validation (ParseConfig repeats
// it): each of the three durations, when set, must pass
// durationpb.CheckValid and be ≥ 0 once AsDuration; the four percentages,
// when set, must be ≤ 100. Unlike grpc-go, which returns the first
// failure, every one is reported.
func checkGRPC(od *clusterv3.OutlierDetection) []*FieldError {
	var errs []*FieldError
	t := fields()
	for _, f := range []struct {
		name string
		d    *durationpb.Duration
	}{{"interval", od.GetInterval()}, {"base_ejection_time", od.GetBaseEjectionTime()}, {"max_ejection_time", od.GetMaxEjectionTime()}} {
		if f.d == nil {
			continue
		}
		fe := &FieldError{Field: f.name, Value: formatDuration(f.d), Note: grpcRefuses}
		if err := f.d.CheckValid(); err != nil {
			fe.Reason, fe.Allowed, fe.cause = "is not a valid google.protobuf.Duration", "±315576000000s, seconds and nanos of one sign", err
		} else if d := f.d.AsDuration(); d < 0 {
			fe.Reason, fe.Allowed, fe.cause = "is negative", "≥ 0s", fmt.Errorf("outlier_detection.%s = %v; must be >= 0", f.name, d)
		} else {
			continue
		}
		errs = append(errs, fe)
	}
	for _, f := range []struct {
		name string
		v    *wrapperspb.UInt32Value
	}{{"max_ejection_percent", od.GetMaxEjectionPercent()}, {"enforcing_success_rate", od.GetEnforcingSuccessRate()},
		{"failure_percentage_threshold", od.GetFailurePercentageThreshold()}, {"enforcing_failure_percentage", od.GetEnforcingFailurePercentage()}} {
		if f.v != nil && f.v.GetValue() > 100 {
			errs = append(errs, &FieldError{Field: f.name, Value: protoValue(od, t.byName[f.name]), Reason: "is out of range", Allowed: "0–100", Note: grpcRefuses,
				cause: fmt.Errorf("outlier_detection.%s = %d; must be <= 100", f.name, f.v.GetValue())})
		}
	}
	return errs
}

// CheckEnvoy is Envoy's verdict on cfg as one cluster's outlier_detection
// block (ToProto writes every field): nil when Envoy loads it, else every
// refusal, as parsing the block would report it. The gRPC dialect accepts
// configs Envoy refuses; whatever runs a config under Envoy asks this
// first.
func CheckEnvoy(cfg engine.Config) error {
	od := ToProto(cfg)
	if err := checkOutlierDetection(od, true); err != nil {
		return err
	}
	return nil
}

// GRPCNotes says, for a config the gRPC dialect accepted, what Envoy would
// refuse in it: one FieldError per refusal (Envoy's reason), whose Note
// says what grpc-go does with the value instead. Empty when Envoy would
// load the config too.
func GRPCNotes(cfg engine.Config) []*FieldError {
	od := ToProto(cfg)
	fes := FieldErrors(checkOutlierDetection(od, false))
	// checkOutlierDetection makes the cross-field check only when all else
	// passed; a note wants it whatever else Envoy refuses.
	if fe := checkMaxEjectionTime(od); fe != nil {
		fes = append(fes, fe)
	}
	out := make([]*FieldError, 0, len(fes))
	for _, fe := range fes {
		c := *fe
		c.Note = grpcAccepts(fe, cfg)
		out = append(out, &c)
	}
	return out
}

// grpcAccepts is what grpc-go does with a value Envoy refuses (fe), in a
// config grpc-go accepted: each rule names the grpc-go function it rests
// on.
func grpcAccepts(fe *FieldError, cfg engine.Config) string {
	switch {
	case grpcIgnoredFields[fe.Field]:
		return "Envoy refuses the cluster; grpc-go accepts it: its xDS client does not read this field (outlierConfigFromCluster), so the value changes nothing under gRPC"
	case errors.Is(fe, errMaxBelowBase):
		return "Envoy refuses the cluster; grpc-go accepts it and ejects for at most base_ejection_time: intervalTimerAlgorithm caps base_ejection_time × the host's multiplier at max(base_ejection_time, max_ejection_time)"
	}
	const keeps = "grpc-go accepts it and keeps the nanoseconds (outlierConfigFromCluster reads the Duration with AsDuration)"
	switch {
	case fe.Allowed == "> 0s":
		switch fe.Field {
		case "interval":
			return "Envoy refuses the cluster; grpc-go accepts 0s (outlierConfigFromCluster asks only ≥ 0): intervalTimerAlgorithm re-arms its timer with afterFunc(0), so sweeps run back to back, each over the few calls that ended since the last"
		case "base_ejection_time":
			return "Envoy refuses the cluster; grpc-go accepts 0s (outlierConfigFromCluster asks only ≥ 0): every ejection lasts min(0 × multiplier, max(0, max_ejection_time)) = 0, so intervalTimerAlgorithm returns the host at the first sweep whose now() is after the ejecting sweep's start (on a real clock, that same sweep)"
		case "max_ejection_time":
			return "Envoy refuses the cluster; grpc-go accepts 0s (outlierConfigFromCluster asks only ≥ 0) and uses base_ejection_time instead: intervalTimerAlgorithm caps at max(base_ejection_time, max_ejection_time)"
		}
	case fe.Allowed == "≥ 0.001s":
		if fe.Field == "interval" {
			return fmt.Sprintf("the lab refuses it under Envoy; %s: its sweep timer runs every %s", keeps, formatDuration(msSubDuration(cfg.IntervalMs, cfg.IntervalSubMsNs)))
		}
		return "the lab refuses it under Envoy; " + keeps
	case strings.HasPrefix(fe.Allowed, "≤ ") && strings.HasSuffix(fe.Allowed, "s"):
		return "Envoy refuses the cluster; grpc-go accepts it (durationpb's CheckValid allows up to 315576000000s) and AsDuration reads it as the longest time.Duration, about 292 years"
	}
	return "Envoy refuses the cluster; grpc-go accepts it (outlierConfigFromCluster does not check it)"
}
