package engine

// Stat names one of Envoy's cluster.<name>.outlier_detection.* stats
// (ALL_OUTLIER_DETECTION_STATS in outlier_detection_impl.h).
type Stat uint8

const (
	StatEjectionsActive Stat = iota // gauge
	StatEjectionsOverflow
	StatEjectionsEnforcedTotal
	StatEjectionsDetectedConsecutive5xx
	StatEjectionsDetectedConsecutiveGatewayFailure
	StatEjectionsDetectedConsecutiveLocalOriginFailure
	StatEjectionsDetectedSuccessRate
	StatEjectionsDetectedLocalOriginSuccessRate
	StatEjectionsDetectedFailurePercentage
	StatEjectionsDetectedLocalOriginFailurePercentage
	StatEjectionsEnforcedConsecutive5xx
	StatEjectionsEnforcedConsecutiveGatewayFailure
	StatEjectionsEnforcedConsecutiveLocalOriginFailure
	StatEjectionsEnforcedSuccessRate
	StatEjectionsEnforcedLocalOriginSuccessRate
	StatEjectionsEnforcedFailurePercentage
	StatEjectionsEnforcedLocalOriginFailurePercentage
	StatEjectionsDetectedDegradation
	// Deprecated in Envoy but still emitted; their odd rules are §10's.
	StatEjectionsTotal
	StatEjectionsConsecutive5xx
	StatEjectionsSuccessRate
	NumStats
)

var statNames = [NumStats]string{
	"ejections_active",
	"ejections_overflow",
	"ejections_enforced_total",
	"ejections_detected_consecutive_5xx",
	"ejections_detected_consecutive_gateway_failure",
	"ejections_detected_consecutive_local_origin_failure",
	"ejections_detected_success_rate",
	"ejections_detected_local_origin_success_rate",
	"ejections_detected_failure_percentage",
	"ejections_detected_local_origin_failure_percentage",
	"ejections_enforced_consecutive_5xx",
	"ejections_enforced_consecutive_gateway_failure",
	"ejections_enforced_consecutive_local_origin_failure",
	"ejections_enforced_success_rate",
	"ejections_enforced_local_origin_success_rate",
	"ejections_enforced_failure_percentage",
	"ejections_enforced_local_origin_failure_percentage",
	"ejections_detected_degradation",
	"ejections_total",
	"ejections_consecutive_5xx",
	"ejections_success_rate",
}

// Name is the stat's short name under cluster.<name>.outlier_detection.
func (s Stat) Name() string { return statNames[s] }

// IsGauge reports whether Envoy exposes the stat as a gauge.
func (s Stat) IsGauge() bool { return s == StatEjectionsActive }

// LookupStat finds a stat by its short name.
func LookupStat(name string) (Stat, bool) {
	for i, n := range statNames {
		if n == name {
			return Stat(i), true
		}
	}
	return 0, false
}

// Stats is every outlier_detection stat, indexed by Stat.
type Stats [NumStats]uint64

var detectedStat = [numEjectionTypes]Stat{
	Consecutive5xx:                StatEjectionsDetectedConsecutive5xx,
	ConsecutiveGatewayFailure:     StatEjectionsDetectedConsecutiveGatewayFailure,
	ConsecutiveLocalOriginFailure: StatEjectionsDetectedConsecutiveLocalOriginFailure,
	SuccessRate:                   StatEjectionsDetectedSuccessRate,
	SuccessRateLocalOrigin:        StatEjectionsDetectedLocalOriginSuccessRate,
	FailurePercentage:             StatEjectionsDetectedFailurePercentage,
	FailurePercentageLocalOrigin:  StatEjectionsDetectedLocalOriginFailurePercentage,
	Degraded:                      StatEjectionsDetectedDegradation,
}

var enforcedStat = [numEjectionTypes]Stat{
	Consecutive5xx:                StatEjectionsEnforcedConsecutive5xx,
	ConsecutiveGatewayFailure:     StatEjectionsEnforcedConsecutiveGatewayFailure,
	ConsecutiveLocalOriginFailure: StatEjectionsEnforcedConsecutiveLocalOriginFailure,
	SuccessRate:                   StatEjectionsEnforcedSuccessRate,
	SuccessRateLocalOrigin:        StatEjectionsEnforcedLocalOriginSuccessRate,
	FailurePercentage:             StatEjectionsEnforcedFailurePercentage,
	FailurePercentageLocalOrigin:  StatEjectionsEnforcedLocalOriginFailurePercentage,
}
