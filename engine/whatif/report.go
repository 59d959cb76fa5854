package whatif

import (
	"slices"

	"outlierlab/engine"
)

// Report is what Envoy's router tells the outlier detector about a
// request's last attempt (envoy-semantics.md §3.4).
type Report uint8

const (
	// ReportNothing: no upstream attempt was made or it was refused before
	// a stream existed: no healthy host (UH), a circuit breaker (UO,
	// not reported since Envoy PR #25488), a local answer (NR, RL, FI, …),
	// or a request that ended before any response (code 0).
	ReportNothing Report = iota
	// ReportConnectFailed: LocalOriginConnectFailed, from a pool failure
	// (UF) or, after a stream was attached, an upstream reset (UR, UC,
	// UPE, LR); the router treats both alike.
	ReportConnectFailed
	// ReportTimeout: LocalOriginTimeout (UT), a per-try or route timeout
	// while awaiting headers; in non-split mode Envoy counts it as a 504.
	ReportTimeout
	// ReportResponse: the upstream's status code, ExtOriginRequestFailed
	// at 500 and above, ExtOriginRequestSuccess below.
	ReportResponse
)

func (r Report) String() string {
	return [...]string{"nothing", "connect_failed", "timeout", "response"}[r]
}

// Flags that mean Envoy answered the request itself, without an upstream
// stream: nothing goes to the outlier detector.
var localAnswers = []string{"UH", "UO", "NR", "NC", "NFCF", "RL", "RLSE", "UAEX", "FI", "LH", "DPE", "IH", "SI", "OM", "DF", "DO"}

// Flags of an upstream reset after the stream was attached (onPoolReady
// reported LocalOriginConnectSuccess first).
var resets = []string{"UR", "UC", "UPE", "LR"}

// Classify is what the router reported for the entry's last attempt, and
// whether a stream was attached first (UpstreamRequest::onPoolReady
// reports LocalOriginConnectSuccess, which only split mode counts). URX
// says retries ran out; the last attempt's own outcome is in the other
// flags or the code.
func Classify(e Entry) (r Report, connected bool) {
	has := func(set []string) bool {
		for _, f := range e.Flags {
			if slices.Contains(set, f) {
				return true
			}
		}
		return false
	}
	switch {
	case e.Host == "" || has(localAnswers):
		return ReportNothing, false
	case slices.Contains(e.Flags, "UF"):
		return ReportConnectFailed, false
	case slices.Contains(e.Flags, "UT"):
		return ReportTimeout, true
	case has(resets):
		return ReportConnectFailed, true
	case e.Code > 0:
		return ReportResponse, true
	}
	return ReportNothing, true
}

// put gives the detector what the router reported for e.
func put(m *engine.HostMonitor, e Entry) {
	r, connected := Classify(e)
	if connected {
		m.PutResult(engine.LocalOriginConnectSuccess)
	}
	switch r {
	case ReportConnectFailed:
		m.PutResult(engine.LocalOriginConnectFailed)
	case ReportTimeout:
		// The router passes the route's timeout_response_code (504).
		m.PutResultCode(engine.LocalOriginTimeout, 504)
	case ReportResponse:
		if e.Code >= 500 {
			m.PutResultCode(engine.ExtOriginRequestFailed, e.Code)
		} else {
			m.PutResultCode(engine.ExtOriginRequestSuccess, e.Code)
		}
	}
}
