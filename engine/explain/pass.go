package explain

import "outlierlab/engine"

// Passes are the sentences for the tick's rate passes that decided without
// an event: skipped (too few hosts, too little volume) or ran and found no
// outlier. Passes that found outliers are told by their events. The
// local-origin pass is told only when errors are split by origin
// (split_external_local_origin_errors): otherwise it never runs.
func Passes(iv *Interval, cfg engine.Config) []Sentence {
	out := pass(iv, &iv.External, cfg)
	if cfg.SplitExternalLocalOriginErrors {
		out = append(out, pass(iv, &iv.Local, cfg)...)
	}
	return out
}

// pass is one origin's rate pass, the gates of DetectorImpl::processRates
// (outlier_detection_impl.cc) in their order.
func pass(iv *Interval, p *engine.RatePass, cfg engine.Config) []Sentence {
	var out []Sentence
	what, fp := "success rate", "failure percentage"
	if p.Origin == engine.Local {
		what, fp = "local-origin success rate", "local-origin failure percentage"
	}
	switch p.SRGate {
	case engine.GateTooFewHosts:
		// Envoy returns before either pass when the cluster is smaller than
		// both minimums (processSuccessRateEjections' early exit).
		b := (&builder{}).text(what + " and failure percentage skipped: the cluster has ").count(uint64(p.Hosts)).
			text(" hosts, fewer than ").field("success_rate_minimum_hosts").text(" ").count(uint64(p.SRMinimumHosts)).
			text(" and ").field("failure_percentage_minimum_hosts").text(" ").count(uint64(p.FPMinimumHosts)).text(".")
		out = append(out, b.sentence(iv.TMs, Skipped))
	case engine.GateTooFewHostsWithVolume:
		b := volumeSkip(what, p.SRHostsVolume, p.SRRequestVolume, p.SRMinimumHosts, "success_rate")
		out = append(out, b.sentence(iv.TMs, Skipped))
	case engine.GateRan:
		if p.SROutliers == 0 {
			b := (&builder{}).text(what+": no host of ").count(uint64(p.SRHostsVolume)).text(" below ").pct(fixed(p.Threshold, 1)).
				text(" (mean ").num(fixed(p.Mean, 1), "").text(" − ").num(factor(cfg.StdevFactor()), "").
				text(" × ").num(sigma(p.StdDev, 1), "").text(").")
			out = append(out, b.sentence(iv.TMs, NoOutlier))
		}
	}
	if p.Origin == engine.External && p.SRGate != engine.GateTooFewHosts {
		out = append(out, lowVolume(iv, p)...)
	}
	// Failure percentage only matters to a reader when it can eject. Both
	// origins share its volume and minimum fields.
	enforcing := cfg.EnforcingFailurePercentage
	if p.Origin == engine.Local {
		enforcing = cfg.EnforcingFailurePercentageLocalOrigin
	}
	if enforcing > 0 && p.FPGate == engine.GateTooFewHostsWithVolume {
		b := volumeSkip(fp, p.FPHostsVolume, p.FPRequestVolume, p.FPMinimumHosts, "failure_percentage")
		out = append(out, b.sentence(iv.TMs, Skipped))
	}
	return out
}

// volumeSkip says a pass did not run because too few hosts reached the
// request volume: "success rate skipped: 4 hosts have ≥ 100 requests
// (success_rate_request_volume), 5 needed (success_rate_minimum_hosts)."
func volumeSkip(what string, withVolume int, volume, minimum uint32, prefix string) *builder {
	have := " hosts have ≥ "
	if withVolume == 1 {
		have = " host has ≥ "
	}
	return (&builder{}).text(what + " skipped: ").count(uint64(withVolume)).text(have).count(uint64(volume)).
		text(" requests (").field(prefix + "_request_volume").text("), ").count(uint64(minimum)).
		text(" needed (").field(prefix + "_minimum_hosts").text(").")
}

// lowVolume names the hosts left out of success rate because they served
// some requests, but fewer than success_rate_request_volume.
func lowVolume(iv *Interval, p *engine.RatePass) []Sentence {
	var out []Sentence
	for _, h := range iv.Hosts {
		if h.Ejected || h.Requests == 0 || h.Requests >= uint64(p.SRRequestVolume) {
			continue
		}
		b := (&builder{}).host(h.Name).text(" not counted by success rate: ").count(h.Requests).text(" requests < ").
			field("success_rate_request_volume").text(" ").count(uint64(p.SRRequestVolume)).text(".")
		out = append(out, b.sentence(iv.TMs, NotCounted))
	}
	return out
}
