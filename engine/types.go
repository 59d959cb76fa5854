package engine

// EjectionType mirrors Envoy's OutlierEjectionType.
type EjectionType uint8

const (
	Consecutive5xx EjectionType = iota
	ConsecutiveGatewayFailure
	SuccessRate
	ConsecutiveLocalOriginFailure
	SuccessRateLocalOrigin
	FailurePercentage
	FailurePercentageLocalOrigin
	Degraded
	numEjectionTypes
)

var ejectionTypeNames = [...]string{
	Consecutive5xx:                "consecutive_5xx",
	ConsecutiveGatewayFailure:     "consecutive_gateway_failure",
	SuccessRate:                   "success_rate",
	ConsecutiveLocalOriginFailure: "consecutive_local_origin_failure",
	SuccessRateLocalOrigin:        "success_rate_local_origin",
	FailurePercentage:             "failure_percentage",
	FailurePercentageLocalOrigin:  "failure_percentage_local_origin",
	Degraded:                      "degraded",
}

// String is Envoy's ejection type in lower case, as the replay format names it.
func (t EjectionType) String() string {
	if int(t) < len(ejectionTypeNames) {
		return ejectionTypeNames[t]
	}
	return "unknown"
}

// EnforcingField is the outlier_detection field that decides whether a
// detection of this type is enforced.
func (t EjectionType) EnforcingField() string {
	switch t {
	case Consecutive5xx:
		return "enforcing_consecutive_5xx"
	case ConsecutiveGatewayFailure:
		return "enforcing_consecutive_gateway_failure"
	case ConsecutiveLocalOriginFailure:
		return "enforcing_consecutive_local_origin_failure"
	case SuccessRate:
		return "enforcing_success_rate"
	case SuccessRateLocalOrigin:
		return "enforcing_local_origin_success_rate"
	case FailurePercentage:
		return "enforcing_failure_percentage"
	case FailurePercentageLocalOrigin:
		return "enforcing_failure_percentage_local_origin"
	}
	return ""
}

// ParseEjectionType is the inverse of String.
func ParseEjectionType(s string) (EjectionType, bool) {
	for i, n := range ejectionTypeNames {
		if n == s {
			return EjectionType(i), true
		}
	}
	return 0, false
}

// Result mirrors Envoy's Outlier::Result: what the router reports for an
// attempt when it has no HTTP code, or in addition to one.
type Result uint8

const (
	LocalOriginTimeout Result = iota
	LocalOriginConnectFailed
	LocalOriginConnectSuccess
	LocalOriginConnectSuccessFinal
	ExtOriginRequestFailed
	ExtOriginRequestSuccess
	ExtOriginRequestDegraded
)

// EventKind is what happened to a host, in the replay format's words.
type EventKind uint8

const (
	// EventEject: detected, admitted by the cap and enforced.
	EventEject EventKind = iota
	// EventDetect: detected and admitted by the cap, but the enforcing_*
	// draw said no (Envoy logs it with enforced:false).
	EventDetect
	// EventOverflow: detected and refused by max_ejection_percent.
	EventOverflow
	// EventUneject: returned to service at a tick or by an active health check.
	EventUneject
	// EventDegrade / EventUndegrade: detect_degraded_hosts (Envoy ≥ 1.38).
	EventDegrade
	EventUndegrade
)

var eventKindNames = [...]string{"eject", "detect", "overflow", "uneject", "degrade", "undegrade"}

func (k EventKind) String() string { return eventKindNames[k] }

// UnejectCause says why a host came back.
type UnejectCause uint8

const (
	UnejectTimeElapsed UnejectCause = iota
	UnejectActiveHealthCheck
)

// CapCheck is the max_ejection_percent arithmetic of one ejectHost call:
// allowed iff 100·(Active+1)/Hosts <= MaxPercent, or AlwaysEjectOneHost and
// Active == 0.
type CapCheck struct {
	Active     uint64  // ejections_active before this ejection
	Hosts      int     // every host of the cluster, ejected or not
	Percent    float64 // 100·(Active+1)/Hosts
	MaxPercent uint32  // min(100, max_ejection_percent)
	// ByAlwaysEjectOne is true when the cap alone refused and
	// always_eject_one_host let the ejection through.
	ByAlwaysEjectOne bool
	Allowed          bool
	// Dialect DialectGRPC: the rule is A50's, Percent = 100·Active/Hosts
	// (the hosts already ejected) and Allowed iff Percent < MaxPercent.
	Dialect Dialect
}

// Event is one decision about one host. It is data, not prose: the web layer
// turns it into sentences.
type Event struct {
	AtMs     int64
	Host     string
	Kind     EventKind
	Detector EjectionType // meaningless for EventUneject
	Cap      CapCheck     // for eject / detect / overflow
	// Enforcing is the enforcing_* percentage consulted (eject / detect).
	Enforcing uint32
	// For success-rate and failure-percentage detections: the host's rate
	// and, for success rate, the cluster mean and threshold it was below.
	HostSuccessRate float64
	Mean            float64
	Threshold       float64
	// For eject: the backoff multiplier after this ejection, the lifetime
	// ejection count, the jitter drawn and the resulting ejection time.
	Backoff      uint32
	NumEjections uint32
	JitterMs     int64
	DurationMs   int64
	// For uneject: why, and how long the host was out.
	Cause     UnejectCause
	EjectedMs int64
}
