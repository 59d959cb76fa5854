package explain

import (
	"strconv"

	"outlierlab/engine"
)

// Event is one engine.Event as a sentence. iv is the interval the event
// belongs to: a success-rate detection quotes the σ of its pass. cfg is the
// config that ran; its fields draw the lines the sentence cites.
//
// The order of the clauses is the order of DetectorImpl::ejectHost: the
// detection, then the max_ejection_percent check, then the enforcing_*
// draw (outlier_detection_impl.cc).
func Event(e *engine.Event, iv *Interval, cfg engine.Config) Sentence {
	b := &builder{}
	switch e.Kind {
	case engine.EventUneject:
		b.host(e.Host).text(" returns to service after ").secs(e.EjectedMs).text(" out: ")
		if e.Cause == engine.UnejectActiveHealthCheck {
			// DetectorImpl::onHostHealthCheckPassed (unejects only with
			// successful_active_health_check_uneject_host).
			b.text("an active health check passed (").field("successful_active_health_check_uneject_host").text(").")
		} else if iv.Dialect == engine.DialectGRPC {
			grpcReturn(b)
		} else {
			b.text("its ejection time had elapsed at this tick.")
		}
		return b.sentence(e.AtMs, Returned)
	case engine.EventDegrade:
		// setHostDegradedMainThread: a degradation's time is an ejection's
		// (its own backoff, the shared jitter); the load balancer then
		// deprioritises the host (recalculatePerPriorityState gives the
		// degraded hosts only the load the healthy ones' availability,
		// min(100, 140·healthy/hosts), leaves).
		b.host(e.Host).text(" answered with x-envoy-degraded and is marked degraded (").field("detect_degraded_hosts").text(") for ").secs(e.DurationMs)
		ejectionTime(b, e, cfg)
		b.text(": not ejected, but out of panic the load balancer sends degraded hosts only the load the healthy ones cannot take, none while 140 × healthy hosts / hosts ≥ 100.")
		return b.sentence(e.AtMs, Degraded)
	case engine.EventUndegrade:
		b.host(e.Host).text(" is no longer degraded.")
		return b.sentence(e.AtMs, Returned)
	}

	detection(b, e, iv, cfg)
	b.text(": detected; ")
	capArithmetic(b, e.Cap)
	switch e.Kind {
	case engine.EventOverflow:
		b.text(": refused (overflow).")
		return b.sentence(e.AtMs, Overflow)
	case engine.EventDetect:
		b.text(": admitted; ").field(e.Detector.EnforcingField()).text(" ").pct(itoa(e.Enforcing)).text(": ")
		if e.Enforcing == 0 {
			b.text("not enforced, so not ejected (detect only).")
		} else {
			b.text("the draw said no, so not ejected (detect only).")
		}
		return b.sentence(e.AtMs, DetectOnly)
	}
	grpc := e.Cap.Dialect == engine.DialectGRPC
	twice := grpc && ejectedTwice(e, iv)
	if twice {
		b.text(": ejected again for ").secs(e.DurationMs)
	} else {
		b.text(": ejected for ").secs(e.DurationMs)
	}
	if grpc {
		grpcEjectionTime(b, e, cfg)
	} else {
		ejectionTime(b, e, cfg)
	}
	if twice {
		grpcTwice(b, e)
	}
	b.text(".")
	return b.sentence(e.AtMs, Ejected)
}

// detection is the first half of a detection sentence: what crossed which
// line, with the numbers and the field that draws the line.
func detection(b *builder, e *engine.Event, iv *Interval, cfg engine.Config) {
	b.host(e.Host)
	switch e.Detector {
	case engine.SuccessRate, engine.SuccessRateLocalOrigin:
		what, pass := " success rate ", &iv.External
		if e.Detector == engine.SuccessRateLocalOrigin {
			what, pass = " local-origin success rate ", &iv.Local
		}
		// Envoy ejects below mean − factor·σ, strictly
		// (SuccessRateMonitor, successRateEjectionThreshold). As many
		// digits as it takes to show the host below the line, and as many
		// for the mean and σ that draw it.
		rate, thr := Distinct(e.HostSuccessRate, e.Threshold)
		d := decimals(thr)
		b.text(what).pct(rate).text(" is below the threshold ").pct(thr).
			text(" (mean ").num(fixed(e.Mean, d), "").text(" − ").num(factor(cfg.StdevFactor()), "").
			text(" × ").num(sigma(pass.StdDev, d), "").text(", ").field("success_rate_stdev_factor").text(")")
	case engine.FailurePercentage, engine.FailurePercentageLocalOrigin:
		if e.Cap.Dialect == engine.DialectGRPC {
			grpcFailurePercentage(b, e, cfg)
			return
		}
		what := " failure percentage "
		if e.Detector == engine.FailurePercentageLocalOrigin {
			what = " local-origin failure percentage "
		}
		// Envoy ejects at 100 − SR ≥ failure_percentage_threshold. "At or
		// above" holds for equal numbers: one decimal never contradicts it
		// (a rate that rounds up to the threshold is in it).
		b.text(what).pct(fixed(100-e.HostSuccessRate, 1)).text(" is at or above ").pct(itoa(cfg.FailurePercentageThreshold)).
			text(" (").field("failure_percentage_threshold").text(")")
	case engine.Consecutive5xx:
		b.text(" returned ").count(uint64(cfg.Consecutive5xx)).text(" errors in a row (").field("consecutive_5xx").text(")")
	case engine.ConsecutiveGatewayFailure:
		b.text(" returned ").count(uint64(cfg.ConsecutiveGatewayFailure)).text(" gateway failures (502/503/504) in a row (").
			field("consecutive_gateway_failure").text(")")
	case engine.ConsecutiveLocalOriginFailure:
		b.text(" had ").count(uint64(cfg.ConsecutiveLocalOriginFailure)).text(" local-origin failures in a row (").
			field("consecutive_local_origin_failure").text(")")
	default:
		b.text(": " + e.Detector.String())
	}
}

// capArithmetic writes max_ejection_percent's check the way ejectHost makes
// it: the share of all hosts ejected if this one were, 100·(active+1)/hosts,
// against the cap; always_eject_one_host lets the first one through.
func capArithmetic(b *builder, c engine.CapCheck) {
	if c.Dialect == engine.DialectGRPC {
		grpcCapArithmetic(b, c)
		return
	}
	op := " ≤ "
	if c.Percent > float64(c.MaxPercent) {
		op = " > "
	}
	b.text("cap (").count(c.Active).text("+1)/").count(uint64(c.Hosts)).text(" = ").pct(capShare(c)).
		text(op).pct(itoa(c.MaxPercent)).text(" (").field("max_ejection_percent").text(")")
	if c.ByAlwaysEjectOne {
		b.text(", but no host is ejected yet (").field("always_eject_one_host").text(")")
	}
}

// capShare is the cap check's share of hosts, with the digits that show it
// on the right side of the cap (10.005% of 2000 hosts is over 10%).
func capShare(c engine.CapCheck) string {
	if c.Percent == float64(c.MaxPercent) {
		return fixed(c.Percent, 1)
	}
	share, _ := Distinct(c.Percent, float64(c.MaxPercent))
	return share
}

// grpcCapArithmetic writes gRFC A50's check as grpc-go makes it before
// ejecting (successRateAlgorithm, failurePercentageAlgorithm): the share of
// hosts already ejected, 100·ejected/hosts, must be below the cap; the host
// about to go is not counted.
func grpcCapArithmetic(b *builder, c engine.CapCheck) {
	op := " < "
	if !c.Allowed {
		op = " ≥ "
	}
	b.text("cap ").count(c.Active).text("/").count(uint64(c.Hosts)).text(" = ").pct(capShare(c)).
		text(op).pct(itoa(c.MaxPercent)).text(" (").field("max_ejection_percent").text(", gRPC counts only the hosts already ejected)")
}

// ejectionTime explains an ejection's length as Envoy computes it:
// min(base_ejection_time × the host's backoff, max_ejection_time) plus the
// jitter drawn at ejection (DetectorImpl::checkHostForUneject).
func ejectionTime(b *builder, e *engine.Event, cfg engine.Config) {
	raw := cfg.BaseEjectionTimeMs * int64(e.Backoff)
	b.text(" (")
	if raw > cfg.MaxEjectionTimeMs {
		b.field("max_ejection_time").text(" ").secs(cfg.MaxEjectionTimeMs).text("; ")
		b.field("base_ejection_time").text(" ").secs(cfg.BaseEjectionTimeMs).text(" × ").count(uint64(e.Backoff)).text(" = ").secs(raw)
	} else {
		b.field("base_ejection_time").text(" ").secs(cfg.BaseEjectionTimeMs).text(" × ").count(uint64(e.Backoff))
	}
	if e.JitterMs > 0 {
		b.text(" + ").secs(e.JitterMs).text(" jitter")
	}
	b.text(")")
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
