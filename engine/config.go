package engine

import "math"

// Config holds every field of Envoy's config.cluster.v3.OutlierDetection with
// Envoy's defaults applied. Durations are whole milliseconds because Envoy
// truncates them to ms when it reads the proto (PROTOBUF_GET_MS_OR_DEFAULT).
//
// Parsing and validation live in engine/envoyconf, which uses Envoy's own
// protos; this struct is what the hot path reads.
type Config struct {
	Consecutive5xx                         uint32
	IntervalMs                             int64
	BaseEjectionTimeMs                     int64
	MaxEjectionPercent                     uint32
	EnforcingConsecutive5xx                uint32
	EnforcingSuccessRate                   uint32
	SuccessRateMinimumHosts                uint32
	SuccessRateRequestVolume               uint32
	SuccessRateStdevFactor                 uint32
	ConsecutiveGatewayFailure              uint32
	EnforcingConsecutiveGatewayFailure     uint32
	SplitExternalLocalOriginErrors         bool
	ConsecutiveLocalOriginFailure          uint32
	EnforcingConsecutiveLocalOriginFailure uint32
	EnforcingLocalOriginSuccessRate        uint32
	FailurePercentageThreshold             uint32
	EnforcingFailurePercentage             uint32
	EnforcingFailurePercentageLocalOrigin  uint32
	FailurePercentageMinimumHosts          uint32
	FailurePercentageRequestVolume         uint32
	MaxEjectionTimeMs                      int64
	MaxEjectionTimeJitterMs                int64
	SuccessfulActiveHealthCheckUnejectHost bool
	AlwaysEjectOneHost                     bool
	DetectDegradedHosts                    bool

	// The part of interval, base_ejection_time and max_ejection_time below
	// one millisecond, in nanoseconds (0–999 999). Envoy truncates it away
	// (PROTOBUF_GET_MS_OR_DEFAULT); grpc-go keeps it, since its xDS client
	// reads the proto as a time.Duration (outlierConfigFromCluster,
	// AsDuration). Only the gRPC dialect reads it (GRPCIntervalNs and its
	// siblings); a Config built by hand leaves it 0.
	IntervalSubMsNs, BaseEjectionTimeSubMsNs, MaxEjectionTimeSubMsNs int32
}

// grpcNs is ms + sub as grpc-go's time.Duration holds it: durationpb's
// AsDuration saturates at the largest time.Duration.
func grpcNs(ms int64, sub int32) int64 {
	const maxMs = math.MaxInt64 / 1_000_000
	if ms > maxMs || (ms == maxMs && int64(sub) > math.MaxInt64-maxMs*1_000_000) {
		return math.MaxInt64
	}
	return ms*1_000_000 + int64(sub)
}

// GRPCIntervalNs is interval as grpc-go holds it, in nanoseconds.
func (c Config) GRPCIntervalNs() int64 { return grpcNs(c.IntervalMs, c.IntervalSubMsNs) }

// GRPCBaseEjectionTimeNs is base_ejection_time as grpc-go holds it, in
// nanoseconds.
func (c Config) GRPCBaseEjectionTimeNs() int64 {
	return grpcNs(c.BaseEjectionTimeMs, c.BaseEjectionTimeSubMsNs)
}

// GRPCMaxEjectionTimeNs is max_ejection_time as grpc-go holds it, in
// nanoseconds. Unset, it is Envoy's default max(300 s, base), which is
// what grpc-go's 300 s default gives too once the algorithm takes
// max(base, max_ejection_time).
func (c Config) GRPCMaxEjectionTimeNs() int64 {
	return grpcNs(c.MaxEjectionTimeMs, c.MaxEjectionTimeSubMsNs)
}

// Envoy's DEFAULT_* constants (outlier_detection_impl.h).
const (
	DefaultIntervalMs         = 10000
	DefaultBaseEjectionTimeMs = 30000
	DefaultMaxEjectionTimeMs  = 300000
)

// DefaultConfig returns the detector configuration Envoy uses for an empty
// outlier_detection block.
func DefaultConfig() Config {
	return Config{
		Consecutive5xx:                         5,
		IntervalMs:                             DefaultIntervalMs,
		BaseEjectionTimeMs:                     DefaultBaseEjectionTimeMs,
		MaxEjectionPercent:                     10,
		EnforcingConsecutive5xx:                100,
		EnforcingSuccessRate:                   100,
		SuccessRateMinimumHosts:                5,
		SuccessRateRequestVolume:               100,
		SuccessRateStdevFactor:                 1900,
		ConsecutiveGatewayFailure:              5,
		EnforcingConsecutiveGatewayFailure:     0,
		ConsecutiveLocalOriginFailure:          5,
		EnforcingConsecutiveLocalOriginFailure: 100,
		EnforcingLocalOriginSuccessRate:        100,
		FailurePercentageThreshold:             85,
		EnforcingFailurePercentage:             0,
		EnforcingFailurePercentageLocalOrigin:  0,
		FailurePercentageMinimumHosts:          5,
		FailurePercentageRequestVolume:         50,
		MaxEjectionTimeMs:                      DefaultMaxEjectionTimeMs,
		SuccessfulActiveHealthCheckUnejectHost: true,
	}
}

// DefaultMaxEjectionTimeFor mirrors DetectorConfig: when max_ejection_time is
// unset it is max(300 s, base_ejection_time), so a long base time never makes
// the default config invalid.
func DefaultMaxEjectionTimeFor(baseMs int64) int64 {
	return max(int64(DefaultMaxEjectionTimeMs), baseMs)
}

// StdevFactor is k in mean − k·σ; Envoy stores it ×1000.
func (c Config) StdevFactor() float64 { return float64(c.SuccessRateStdevFactor) / 1000.0 }

// enforcing returns the enforcement percentage for an ejection type.
func (c *Config) enforcing(t EjectionType) uint32 {
	switch t {
	case Consecutive5xx:
		return c.EnforcingConsecutive5xx
	case ConsecutiveGatewayFailure:
		return c.EnforcingConsecutiveGatewayFailure
	case ConsecutiveLocalOriginFailure:
		return c.EnforcingConsecutiveLocalOriginFailure
	case SuccessRate:
		return c.EnforcingSuccessRate
	case SuccessRateLocalOrigin:
		return c.EnforcingLocalOriginSuccessRate
	case FailurePercentage:
		return c.EnforcingFailurePercentage
	case FailurePercentageLocalOrigin:
		return c.EnforcingFailurePercentageLocalOrigin
	}
	return 0
}
