package envoyconf

import "errors"

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

// GRPCVerdict says what grpc-go's xDS client would do with a value Envoy
// refuses, as outlierConfigFromCluster (unmarshal_cds.go) checks it: the
// three durations must be valid and ≥ 0, max_ejection_percent,
// enforcing_success_rate, failure_percentage_threshold and
// enforcing_failure_percentage ≤ 100, and nothing else is checked or
// read. The lab checks every config as Envoy does first, in either
// dialect (one cluster's config, shown under both detectors), so this is
// said, never run. It returns "" when there is nothing to add.
func GRPCVerdict(fe *FieldError) string {
	switch {
	case fe.Field == "" || fe.Reason == "" || fe.Field == "outlier_detection":
		return ""
	case grpcIgnoredFields[fe.Field]:
		return "grpc-go's xDS client ignores this field and would accept the config; the lab checks it as Envoy does first"
	case errors.Is(fe, errMaxBelowBase):
		return "grpc-go would accept it and use base_ejection_time instead (max(base, max_ejection_time)); the lab checks it as Envoy does first"
	}
	switch fe.Field {
	case "interval", "base_ejection_time", "max_ejection_time":
		switch {
		case fe.Allowed == "> 0s":
			return "grpc-go would accept 0s (it asks only ≥ 0); the lab checks it as Envoy does first"
		case fe.Allowed == "≥ 0.001s":
			return "grpc-go would accept it and keep the nanoseconds; the lab checks it as Envoy does first"
		}
		return "grpc-go refuses it too"
	case "max_ejection_percent", "enforcing_success_rate", "failure_percentage_threshold", "enforcing_failure_percentage":
		return "grpc-go refuses it too (≤ 100)"
	}
	return ""
}

// WithGRPCVerdicts returns err with GRPCVerdict's note on each FieldError
// in it (copies; err itself is not changed).
func WithGRPCVerdicts(err error) error {
	fes := FieldErrors(err)
	if len(fes) == 0 {
		return err
	}
	out := make([]*FieldError, len(fes))
	for i, fe := range fes {
		c := *fe
		if c.Note == "" {
			c.Note = GRPCVerdict(fe)
		}
		out[i] = &c
	}
	return joinFieldErrors(out)
}
