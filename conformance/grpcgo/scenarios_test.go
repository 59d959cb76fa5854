package grpcgo

import "google.golang.org/grpc/codes"

var _ = codes.OK

// scenarios are the cross-checks, each with what it pins.
var scenarios = []scenario{
	{
		name: "cap-one-bad-of-six", hosts: 6, calls: 600, intervals: 40,
		config: `{"interval":"10s","base_ejection_time":"30s","max_ejection_time":"100s","max_ejection_percent":10,
			"failure_percentage_threshold":20,"enforcing_failure_percentage":100,"failure_percentage_minimum_hosts":5,
			"failure_percentage_request_volume":50,"enforcing_success_rate":0}`,
		faults: []fault{{host: 0, num: 1, den: 3}},
	},
}
