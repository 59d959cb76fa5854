package chart

import (
	"fmt"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/web/tabstate"
)

// Each chart's text alternative is one sentence the server writes from the
// run: what the chart shows at the cursor, in words and numbers, for a
// screen reader (the chart box's accessible name) and anyone who cannot
// read the lines. ECharts' own generated description is off: it lists raw
// series values and covered only the first host.

// noFrame is every chart's sentence before the first interval.
const noFrame = "no interval has run yet: press play or step."

// srAlt: the pass at the cursor, and the lowest host against the threshold.
func srAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	i := len(frames) - 1
	f, at := &frames[i], r.Times[i]
	p := f.External
	if p.SRGate != engine.GateRan {
		return fmt.Sprintf("At %s success rate did not run: %d %s had enough requests, %d needed.",
			at, p.SRHostsVolume, tabstate.Plural(p.SRHostsVolume, "host", "hosts"), p.SRMinimumHosts)
	}
	low, lowHost := 101.0, ""
	for hi := range r.Hosts {
		if v, ok := srPlotted(r, frames, i, hi); ok && v < low {
			low, lowHost = v, r.Hosts[hi]
		}
	}
	s := fmt.Sprintf("At %s the mean success rate is %s%% and the threshold %s%%", at, tabstate.Pct1(p.Mean), tabstate.Pct1(max(p.Threshold, 0)))
	switch {
	case lowHost == "":
		return s + "."
	case low < p.Threshold:
		return s + fmt.Sprintf("; the lowest, %s at %s%%, is below it: an outlier.", lowHost, tabstate.Pct1(low))
	}
	return s + fmt.Sprintf("; the lowest, %s at %s%%, is above it.", lowHost, tabstate.Pct1(low))
}

// lanesAlt: who is out at the cursor, and the refusals so far.
func lanesAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	i := len(frames) - 1
	var out []string
	for _, h := range frames[i].Hosts {
		if h.Ejected {
			out = append(out, fmt.Sprintf("%s (×%d)", h.Name, h.Multiplier))
		}
	}
	ov, det := scenario.CountEvents(frames, engine.EventOverflow), scenario.CountEvents(frames, engine.EventDetect)
	s := fmt.Sprintf("At %s no host is ejected", r.Times[i])
	if len(out) > 0 {
		s = fmt.Sprintf("At %s %d of %d hosts %s ejected: %s", r.Times[i], len(out), len(r.Hosts), tabstate.Plural(len(out), "is", "are"), strings.Join(out, ", "))
	}
	if frames[i].Panic {
		s += ", the cluster in panic"
	}
	return s + fmt.Sprintf("; so far %d %s refused by the cap and %d detected without enforcing.", ov, tabstate.Plural(ov, "ejection", "ejections"), det)
}

// clientsAlt: the last interval as the clients saw it.
func clientsAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	c := frames[len(frames)-1].Clients
	return fmt.Sprintf("In the interval to %s, %s%% of %s requests failed after retries; %s retries were sent and %s refused (retry overflow).",
		r.Times[len(frames)-1], tabstate.Pct2(c.Failures, c.Requests), tabstate.GroupThousands(c.Requests), tabstate.GroupThousands(c.RetriesSent), tabstate.GroupThousands(c.BudgetRefusals))
}

// shareAlt: the smallest and largest share at the cursor.
func shareAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	hs := frames[len(frames)-1].Hosts
	if len(hs) == 0 {
		return noFrame
	}
	lo, hi := 0, 0
	for k := range hs {
		if hs[k].TrafficShare < hs[lo].TrafficShare {
			lo = k
		}
		if hs[k].TrafficShare > hs[hi].TrafficShare {
			hi = k
		}
	}
	return fmt.Sprintf("In the interval to %s the hosts' shares of the attempts range from %s%% (%s) to %s%% (%s).",
		r.Times[len(frames)-1], tabstate.Pct1(100*hs[lo].TrafficShare), hs[lo].Name, tabstate.Pct1(100*hs[hi].TrafficShare), hs[hi].Name)
}

// countersAlt: the detector's counters at the cursor.
func countersAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	s := &frames[len(frames)-1].Stats
	return fmt.Sprintf("At %s the detector has counted %d detected, %d enforced and %d refused by the cap (overflow); %d %s ejected now.",
		r.Times[len(frames)-1], detectedTotal(s), s[engine.StatEjectionsEnforcedTotal], s[engine.StatEjectionsOverflow],
		s[engine.StatEjectionsActive], tabstate.Plural(int(s[engine.StatEjectionsActive]), "host is", "hosts are"))
}
