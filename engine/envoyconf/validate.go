package envoyconf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"outlierlab/engine"
)

// errMaxBelowBase is Envoy's own wording for the check in
// DetectorImpl::create, kept as the cause of our FieldError.
var errMaxBelowBase = errors.New("outlier detector's max_ejection_time cannot be smaller than base_ejection_time")

// checkOutlierDetection runs, in Envoy's order, the protoc-gen-validate rules (checked
// when the cluster config is loaded) and then the checks Envoy makes in C++
// when it builds the detector. All failures are reported, each field-named.
// crossField enables the max_ejection_time ≥ base_ejection_time check.
func checkOutlierDetection(od *clusterv3.OutlierDetection, crossField bool) error {
	var errs []*FieldError
	failed := map[string]bool{}
	if err := od.ValidateAll(); err != nil {
		all := []error{err}
		if multi, ok := err.(interface{ AllErrors() []error }); ok {
			all = multi.AllErrors()
		}
		for _, e := range all {
			fe := pgvFieldError(od, e)
			failed[fe.Field] = true
			errs = append(errs, fe)
		}
	}
	errs = append(errs, checkDurations(od, failed)...)
	if len(errs) == 0 && crossField {
		if fe := checkMaxEjectionTime(od); fe != nil {
			errs = append(errs, fe)
		}
	}
	return joinFieldErrors(errs)
}

// pgvFieldError turns a generated OutlierDetectionValidationError (Go field
// name, English reason) into a FieldError with the snake_case name, the
// value and the allowed range taken from the same PGV rule.
func pgvFieldError(od *clusterv3.OutlierDetection, err error) *FieldError {
	var ve clusterv3.OutlierDetectionValidationError
	if !errors.As(err, &ve) {
		return &FieldError{Reason: "outlier_detection is not valid: " + err.Error(), cause: err}
	}
	goName, _, _ := strings.Cut(ve.Field(), "[") // "Monitors[0]"
	fi := fields().byGoName[goName]
	if fi == nil {
		name := strings.ToLower(ve.Field())
		return &FieldError{Field: name, Reason: strings.TrimPrefix(ve.Reason(), "value "), cause: err}
	}
	fe := &FieldError{Field: fi.Name, Value: protoValue(od, fi), cause: err}
	switch {
	case ve.Reason() == "value is not a valid duration":
		fe.Reason = "is not a valid duration"
		fe.Allowed = fi.Allowed
	case fi.Kind == Uint32:
		fe.Reason = "is out of range"
		fe.Allowed = fi.Allowed
	case fi.Positive:
		fe.Reason = "is out of range"
		fe.Allowed = "> 0s"
	default:
		fe.Reason = strings.TrimPrefix(ve.Reason(), "value ")
	}
	return fe
}

// checkDurations repeats what DurationUtil::durationToMilliseconds checks
// when DetectorConfig reads each duration (PROTOBUF_GET_MS_OR_DEFAULT):
// negative durations ("Expected positive duration") and more seconds than
// int64 nanoseconds hold ("Duration out-of-range") make Envoy refuse the
// cluster, even for max_ejection_time_jitter, which has no PGV rule.
//
// It also refuses, unlike Envoy, a positive interval, base_ejection_time or
// max_ejection_time below 1 ms. PGV only asks for > 0s, so Envoy accepts
// "0.0005s" and truncates it to 0 ms: a sweep timer re-armed every 0 ms (a
// busy loop) or a 0 ms ejection. outlierlab cannot represent that value
// (engine.Config holds whole ms, and "0s" is invalid), so it says so.
func checkDurations(od *clusterv3.OutlierDetection, failed map[string]bool) []*FieldError {
	var errs []*FieldError
	msg := od.ProtoReflect()
	for _, fi := range fields().list {
		if fi.Kind != Duration || failed[fi.Name] || !msg.Has(fi.desc) {
			continue
		}
		d, _ := msg.Get(fi.desc).Message().Interface().(*durationpb.Duration)
		s, n := d.GetSeconds(), d.GetNanos()
		switch {
		case s < 0 || n < 0:
			errs = append(errs, &FieldError{Field: fi.Name, Value: formatDuration(d), Reason: "is out of range", Allowed: "≥ 0s",
				//lint:ignore ST1005 Envoy's own words (protoc-gen-validate's), quoted
				cause: fmt.Errorf("Expected positive duration: seconds: %d nanos: %d", s, n)})
		case s > MaxDurationSeconds || n > 999_999_999:
			errs = append(errs, &FieldError{Field: fi.Name, Value: formatDuration(d), Reason: "is out of range", Allowed: fmt.Sprintf("≤ %ds", MaxDurationSeconds),
				//lint:ignore ST1005 Envoy's own words (protoc-gen-validate's), quoted
				cause: fmt.Errorf("Duration out-of-range: seconds: %d nanos: %d", s, n)})
		case fi.Positive && s == 0 && n < 1_000_000:
			errs = append(errs, &FieldError{Field: fi.Name, Value: formatDuration(d),
				Reason:  "is below 1ms: Envoy truncates durations to whole milliseconds, which would make it 0",
				Allowed: "≥ 0.001s"})
		}
	}
	return errs
}

// checkMaxEjectionTime is DetectorImpl::create's check, made on the
// millisecond values after defaults: an unset max_ejection_time defaults to
// max(300s, base_ejection_time), so only an explicit one can fail.
func checkMaxEjectionTime(od *clusterv3.OutlierDetection) *FieldError {
	if od.GetMaxEjectionTime() == nil {
		return nil
	}
	cfg := toConfig(od)
	if cfg.MaxEjectionTimeMs >= cfg.BaseEjectionTimeMs {
		return nil
	}
	base := formatMs(cfg.BaseEjectionTimeMs)
	if od.GetBaseEjectionTime() != nil {
		base = formatDuration(od.GetBaseEjectionTime())
	}
	return &FieldError{
		Field:   "max_ejection_time",
		Value:   formatDuration(od.GetMaxEjectionTime()),
		Reason:  "is below base_ejection_time " + base,
		Allowed: "≥ base_ejection_time",
		cause:   errMaxBelowBase,
	}
}

// protoValue renders the value of a set field as a user would write it.
func protoValue(od *clusterv3.OutlierDetection, fi *fieldInfo) string {
	msg := od.ProtoReflect()
	if !msg.Has(fi.desc) {
		return ""
	}
	v := msg.Get(fi.desc)
	if fi.desc.Message() == nil {
		return v.String()
	}
	switch m := v.Message().Interface().(type) {
	case *wrapperspb.UInt32Value:
		return strconv.FormatUint(uint64(m.GetValue()), 10)
	case *wrapperspb.BoolValue:
		return strconv.FormatBool(m.GetValue())
	case *durationpb.Duration:
		return formatDuration(m)
	}
	return ""
}

// toConfig applies Envoy's defaults (DetectorConfig's constructor) to every
// unset field and truncates durations to whole milliseconds. It assumes od
// passed validate.
func toConfig(od *clusterv3.OutlierDetection) engine.Config {
	def := engine.DefaultConfig()
	u32 := func(w *wrapperspb.UInt32Value, d uint32) uint32 {
		if w == nil {
			return d
		}
		return w.GetValue()
	}
	flag := func(w *wrapperspb.BoolValue, d bool) bool {
		if w == nil {
			return d
		}
		return w.GetValue()
	}
	ms := func(d *durationpb.Duration, def int64) int64 {
		if d == nil {
			return def
		}
		return durationMs(d)
	}
	base := ms(od.GetBaseEjectionTime(), def.BaseEjectionTimeMs)
	cfg := engine.Config{
		Consecutive5xx:                         u32(od.GetConsecutive_5Xx(), def.Consecutive5xx),
		IntervalMs:                             ms(od.GetInterval(), def.IntervalMs),
		BaseEjectionTimeMs:                     base,
		MaxEjectionPercent:                     u32(od.GetMaxEjectionPercent(), def.MaxEjectionPercent),
		EnforcingConsecutive5xx:                u32(od.GetEnforcingConsecutive_5Xx(), def.EnforcingConsecutive5xx),
		EnforcingSuccessRate:                   u32(od.GetEnforcingSuccessRate(), def.EnforcingSuccessRate),
		SuccessRateMinimumHosts:                u32(od.GetSuccessRateMinimumHosts(), def.SuccessRateMinimumHosts),
		SuccessRateRequestVolume:               u32(od.GetSuccessRateRequestVolume(), def.SuccessRateRequestVolume),
		SuccessRateStdevFactor:                 u32(od.GetSuccessRateStdevFactor(), def.SuccessRateStdevFactor),
		ConsecutiveGatewayFailure:              u32(od.GetConsecutiveGatewayFailure(), def.ConsecutiveGatewayFailure),
		EnforcingConsecutiveGatewayFailure:     u32(od.GetEnforcingConsecutiveGatewayFailure(), def.EnforcingConsecutiveGatewayFailure),
		SplitExternalLocalOriginErrors:         od.GetSplitExternalLocalOriginErrors(),
		ConsecutiveLocalOriginFailure:          u32(od.GetConsecutiveLocalOriginFailure(), def.ConsecutiveLocalOriginFailure),
		EnforcingConsecutiveLocalOriginFailure: u32(od.GetEnforcingConsecutiveLocalOriginFailure(), def.EnforcingConsecutiveLocalOriginFailure),
		EnforcingLocalOriginSuccessRate:        u32(od.GetEnforcingLocalOriginSuccessRate(), def.EnforcingLocalOriginSuccessRate),
		FailurePercentageThreshold:             u32(od.GetFailurePercentageThreshold(), def.FailurePercentageThreshold),
		EnforcingFailurePercentage:             u32(od.GetEnforcingFailurePercentage(), def.EnforcingFailurePercentage),
		EnforcingFailurePercentageLocalOrigin:  u32(od.GetEnforcingFailurePercentageLocalOrigin(), def.EnforcingFailurePercentageLocalOrigin),
		FailurePercentageMinimumHosts:          u32(od.GetFailurePercentageMinimumHosts(), def.FailurePercentageMinimumHosts),
		FailurePercentageRequestVolume:         u32(od.GetFailurePercentageRequestVolume(), def.FailurePercentageRequestVolume),
		MaxEjectionTimeMs:                      ms(od.GetMaxEjectionTime(), engine.DefaultMaxEjectionTimeFor(base)),
		MaxEjectionTimeJitterMs:                ms(od.GetMaxEjectionTimeJitter(), def.MaxEjectionTimeJitterMs),
		SuccessfulActiveHealthCheckUnejectHost: flag(od.GetSuccessfulActiveHealthCheckUnejectHost(), def.SuccessfulActiveHealthCheckUnejectHost),
		AlwaysEjectOneHost:                     flag(od.GetAlwaysEjectOneHost(), def.AlwaysEjectOneHost),
		DetectDegradedHosts:                    flag(od.GetDetectDegradedHosts(), def.DetectDegradedHosts),
		// What Envoy truncates and grpc-go keeps.
		IntervalSubMsNs:         subMsNs(od.GetInterval()),
		BaseEjectionTimeSubMsNs: subMsNs(od.GetBaseEjectionTime()),
		MaxEjectionTimeSubMsNs:  subMsNs(od.GetMaxEjectionTime()),
	}
	return cfg
}

// subMsNs is the part of a duration below one millisecond, in nanoseconds
// (0 for an unset one).
func subMsNs(d *durationpb.Duration) int32 { return d.GetNanos() % 1_000_000 }

// ToProto writes every field of cfg explicitly (no field is left to a
// default), so the proto means the same thing in any Envoy version.
func ToProto(cfg engine.Config) *clusterv3.OutlierDetection {
	u32 := wrapperspb.UInt32
	return &clusterv3.OutlierDetection{
		Consecutive_5Xx:                        u32(cfg.Consecutive5xx),
		Interval:                               msSubDuration(cfg.IntervalMs, cfg.IntervalSubMsNs),
		BaseEjectionTime:                       msSubDuration(cfg.BaseEjectionTimeMs, cfg.BaseEjectionTimeSubMsNs),
		MaxEjectionPercent:                     u32(cfg.MaxEjectionPercent),
		EnforcingConsecutive_5Xx:               u32(cfg.EnforcingConsecutive5xx),
		EnforcingSuccessRate:                   u32(cfg.EnforcingSuccessRate),
		SuccessRateMinimumHosts:                u32(cfg.SuccessRateMinimumHosts),
		SuccessRateRequestVolume:               u32(cfg.SuccessRateRequestVolume),
		SuccessRateStdevFactor:                 u32(cfg.SuccessRateStdevFactor),
		ConsecutiveGatewayFailure:              u32(cfg.ConsecutiveGatewayFailure),
		EnforcingConsecutiveGatewayFailure:     u32(cfg.EnforcingConsecutiveGatewayFailure),
		SplitExternalLocalOriginErrors:         cfg.SplitExternalLocalOriginErrors,
		ConsecutiveLocalOriginFailure:          u32(cfg.ConsecutiveLocalOriginFailure),
		EnforcingConsecutiveLocalOriginFailure: u32(cfg.EnforcingConsecutiveLocalOriginFailure),
		EnforcingLocalOriginSuccessRate:        u32(cfg.EnforcingLocalOriginSuccessRate),
		FailurePercentageThreshold:             u32(cfg.FailurePercentageThreshold),
		EnforcingFailurePercentage:             u32(cfg.EnforcingFailurePercentage),
		EnforcingFailurePercentageLocalOrigin:  u32(cfg.EnforcingFailurePercentageLocalOrigin),
		FailurePercentageMinimumHosts:          u32(cfg.FailurePercentageMinimumHosts),
		FailurePercentageRequestVolume:         u32(cfg.FailurePercentageRequestVolume),
		MaxEjectionTime:                        msSubDuration(cfg.MaxEjectionTimeMs, cfg.MaxEjectionTimeSubMsNs),
		MaxEjectionTimeJitter:                  msDuration(cfg.MaxEjectionTimeJitterMs),
		SuccessfulActiveHealthCheckUnejectHost: wrapperspb.Bool(cfg.SuccessfulActiveHealthCheckUnejectHost),
		AlwaysEjectOneHost:                     wrapperspb.Bool(cfg.AlwaysEjectOneHost),
		DetectDegradedHosts:                    wrapperspb.Bool(cfg.DetectDegradedHosts),
	}
}

// durationMs truncates toward zero, like protobuf's
// TimeUtil::DurationToMilliseconds that Envoy uses.
func durationMs(d *durationpb.Duration) int64 {
	return d.GetSeconds()*1000 + int64(d.GetNanos())/1_000_000
}

// msDuration builds the Duration from seconds and nanos directly: going
// through time.Duration would overflow above ~292 years, which Envoy allows.
func msDuration(ms int64) *durationpb.Duration {
	return &durationpb.Duration{Seconds: ms / 1000, Nanos: int32(ms%1000) * 1_000_000}
}

// formatDuration writes a duration the proto JSON way, without trailing
// zeros: "30s", "1.5s", "0.0005s", "-1s".
func formatDuration(d *durationpb.Duration) string {
	s, n := d.GetSeconds(), d.GetNanos()
	if (s < 0 && n > 0) || (s > 0 && n < 0) || n <= -1e9 || n >= 1e9 {
		return fmt.Sprintf("{seconds: %d, nanos: %d}", s, n)
	}
	sign := ""
	us, un := uint64(s), uint32(n)
	if s < 0 || n < 0 {
		sign, us, un = "-", -us, uint32(-n)
	}
	out := sign + strconv.FormatUint(us, 10)
	if un != 0 {
		out += strings.TrimRight(fmt.Sprintf(".%09d", un), "0")
	}
	return out + "s"
}

// msSubDuration is msDuration plus the nanoseconds below the millisecond
// that Envoy drops and grpc-go keeps (Config.*SubMsNs).
func msSubDuration(ms int64, sub int32) *durationpb.Duration {
	d := msDuration(ms)
	d.Nanos += sub
	return d
}

func formatMs(ms int64) string { return formatDuration(msDuration(ms)) }
