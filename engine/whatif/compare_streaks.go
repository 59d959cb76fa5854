package whatif

import (
	"slices"
	"sort"
	"time"

	"outlierlab/engine"
)

// Each host's results in answer order, as the consecutive counters see
// them: the counts the explanations quote.

// streaks are each host's results in answer order, as the consecutive
// counters see them.
type streaks map[string][]result

type result struct {
	atMs              int64
	fail5xx, failGW   bool // adds to consecutive_5xx / consecutive_gateway_failure
	resetGW           bool // a 5xx that is not a gateway error resets the gateway count
	failLocal, okLoc  bool // local-origin failure / success (split mode)
	reported, success bool
}

// newStreaks classifies each entry as put does: in non-split mode a
// connect failure counts as a 503 and a timeout as a 504
// (putResultNoLocalExternalSplit); split, both are local-origin failures
// and the external counters see only responses.
func newStreaks(entries []Entry, split bool) streaks {
	s := streaks{}
	start := time.Time{}
	for _, e := range entries {
		if start.IsZero() || e.Start.Before(start) {
			start = e.Start
		}
	}
	start = start.Truncate(time.Second)
	sorted := slices.Clone(entries)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Answer.Before(sorted[j].Answer) })
	for _, e := range sorted {
		rep, connected := Classify(e)
		r := result{atMs: e.Answer.Sub(start).Milliseconds(), reported: rep != ReportNothing}
		code := e.Code
		switch rep {
		case ReportNothing:
			continue
		case ReportConnectFailed, ReportTimeout:
			if split {
				r.failLocal = true
				code = 0
			} else if rep == ReportTimeout {
				code = 504
			} else {
				code = 503
			}
		default:
			r.okLoc = split && connected
		}
		switch {
		case code >= 502 && code <= 504:
			r.fail5xx, r.failGW = true, true
		case code >= 500 && code < 600:
			r.fail5xx, r.resetGW = true, true
		case code != 0:
			r.success = true
		}
		s[e.Host] = append(s[e.Host], r)
	}
	return s
}

// at counts the host's failures of t in a row answered in (since, ms].
func (s streaks) at(host string, t engine.EjectionType, since, ms int64) uint32 {
	rs := s[host]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].atMs > ms })
	var n uint32
	for i--; i >= 0 && rs[i].atMs > since; i-- {
		r := rs[i]
		switch t {
		case engine.Consecutive5xx:
			if !r.fail5xx {
				if r.success {
					return n
				}
				continue
			}
		case engine.ConsecutiveGatewayFailure:
			if !r.failGW {
				if r.success || r.resetGW {
					return n
				}
				continue
			}
		default:
			if !r.failLocal {
				if r.okLoc {
					return n
				}
				continue
			}
		}
		n++
	}
	return n
}
