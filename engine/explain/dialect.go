package explain

import "outlierlab/engine"

// The gRPC dialect's sentences: where grpc-go (gRFC A50, the balancer in
// internal/xds/balancer/outlierdetection/balancer.go) decides by another
// rule than Envoy's, the decision log says the rule it used, so a learner
// comparing the two runs reads why they differ.

// dialectNote says once, at the first tick, what grpc-go leaves out of
// this outlier_detection block: its xDS translation (xdsresource/
// unmarshal_cds.go, outlierConfigFromCluster) keeps success rate unless
// enforcing_success_rate is 0 and failure percentage only when
// enforcing_failure_percentage is set and not 0, and drops the rest
// (engine.Config.GRPCIgnoredFields names those in effect here).
func dialectNote(atMs int64, cfg engine.Config) Sentence {
	b := (&builder{}).text("gRPC dialect (gRFC A50, as grpc-go runs it): ")
	if ignored := cfg.GRPCIgnoredFields(); len(ignored) > 0 {
		b.text("grpc-go ignores ")
		for i, f := range ignored {
			switch {
			case i == 0:
			case i == len(ignored)-1:
				b.text(" and ")
			default:
				b.text(", ")
			}
			b.field(f)
		}
		b.text("; ")
	}
	b.text("it has no consecutive-error detectors, ")
	sr, fp := cfg.GRPCSuccessRate(), cfg.GRPCFailurePercentage()
	switch {
	case sr && fp:
		b.text("so only success rate and failure percentage judge hosts, at each tick.")
	case sr:
		b.text("so only success rate judges hosts, at each tick (failure percentage runs only when ").
			field("enforcing_failure_percentage").text(" is set above 0).")
	case fp:
		b.text("and ").field("enforcing_success_rate").text(" 0 turns success rate off: only failure percentage judges hosts, at each tick.")
	default:
		b.text("and with ").field("enforcing_success_rate").text(" 0 and no ").field("enforcing_failure_percentage").
			text(" nothing judges hosts: the tick never runs, no host is ever ejected.")
	}
	return b.sentence(atMs, Skipped)
}

// grpcFailurePercentage is failurePercentageAlgorithm's comparison:
// failures/total·100 strictly above the threshold (Envoy: at or above),
// printed with the digits that show it above.
func grpcFailurePercentage(b *builder, e *engine.Event, cfg engine.Config) {
	fp, _ := Distinct(100-e.HostSuccessRate, float64(cfg.FailurePercentageThreshold))
	b.text(" failure percentage ").pct(fp).text(" is above ").pct(itoa(cfg.FailurePercentageThreshold)).
		text(" (").field("failure_percentage_threshold").text(", gRPC ejects only above it)")
}

// grpcEjectionTime is intervalTimerAlgorithm's ejection length:
// min(base_ejection_time × multiplier, max(base_ejection_time,
// max_ejection_time)). The multiplier itself has no cap (ejectEndpoint adds
// one at every ejection), where Envoy stops raising its backoff once
// base × backoff passes max_ejection_time.
func grpcEjectionTime(b *builder, e *engine.Event, cfg engine.Config) {
	base := cfg.BaseEjectionTimeMs
	raw := base * int64(e.Backoff)
	limit := max(base, cfg.MaxEjectionTimeMs)
	b.text(" (")
	switch {
	case raw > limit && cfg.MaxEjectionTimeMs < base:
		// grpc-go takes a max_ejection_time below base_ejection_time
		// (Envoy refuses it) and caps at the larger of the two.
		b.field("base_ejection_time").text(" ").secs(base).text(", the cap, since ").field("max_ejection_time").text(" ").secs(cfg.MaxEjectionTimeMs).
			text(" is below it and gRPC caps at the larger; ")
		b.field("base_ejection_time").text(" ").secs(base).text(" × ").count(uint64(e.Backoff)).text(" = ").secs(raw).
			text(", and gRPC's multiplier keeps growing")
	case raw > limit:
		b.field("max_ejection_time").text(" ").secs(limit).text("; ")
		b.field("base_ejection_time").text(" ").secs(base).text(" × ").count(uint64(e.Backoff)).text(" = ").secs(raw).
			text(", and gRPC's multiplier keeps growing")
	default:
		b.field("base_ejection_time").text(" ").secs(base).text(" × ").count(uint64(e.Backoff))
	}
	b.text(")")
}

// ejectedTwice reports whether e is a second ejection of its host in the
// same tick: success rate ejected it and failure percentage flags it
// again. grpc-go's ejectEndpoint does not ask whether the endpoint is
// already ejected, so the multiplier and numEndpointsEjected both grow a
// second time, and unejectEndpoint later gives back one (engine doc.go,
// case G1). The first ejection is the one with the smaller multiplier.
func ejectedTwice(e *engine.Event, iv *Interval) bool {
	for i := range iv.Events {
		o := &iv.Events[i]
		if o.Kind == engine.EventEject && o.Host == e.Host && o.AtMs == e.AtMs && o.Backoff < e.Backoff {
			return true
		}
	}
	return false
}

// grpcTwice is the clause that follows a second ejection in one tick.
func grpcTwice(b *builder, e *engine.Event) {
	b.text("; ").host(e.Host).text(" was already out, and grpc-go ejects it again: its multiplier and the count of ejected hosts " +
		"both grow twice, and its return gives back only one, so one slot of ").field("max_ejection_percent").
		text(" stays taken for the rest of the run")
}

// grpcReturn is the reason of a return under gRPC: intervalTimerAlgorithm
// unejects when now is strictly after the ejection's end (time.After). The
// lab's runs are on a real clock (engine.GRPCRealClock): each tick starts
// a little after the interval, so an ejection that ends on a tick has
// ended by then, as under Envoy's <=.
func grpcReturn(b *builder) {
	b.text("its ejection time had ended before this tick (grpc-go returns a host at a tick strictly after its time; " +
		"a real tick starts a little after the interval, so a time that ends on a tick has ended).")
}
