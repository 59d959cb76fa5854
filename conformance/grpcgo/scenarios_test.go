package grpcgo

import (
	"strings"

	"google.golang.org/grpc/codes"
)

// od is an Envoy outlier_detection config: a 10 s interval and the given
// fields (JSON members, snake_case, as the engine and replay read them).
func od(fields ...string) string {
	return `{"interval":"10s"` + strings.Join(append([]string{""}, fields...), ",") + `}`
}

// fpOnly: success rate off, failure percentage on at threshold 20 with a
// request volume of 50, so one host failing a third of 50 calls (16, 32%)
// is an outlier.
var fpOnly = []string{`"enforcing_success_rate":0`, `"enforcing_failure_percentage":100`,
	`"failure_percentage_threshold":20`, `"failure_percentage_request_volume":50`}

func with(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

// third makes a host fail every third call in intervals [from, until).
func third(host, from, until int) fault {
	return fault{host: host, from: from, until: until, num: 1, den: 3}
}

// all makes a host fail every call in intervals [from, until).
func all(host, from, until int) fault {
	return fault{host: host, from: from, until: until, num: 1, den: 1}
}

// The scenarios. Six hosts and 300 calls an interval unless said: 50 per
// host, 60 with one host out, 75 with two. Times in the pinned events are
// ms after T0; the tick that closes interval k is at (k+1)·10 s.
var scenarios = []scenario{
	// The cap (balancer.go successRateAlgorithm/failurePercentageAlgorithm:
	// refuse when ejected/len·100 >= max). One bad host of six at the
	// default 10%: 0/6 < 10%, ejected (Envoy: (0+1)/6 > 10%, refused).
	// Ejection i lasts min(i·30 s, max(30 s, 100 s)) and ends at the first
	// tick strictly after it: out 40/70/100/110 s. Trace 01's scenario.
	{
		name: "cap-one-bad-of-six", hosts: 6, calls: 300, intervals: 40,
		config: od(with(fpOnly, `"base_ejection_time":"30s"`, `"max_ejection_time":"100s"`, `"max_ejection_percent":10`)...),
		faults: []fault{third(0, 0, 0)},
		want: []string{"10000 h0 eject failure_percentage", "50000 h0 uneject", "60000 h0 eject failure_percentage",
			"130000 h0 uneject", "140000 h0 eject failure_percentage", "240000 h0 uneject", "250000 h0 eject failure_percentage",
			"360000 h0 uneject", "370000 h0 eject failure_percentage"},
	},
	// Two bad hosts at 20%: 0/6 and 1/6 = 16.7% are both below 20%, so
	// both go (Envoy stops at (1+1)/6 = 33% > 20%).
	{
		name: "cap-two-bad-of-six-at-20", hosts: 6, calls: 300, intervals: 6,
		config: od(with(fpOnly, `"max_ejection_percent":20`)...),
		faults: []fault{third(0, 0, 0), third(1, 0, 0)},
		want: []string{"10000 h0 eject failure_percentage", "10000 h1 eject failure_percentage",
			"50000 h0 uneject", "50000 h1 uneject", "60000 h0 eject failure_percentage", "60000 h1 eject failure_percentage"},
	},
	// max_ejection_percent 0: 0/6·100 >= 0 refuses every ejection.
	{
		name: "cap-zero-ejects-nothing", hosts: 6, calls: 300, intervals: 3,
		config: od(with(fpOnly, `"max_ejection_percent":0`)...),
		faults: []fault{third(0, 0, 0)},
		want:   []string{"10000 h0 overflow failure_percentage", "20000 h0 overflow failure_percentage", "30000 h0 overflow failure_percentage"},
	},
	// intervalTimerAlgorithm detects before it unejects: h0, due back at
	// the 50 s tick, still holds the only slot when h1 is judged there.
	{
		name: "detection-before-unejection", hosts: 6, calls: 300, intervals: 6,
		config: od(with(fpOnly, `"max_ejection_percent":10`)...),
		faults: []fault{third(0, 0, 1), third(1, 4, 5)},
		want:   []string{"10000 h0 eject failure_percentage", "50000 h1 overflow failure_percentage", "50000 h0 uneject"},
	},
	// success_rate_stdev_factor: with five equal peers the outlier's z-score
	// is √5 = 2.236 whatever its rate, so 2200 ejects and 2300 does not.
	{
		name: "sr-stdev-factor-2200-ejects", hosts: 6, calls: 300, intervals: 6,
		config: od(`"success_rate_stdev_factor":2200`, `"success_rate_request_volume":50`, `"max_ejection_percent":50`),
		faults: []fault{third(0, 0, 0)},
		want:   []string{"10000 h0 eject success_rate", "50000 h0 uneject", "60000 h0 eject success_rate"},
	},
	{
		name: "sr-stdev-factor-2300-keeps", hosts: 6, calls: 300, intervals: 3,
		config: od(`"success_rate_stdev_factor":2300`, `"success_rate_request_volume":50`, `"max_ejection_percent":50`),
		faults: []fault{third(0, 0, 0)},
		want:   []string{},
	},
	// success_rate_request_volume: 50 calls a host meet a volume of 50
	// (>=) and fall one short of 51, so then nobody is a candidate.
	{
		name: "sr-request-volume-met", hosts: 6, calls: 300, intervals: 2,
		config: od(`"success_rate_request_volume":50`, `"max_ejection_percent":50`),
		faults: []fault{third(0, 0, 0)},
		want:   []string{"10000 h0 eject success_rate"},
	},
	{
		name: "sr-request-volume-short", hosts: 6, calls: 300, intervals: 2,
		config: od(`"success_rate_request_volume":51`, `"max_ejection_percent":50`),
		faults: []fault{third(0, 0, 0)},
		want:   []string{},
	},
	// failure_percentage_minimum_hosts 6 counts hosts with volume: while h0
	// is out (no calls) only five qualify and h1, failing from 10 s, is not
	// judged; when h0 is back both are, and both go (1/6 < 50%).
	{
		name: "fp-minimum-hosts-with-volume", hosts: 6, calls: 300, intervals: 6,
		config: od(with(fpOnly, `"failure_percentage_minimum_hosts":6`, `"max_ejection_percent":50`)...),
		faults: []fault{third(0, 0, 0), third(1, 1, 0)},
		want: []string{"10000 h0 eject failure_percentage", "50000 h0 uneject",
			"60000 h0 eject failure_percentage", "60000 h1 eject failure_percentage"},
	},
	// failurePercentageAlgorithm compares failures/total·100 > threshold:
	// 10 of 50 is exactly 20.0, not above 20 (Envoy's >= ejects) ...
	{
		name: "fp-at-threshold-keeps", hosts: 6, calls: 300, intervals: 2,
		config: od(with(fpOnly, `"max_ejection_percent":50`)...),
		faults: []fault{{host: 0, num: 1, den: 5}},
		want:   []string{},
	},
	// ... but 14 of 50 at threshold 28 ejects: (14/50)·100 is
	// 28.000000000000004 in float64, above 28.
	{
		name: "fp-at-threshold-float-rounding-ejects", hosts: 6, calls: 300, intervals: 2,
		config: od(with(fpOnly[:2], `"failure_percentage_threshold":28`, `"failure_percentage_request_volume":50`, `"max_ejection_percent":50`)...),
		faults: []fault{{host: 0, num: 7, den: 25}},
		want:   []string{"10000 h0 eject failure_percentage"},
	},
	// The multiplier grows by one per ejection: with base 10 s ejection i
	// lasts i·10 s (max 1000 s), back at the first tick strictly after.
	{
		name: "multiplier-growth", hosts: 6, calls: 300, intervals: 26,
		config: od(with(fpOnly, `"base_ejection_time":"10s"`, `"max_ejection_time":"1000s"`)...),
		faults: []fault{third(0, 0, 0)},
		want: []string{"10000 h0 eject failure_percentage", "30000 h0 uneject", "40000 h0 eject failure_percentage",
			"70000 h0 uneject", "80000 h0 eject failure_percentage", "120000 h0 uneject", "130000 h0 eject failure_percentage",
			"180000 h0 uneject", "190000 h0 eject failure_percentage", "250000 h0 uneject", "260000 h0 eject failure_percentage"},
	},
	// Decay: three ejections (10, 20, 30 s) leave the multiplier at 3 when
	// h0 is back at 120 s; each later tick while it is in decrements it
	// (not the tick that unejected it, nor one that ejects it). After 1, 2,
	// 3 and 5 healthy intervals the next ejection lasts 30, 20, 10 and 10 s.
	decay(1, "140000 h0 eject failure_percentage", "180000 h0 uneject"),
	decay(2, "150000 h0 eject failure_percentage", "180000 h0 uneject"),
	decay(3, "160000 h0 eject failure_percentage", "180000 h0 uneject"),
	decay(5, "180000 h0 eject failure_percentage", "200000 h0 uneject"),
	// No multiplier cap: six ejections with base 10 s and max 20 s leave
	// the multiplier at 6; four healthy ticks bring it to 2, and the next
	// ejection (3) still lasts the full 20 s: back at 310 s. Envoy stops
	// the backoff at 3 and would give 10 s.
	{
		name: "multiplier-has-no-cap", hosts: 6, calls: 300, intervals: 31,
		config: od(with(fpOnly, `"base_ejection_time":"10s"`, `"max_ejection_time":"20s"`)...),
		faults: []fault{third(0, 0, 23), third(0, 27, 28)},
		want: []string{"10000 h0 eject failure_percentage", "30000 h0 uneject", "40000 h0 eject failure_percentage",
			"70000 h0 uneject", "80000 h0 eject failure_percentage", "110000 h0 uneject", "120000 h0 eject failure_percentage",
			"150000 h0 uneject", "160000 h0 eject failure_percentage", "190000 h0 uneject", "200000 h0 eject failure_percentage",
			"230000 h0 uneject", "280000 h0 eject failure_percentage", "310000 h0 uneject"},
	},
	// Unejection needs now strictly after ejection + duration: a 20 s
	// ejection from 10 s ends on the 30 s tick, so h0 is back at 40 s
	// (Envoy: 30 s); a 19 s one ends at 29 s, back at 30 s.
	{
		name: "uneject-deadline-on-a-tick", hosts: 6, calls: 300, intervals: 5,
		config: od(with(fpOnly, `"base_ejection_time":"20s"`)...),
		faults: []fault{third(0, 0, 1)},
		want:   []string{"10000 h0 eject failure_percentage", "40000 h0 uneject"},
	},
	{
		name: "uneject-deadline-between-ticks", hosts: 6, calls: 300, intervals: 5,
		config: od(with(fpOnly, `"base_ejection_time":"19s"`)...),
		faults: []fault{third(0, 0, 1)},
		want:   []string{"10000 h0 eject failure_percentage", "30000 h0 uneject"},
	},
	// Any non-OK status is a failure (incrementCounter looks only at
	// DoneInfo.Err): application codes count like UNAVAILABLE.
	{
		name: "any-non-ok-status-counts", hosts: 6, calls: 300, intervals: 2,
		config: od(fpOnly...),
		faults: []fault{{host: 0, num: 1, den: 3, codes: []codes.Code{codes.NotFound, codes.InvalidArgument,
			codes.PermissionDenied, codes.FailedPrecondition, codes.AlreadyExists, codes.ResourceExhausted,
			codes.Unimplemented, codes.Internal, codes.Unknown, codes.Aborted, codes.OutOfRange,
			codes.Unauthenticated, codes.DataLoss, codes.DeadlineExceeded, codes.Canceled}}},
		want: []string{"10000 h0 eject failure_percentage"},
	},
	// Part 5's finding (doc.go G1). Success rate and failure percentage
	// both flag h0 at 10 s; at 20% the cap admits the second ejection
	// (1/6 = 16.7%), so h0 is ejected twice: multiplier 2 (out 60 s, back
	// at 80 s) and numEndpointsEjected 2, of which the unejection gives
	// back 1. With that leaked slot h1 (bad at 90–100 s) takes the last
	// one at 100 s and h2 (bad at 100–130 s) is refused three times; without
	// the leak h2 would have been ejected at 110 s (1/6 < 20%).
	{
		name: "double-ejection-leaks-a-slot", hosts: 6, calls: 300, intervals: 14,
		config: od(`"success_rate_request_volume":50`, `"enforcing_failure_percentage":100`,
			`"failure_percentage_request_volume":50`, `"max_ejection_percent":20`),
		faults: []fault{all(0, 0, 1), all(1, 9, 10), all(2, 10, 13)},
		want: []string{"10000 h0 eject success_rate", "10000 h0 eject failure_percentage", "80000 h0 uneject",
			"100000 h1 eject success_rate", "100000 h1 overflow failure_percentage",
			"110000 h2 overflow success_rate", "110000 h2 overflow failure_percentage",
			"120000 h2 overflow success_rate", "120000 h2 overflow failure_percentage",
			"130000 h2 overflow success_rate", "130000 h2 overflow failure_percentage", "140000 h1 uneject"},
	},
	// search-cache under gRPC: an outlier_detection block with nothing set
	// runs success rate with Envoy's defaults (volume 100, factor 1.9,
	// 10% cap); h5 failing every third call from 30 s goes at 40 s.
	{
		name: "default-config-search-cache", hosts: 6, calls: 600, intervals: 5,
		config: `{}`,
		faults: []fault{third(5, 3, 0)},
		want:   []string{"40000 h5 eject success_rate"},
	},
	// Failure percentage runs only when enforcing_failure_percentage is set
	// and not 0; with success rate off too the config is A50's no-op: a
	// host failing every call is never judged.
	{
		name: "noop-when-fp-enforcement-unset", hosts: 6, calls: 300, intervals: 3,
		config: od(`"enforcing_success_rate":0`, `"failure_percentage_threshold":20`, `"failure_percentage_request_volume":50`),
		faults: []fault{all(0, 0, 0)},
		want:   []string{},
	},
	// Blocks Envoy refuses and grpc-go takes (outlierConfigFromCluster
	// checks only that durations are ≥ 0 and four percentages ≤ 100), run
	// on the real balancer and replayed by the engine's gRPC dialect from
	// the same block (replay.Run reads it with envoyconf.ParseJSONGRPC).
	//
	// max_ejection_time 5 s below base_ejection_time 20 s:
	// intervalTimerAlgorithm caps base·multiplier at max(base, max) = 20 s,
	// so every ejection lasts 20 s, back at the first tick strictly after.
	{
		name: "max-below-base-caps-at-base", hosts: 6, calls: 300, intervals: 10,
		config: od(with(fpOnly, `"base_ejection_time":"20s"`, `"max_ejection_time":"5s"`)...),
		faults: []fault{third(0, 0, 0)},
		want: []string{"10000 h0 eject failure_percentage", "40000 h0 uneject", "50000 h0 eject failure_percentage",
			"80000 h0 uneject", "90000 h0 eject failure_percentage"},
	},
	// base_ejection_time = max_ejection_time = 0 s: an ejection lasts 0,
	// and on the exact clock h0 is back at the next tick (now() equals the
	// ejecting sweep's start within the sweep; a real clock's is later).
	{
		name: "zero-ejection-time", hosts: 6, calls: 300, intervals: 6,
		config: od(with(fpOnly, `"base_ejection_time":"0s"`, `"max_ejection_time":"0s"`)...),
		faults: []fault{third(0, 0, 0)},
		want: []string{"10000 h0 eject failure_percentage", "20000 h0 uneject", "30000 h0 eject failure_percentage",
			"40000 h0 uneject", "50000 h0 eject failure_percentage", "60000 h0 uneject"},
	},
	// Values grpc-go's xDS client never reads (enforcing_consecutive_5xx
	// above 100, a negative jitter, consecutive_5xx 1) change nothing:
	// the same events as cap-one-bad-of-six's first 50 s.
	{
		name: "fields-grpc-go-does-not-read", hosts: 6, calls: 300, intervals: 6,
		config: od(with(fpOnly, `"enforcing_consecutive_5xx":150`, `"max_ejection_time_jitter":"-1s"`, `"consecutive_5xx":1`)...),
		faults: []fault{third(0, 0, 0)},
		want:   []string{"10000 h0 eject failure_percentage", "50000 h0 uneject", "60000 h0 eject failure_percentage"},
	},
}

// decay is the multiplier-decay scenario with h healthy intervals between
// h0's return at 120 s and its next failing interval.
func decay(h int, want ...string) scenario {
	base := []string{"10000 h0 eject failure_percentage", "30000 h0 uneject", "40000 h0 eject failure_percentage",
		"70000 h0 uneject", "80000 h0 eject failure_percentage", "120000 h0 uneject"}
	return scenario{
		name: "multiplier-decay-after-" + string(rune('0'+h)) + "-healthy", hosts: 6, calls: 300, intervals: 14 + h + 4,
		config: od(with(fpOnly, `"base_ejection_time":"10s"`)...),
		faults: []fault{third(0, 0, 12), third(0, 12+h, 13+h)},
		want:   append(base, want...),
	}
}
