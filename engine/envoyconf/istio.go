package envoyconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	//lint:ignore SA1019 istiod's own loader (pkg/util/protomarshal) is the legacy jsonpb
	"github.com/golang/protobuf/jsonpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1"
)

// IstioSource is the istiod code the DestinationRule translation follows,
// read function by function: pilot/pkg/networking/core/cluster_traffic_policy.go
// (applyOutlierDetection, applyConnectionPool, applyRetryBudget,
// getDefaultCircuitBreakerThresholds, applyLoadBalancer) and
// pkg/config/validation/validation.go (validateOutlierDetection,
// validateConnectionPool), parsed with istio.io/api v1.32.0.
const IstioSource = "istio/istio@86c9f01fd735 (2026-08-22)"

// destinationRuleVersions are the apiVersions the DestinationRule CRD serves.
var destinationRuleVersions = []string{"networking.istio.io/v1", "networking.istio.io/v1beta1", "networking.istio.io/v1alpha3"}

// jsonpbDecode is istiod's strict loader (protomarshal.Unmarshal): the
// legacy jsonpb, which reads durations with time.ParseDuration, so "5m"
// and "1500ms" are fine in a DestinationRule while Envoy's loader wants
// "300s".
func jsonpbDecode(data []byte, msg proto.Message) error {
	return (&jsonpb.Unmarshaler{}).Unmarshal(bytes.NewReader(data), protoadapt.MessageV1Of(msg))
}

// parseDestinationRule reads a DestinationRule (the Kubernetes object or
// its bare spec) strictly and translates it as istiod does.
func parseDestinationRule(members []member) (Cluster, error) {
	spec, prefix, err := destinationRuleSpec(members)
	if err != nil {
		return Cluster{}, err
	}
	c := &checker{
		decode:       jsonpbDecode,
		camel:        true,
		durationHelp: `a duration such as "10s", "1m" or "500ms" (at least 1ms, in whole milliseconds)`,
	}
	cleaned := c.message((&networking.DestinationRule{}).ProtoReflect().Descriptor(), spec, prefix)
	if len(c.errs) > 0 {
		return Cluster{}, joinFieldErrors(c.errs)
	}
	var dr networking.DestinationRule
	if err := jsonpbDecode(cleaned, &dr); err != nil {
		return Cluster{}, &FieldError{Field: prefix, Reason: "is not a valid DestinationRule: " + err.Error(), cause: err}
	}
	if errs := validateDestinationRule(&dr, prefix); len(errs) > 0 {
		return Cluster{}, joinFieldErrors(errs)
	}
	out, err := translateDestinationRule(&dr, prefix)
	if err != nil {
		return Cluster{}, err
	}
	out.Notes = append(c.notes, out.Notes...)
	return out, nil
}

// destinationRuleSpec finds the spec: the object's "spec" member, or the
// document itself when it has no kind and no apiVersion.
func destinationRuleSpec(members []member) (json.RawMessage, string, error) {
	if _, ok := findMember(members, "kind", "apiVersion"); !ok {
		return memberObject(members), "", nil
	}
	var errs []*FieldError
	var spec json.RawMessage
	for _, m := range members {
		var s string
		switch m.key {
		case "apiVersion":
			if json.Unmarshal(m.value, &s) != nil || !slices.Contains(destinationRuleVersions, s) {
				errs = append(errs, &FieldError{Field: "apiVersion", Value: compact(m.value), Reason: "is not a DestinationRule version", Allowed: strings.Join(destinationRuleVersions, ", ")})
			}
		case "kind":
			if json.Unmarshal(m.value, &s) != nil || s != "DestinationRule" {
				errs = append(errs, &FieldError{Field: "kind", Value: compact(m.value), Reason: "is not a kind the lab reads", Allowed: "DestinationRule (or paste an Envoy cluster)"})
			}
		case "spec":
			spec = m.value
		case "metadata", "status":
			// Kubernetes' ObjectMeta and the status istiod writes: not Istio's schema.
		default:
			errs = append(errs, &FieldError{Field: m.key, Reason: "unknown field", Allowed: "apiVersion, kind, metadata, spec, status"})
		}
	}
	if spec == nil || isNull(spec) {
		errs = append(errs, &FieldError{Field: "spec", Reason: "is missing", Allowed: "a DestinationRule spec with host and trafficPolicy"})
	}
	if len(errs) > 0 {
		return nil, "", joinFieldErrors(errs)
	}
	return spec, "spec", nil
}

// validateDestinationRule repeats istiod's validation (validation.go) of
// the fields the lab reads, and refuses what the lab cannot translate.
func validateDestinationRule(dr *networking.DestinationRule, prefix string) []*FieldError {
	at := func(p string) string { return joinPath(prefix, p) }
	var errs []*FieldError
	if dr.GetHost() == "" {
		errs = append(errs, &FieldError{Field: at("host"), Reason: "is missing", Allowed: "the service's name, e.g. reviews.default.svc.cluster.local"})
	}
	od := dr.GetTrafficPolicy().GetOutlierDetection()
	if od == nil {
		return append(errs, &FieldError{Field: at("trafficPolicy.outlierDetection"),
			Reason: "is missing: istiod configures no outlier detection without it (applyOutlierDetection returns early), so there is nothing to simulate"})
	}
	odAt := func(p string) string { return at("trafficPolicy.outlierDetection." + p) }
	for name, d := range map[string]*durationpb.Duration{"interval": od.GetInterval(), "baseEjectionTime": od.GetBaseEjectionTime()} {
		if d == nil {
			continue
		}
		// agent.ValidateDuration: at least 1ms, whole milliseconds.
		if dur := d.AsDuration(); dur < time.Millisecond || dur%time.Millisecond != 0 {
			errs = append(errs, &FieldError{Field: odAt(name), Value: dur.String(), Reason: "is not accepted by istiod", Allowed: "≥ 1ms, in whole milliseconds"})
		}
	}
	for name, v := range map[string]int32{"maxEjectionPercent": od.GetMaxEjectionPercent(), "minHealthPercent": od.GetMinHealthPercent()} {
		if v < 0 || v > 100 { // ValidatePercent
			errs = append(errs, &FieldError{Field: odAt(name), Value: fmt.Sprint(v), Reason: "is out of range", Allowed: "0–100"})
		}
	}
	if !od.GetSplitExternalLocalOriginErrors() && od.GetConsecutiveLocalOriginFailures().GetValue() > 0 {
		errs = append(errs, &FieldError{Field: odAt("consecutiveLocalOriginFailures"), Value: fmt.Sprint(od.GetConsecutiveLocalOriginFailures().GetValue()),
			Reason: "is set but splitExternalLocalOriginErrors is false, which istiod refuses", Allowed: "splitExternalLocalOriginErrors: true with it"})
	}
	if od.GetFailurePercentageThreshold() != nil {
		errs = append(errs, untranslated(odAt("failurePercentageThreshold"), "istiod's applyOutlierDetection in "+IstioSource+" does not read it, so the lab cannot tell what your istiod makes of it"))
	}
	if len(od.GetOutlierDetectionHttpErrorCodes()) > 0 {
		errs = append(errs, untranslated(odAt("outlierDetectionHttpErrorCodes"), "istiod turns it into an HttpProtocolOptions error matcher, which the lab's detector does not model (it counts Envoy's default 5xx)"))
	}
	return append(errs, validateConnectionPool(dr.GetTrafficPolicy(), at)...)
}

func untranslated(field, why string) *FieldError {
	return &FieldError{Field: field, Reason: "is not translated: " + why,
		Allowed: "remove it, or paste the Envoy cluster istiod generated (istioctl proxy-config cluster POD --fqdn HOST -o yaml)"}
}

// validateConnectionPool is validateConnectionPool for the fields the lab reads.
func validateConnectionPool(tp *networking.TrafficPolicy, at func(string) string) []*FieldError {
	cp := tp.GetConnectionPool()
	var errs []*FieldError
	if cp != nil && cp.GetHttp() == nil && cp.GetTcp() == nil {
		errs = append(errs, &FieldError{Field: at("trafficPolicy.connectionPool"), Reason: "is empty, which istiod refuses", Allowed: "http or tcp settings"})
	}
	if n := cp.GetHttp().GetMaxRetries(); n < 0 {
		errs = append(errs, &FieldError{Field: at("trafficPolicy.connectionPool.http.maxRetries"), Value: fmt.Sprint(n), Reason: "is negative, which istiod refuses", Allowed: "0–2147483647"})
	}
	if p := tp.GetRetryBudget().GetPercent(); p != nil && !(p.GetValue() >= 0 && p.GetValue() <= 100) {
		// Translated to envoy.type.v3.Percent, whose rule Envoy checks.
		errs = append(errs, &FieldError{Field: at("trafficPolicy.retryBudget.percent"), Value: formatNumber(p.GetValue()), Reason: "is out of range (Envoy refuses the translated budget_percent)", Allowed: "0–100"})
	}
	return errs
}

// translateDestinationRule builds what istiod builds for the rule's
// top-level trafficPolicy and reads it as an Envoy cluster.
func translateDestinationRule(dr *networking.DestinationRule, prefix string) (Cluster, error) {
	tp := dr.GetTrafficPolicy()
	od := tp.GetOutlierDetection()
	cfg, err := FromProto(istioOutlierDetection(od))
	if err != nil {
		// Only values Envoy refuses after translation can get here (istiod
		// passes durations through; Envoy's limits are wider than most).
		return Cluster{}, &FieldError{Field: joinPath(prefix, "trafficPolicy.outlierDetection"), Reason: "translates to an outlier_detection Envoy refuses: " + err.Error(), cause: err}
	}
	c := Cluster{
		Source:  SourceDestinationRule,
		Name:    dr.GetHost(),
		Outlier: cfg,
		// applyOutlierDetection sets healthy_panic_threshold to
		// minHealthPercent whenever outlierDetection is present: 0 (panic
		// off) unless the rule says otherwise.
		PanicThreshold: float64(od.GetMinHealthPercent()),
		MaxRetries:     math.MaxUint32, // getDefaultCircuitBreakerThresholds
	}
	if n := tp.GetConnectionPool().GetHttp().GetMaxRetries(); n > 0 {
		// applyConnectionPool: only a positive value replaces the default,
		// so maxRetries: 0 leaves max_retries at 4294967295, not 0.
		c.MaxRetries = uint32(n)
	}
	if rb := tp.GetRetryBudget(); rb != nil { // applyRetryBudget
		c.RetryBudget = &RetryBudget{BudgetPercent: DefaultRetryBudgetPercent, MinRetryConcurrency: DefaultMinRetryConcurrency}
		if rb.GetPercent() != nil {
			c.RetryBudget.BudgetPercent = rb.GetPercent().GetValue()
		}
		if rb.GetMinRetryConcurrency() > 0 {
			c.RetryBudget.MinRetryConcurrency = rb.GetMinRetryConcurrency()
		}
	}
	var note string
	c.LBPolicy, note = istioLBPolicy(tp.GetLoadBalancer(), prefix)
	c.Notes = append(c.Notes, destinationRuleNotes(dr, prefix)...)
	if note != "" {
		c.Notes = append(c.Notes, note)
	}
	return c, nil
}

// istioOutlierDetection is applyOutlierDetection: success rate off,
// each consecutive detector enforced at 100% when its count is above 0
// (and at 0% when it is 0), durations and the cap passed through when set,
// split mode with its local-origin detector. Unset fields keep Envoy's
// defaults. The deprecated consecutiveErrors is not read.
func istioOutlierDetection(od *networking.OutlierDetection) *clusterv3.OutlierDetection {
	enforce := func(v uint32) *wrapperspb.UInt32Value {
		if v > 0 {
			return wrapperspb.UInt32(100)
		}
		return wrapperspb.UInt32(0)
	}
	out := &clusterv3.OutlierDetection{EnforcingSuccessRate: wrapperspb.UInt32(0)}
	if e := od.GetConsecutive_5XxErrors(); e != nil {
		out.Consecutive_5Xx = wrapperspb.UInt32(e.GetValue())
		out.EnforcingConsecutive_5Xx = enforce(e.GetValue())
	}
	if e := od.GetConsecutiveGatewayErrors(); e != nil {
		out.ConsecutiveGatewayFailure = wrapperspb.UInt32(e.GetValue())
		out.EnforcingConsecutiveGatewayFailure = enforce(e.GetValue())
	}
	out.Interval = od.GetInterval()
	out.BaseEjectionTime = od.GetBaseEjectionTime()
	if p := od.GetMaxEjectionPercent(); p > 0 {
		out.MaxEjectionPercent = wrapperspb.UInt32(uint32(p))
	}
	if od.GetSplitExternalLocalOriginErrors() {
		out.SplitExternalLocalOriginErrors = true
		if v := od.GetConsecutiveLocalOriginFailures().GetValue(); v > 0 {
			out.ConsecutiveLocalOriginFailure = wrapperspb.UInt32(v)
			out.EnforcingConsecutiveLocalOriginFailure = wrapperspb.UInt32(100)
		}
		out.EnforcingLocalOriginSuccessRate = wrapperspb.UInt32(0)
	}
	return out
}

// istioLBPolicy is applyLoadBalancer's choice of lb_policy: LEAST_REQUEST
// unless simple says otherwise (defaultLBAlgorithm); LEAST_CONN is an old
// name for it.
func istioLBPolicy(lb *networking.LoadBalancerSettings, prefix string) (string, string) {
	at := joinPath(prefix, "trafficPolicy.loadBalancer")
	if lb.GetConsistentHash() != nil {
		return "", at + ".consistentHash: istiod makes a RING_HASH or MAGLEV cluster, which the lab does not model; the preset's policy stays"
	}
	switch lb.GetSimple() {
	case networking.LoadBalancerSettings_ROUND_ROBIN:
		return "round_robin", ""
	case networking.LoadBalancerSettings_RANDOM:
		return "random", ""
	case networking.LoadBalancerSettings_PASSTHROUGH:
		return "", at + ".simple: PASSTHROUGH makes an ORIGINAL_DST cluster, which the lab does not model; the preset's policy stays"
	}
	return "least_request", ""
}

// destinationRuleNotes say what istiod would do that the lab does not show.
func destinationRuleNotes(dr *networking.DestinationRule, prefix string) []string {
	at := func(p string) string { return joinPath(prefix, p) }
	var notes []string
	od := dr.GetTrafficPolicy().GetOutlierDetection()
	//lint:ignore SA1019 reported because it is deprecated
	if od.GetConsecutiveErrors() != 0 {
		notes = append(notes, at("trafficPolicy.outlierDetection.consecutiveErrors")+": deprecated, and istiod ignores it; use consecutive5xxErrors or consecutiveGatewayErrors")
	}
	if p := od.GetMinHealthPercent(); p == 0 {
		notes = append(notes, at("trafficPolicy.outlierDetection.minHealthPercent")+": unset (0), so istiod turns panic off: healthy_panic_threshold 0, where Envoy's default is 50")
	} else {
		notes = append(notes, at("trafficPolicy.outlierDetection.minHealthPercent")+fmt.Sprintf(": istiod sets healthy_panic_threshold to %d%%, or to 0 when the service must receive unhealthy endpoints (PILOT_SEND_UNHEALTHY_ENDPOINTS, or a Kubernetes trafficDistribution)", p))
	}
	if len(dr.GetTrafficPolicy().GetPortLevelSettings()) > 0 {
		notes = append(notes, at("trafficPolicy.portLevelSettings")+": not read: the lab shows the rule's top-level trafficPolicy")
	}
	for i, s := range dr.GetSubsets() {
		if s.GetTrafficPolicy() != nil {
			notes = append(notes, fmt.Sprintf("%s: not read: subset %q has its own trafficPolicy, for its own cluster; the lab shows the top-level one", at(fmt.Sprintf("subsets[%d].trafficPolicy", i)), s.GetName()))
		}
	}
	return notes
}
