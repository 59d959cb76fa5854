package envoyconf

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outlierlab/engine"
)

// importFiles are the sample documents in testdata/import, with what each
// must import as.
var importFiles = []struct {
	file string
	want func() Cluster
}{
	{"envoy-defaults.yaml", func() Cluster {
		return Cluster{Source: SourceEnvoyCluster, Name: "backend", Outlier: engine.DefaultConfig(), PanicThreshold: 50, MaxRetries: 3, LBPolicy: "round_robin"}
	}},
	{"aggressive-cluster.yaml", func() Cluster {
		cfg := engine.DefaultConfig()
		cfg.Consecutive5xx, cfg.ConsecutiveGatewayFailure, cfg.EnforcingConsecutiveGatewayFailure = 3, 3, 100
		cfg.IntervalMs, cfg.BaseEjectionTimeMs, cfg.MaxEjectionPercent = 5000, 15000, 100
		cfg.SuccessRateMinimumHosts, cfg.SuccessRateRequestVolume, cfg.SuccessRateStdevFactor = 3, 20, 1000
		cfg.FailurePercentageThreshold, cfg.EnforcingFailurePercentage = 50, 100
		cfg.FailurePercentageMinimumHosts, cfg.FailurePercentageRequestVolume = 3, 20
		// The HIGH-priority threshold (max_retries 50) comes first; Envoy
		// takes the first DEFAULT one.
		return Cluster{Source: SourceEnvoyCluster, Name: "checkout", Outlier: cfg, PanicThreshold: 0, MaxRetries: 1000, LBPolicy: "least_request"}
	}},
	{"destination-rule.yaml", func() Cluster {
		cfg := engine.DefaultConfig()
		cfg.EnforcingSuccessRate = 0                                                 // always, in applyOutlierDetection
		cfg.ConsecutiveGatewayFailure, cfg.EnforcingConsecutiveGatewayFailure = 0, 0 // consecutiveGatewayErrors: 0
		cfg.MaxEjectionPercent = 100
		return Cluster{Source: SourceDestinationRule, Name: "reviews.default.svc.cluster.local", Outlier: cfg, PanicThreshold: 0, MaxRetries: 10, LBPolicy: "least_request"}
	}},
}

func readTestdata(t *testing.T, parts ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The lab's cluster YAML must mean the same as what was imported: import,
// render (Cluster.YAML and the lab's ClusterYAML), import again.
func TestImportRoundTrip(t *testing.T) {
	for _, tc := range importFiles {
		t.Run(tc.file, func(t *testing.T) {
			c, err := ParseCluster(readTestdata(t, "import", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want()
			if !c.Equal(want) || c.Source != want.Source || c.Name != want.Name {
				t.Errorf("import\n got %+v\nwant %+v", c, want)
			}
			again, err := ParseCluster([]byte(c.YAML()))
			if err != nil || !again.Equal(c) {
				t.Errorf("Cluster.YAML does not read back:\n%s\n= %+v, %v", c.YAML(), again, err)
			}
			lab := ClusterYAML(c.Outlier, c.Name, c.PanicThreshold, c.MaxRetries)
			back, err := ParseCluster([]byte(lab))
			if err != nil || back.Outlier != c.Outlier || back.PanicThreshold != c.PanicThreshold || back.MaxRetries != c.MaxRetries || back.Name != c.Name {
				t.Errorf("ClusterYAML does not read back:\n%s\n= %+v, %v", lab, back, err)
			}
		})
	}
}

// testdata/lint/istio-destination-rule.yaml is the cluster istiod
// generated for a rule; the translation of that rule must agree with it.
func TestDestinationRuleMatchesGeneratedCluster(t *testing.T) {
	generated, err := ParseCluster(readTestdata(t, "lint", "istio-destination-rule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dr, err := ParseCluster([]byte("host: reviews.default.svc.cluster.local\ntrafficPolicy:\n  outlierDetection: {consecutive5xxErrors: 5, interval: 10s, baseEjectionTime: 30s, maxEjectionPercent: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if dr.Outlier != generated.Outlier || dr.PanicThreshold != generated.PanicThreshold {
		t.Errorf("translation %+v (panic %v)\n generated %+v (panic %v)", dr.Outlier, dr.PanicThreshold, generated.Outlier, generated.PanicThreshold)
	}
}

// Each row is one DestinationRule trafficPolicy and what istiod makes of
// it (cluster_traffic_policy.go), over the translation of an empty
// outlierDetection: success rate off, panic off, the retry breaker lifted,
// LEAST_REQUEST.
func TestDestinationRuleTranslation(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		want         func(*Cluster)
	}{
		{"empty outlierDetection", "outlierDetection: {}", func(*Cluster) {}},
		{"consecutive5xxErrors 0 disables and unenforces", "outlierDetection: {consecutive5xxErrors: 0}",
			func(c *Cluster) { c.Outlier.Consecutive5xx, c.Outlier.EnforcingConsecutive5xx = 0, 0 }},
		{"consecutive5xxErrors 7", "outlierDetection: {consecutive5xxErrors: 7}", func(c *Cluster) { c.Outlier.Consecutive5xx = 7 }},
		{"consecutiveGatewayErrors 3 is enforced", "outlierDetection: {consecutiveGatewayErrors: 3}",
			func(c *Cluster) {
				c.Outlier.ConsecutiveGatewayFailure, c.Outlier.EnforcingConsecutiveGatewayFailure = 3, 100
			}},
		{"Go durations", "outlierDetection: {interval: 1m, baseEjectionTime: 1500ms}",
			func(c *Cluster) { c.Outlier.IntervalMs, c.Outlier.BaseEjectionTimeMs = 60000, 1500 }},
		{"base above 300s lifts the max", "outlierDetection: {baseEjectionTime: 10m}",
			func(c *Cluster) { c.Outlier.BaseEjectionTimeMs, c.Outlier.MaxEjectionTimeMs = 600000, 600000 }},
		{"maxEjectionPercent 0 keeps Envoy's 10", "outlierDetection: {maxEjectionPercent: 0}", func(*Cluster) {}},
		{"maxEjectionPercent 40", "outlierDetection: {maxEjectionPercent: 40}", func(c *Cluster) { c.Outlier.MaxEjectionPercent = 40 }},
		{"minHealthPercent is the panic threshold", "outlierDetection: {minHealthPercent: 30}", func(c *Cluster) { c.PanicThreshold = 30 }},
		{"split with local failures", "outlierDetection: {splitExternalLocalOriginErrors: true, consecutiveLocalOriginFailures: 2}", func(c *Cluster) {
			c.Outlier.SplitExternalLocalOriginErrors, c.Outlier.ConsecutiveLocalOriginFailure = true, 2
			c.Outlier.EnforcingConsecutiveLocalOriginFailure, c.Outlier.EnforcingLocalOriginSuccessRate = 100, 0
		}},
		{"split alone", "outlierDetection: {splitExternalLocalOriginErrors: true}", func(c *Cluster) {
			c.Outlier.SplitExternalLocalOriginErrors, c.Outlier.EnforcingLocalOriginSuccessRate = true, 0
		}},
		{"deprecated consecutiveErrors is ignored", "outlierDetection: {consecutiveErrors: 2}", func(*Cluster) {}},
		{"maxRetries 0 keeps the lifted breaker", "outlierDetection: {}\nconnectionPool: {http: {maxRetries: 0}}", func(*Cluster) {}},
		{"maxRetries 7", "outlierDetection: {}\nconnectionPool: {http: {maxRetries: 7}}", func(c *Cluster) { c.MaxRetries = 7 }},
		{"retry budget defaults", "outlierDetection: {}\nretryBudget: {}", func(c *Cluster) { c.RetryBudget = &RetryBudget{20, 3} }},
		{"retry budget", "outlierDetection: {}\nretryBudget: {percent: 50, minRetryConcurrency: 5}", func(c *Cluster) { c.RetryBudget = &RetryBudget{50, 5} }},
		{"ROUND_ROBIN", "outlierDetection: {}\nloadBalancer: {simple: ROUND_ROBIN}", func(c *Cluster) { c.LBPolicy = "round_robin" }},
		{"RANDOM", "outlierDetection: {}\nloadBalancer: {simple: RANDOM}", func(c *Cluster) { c.LBPolicy = "random" }},
		{"LEAST_CONN", "outlierDetection: {}\nloadBalancer: {simple: LEAST_CONN}", func(*Cluster) {}},
		{"PASSTHROUGH is not modelled", "outlierDetection: {}\nloadBalancer: {simple: PASSTHROUGH}", func(c *Cluster) { c.LBPolicy = "" }},
		{"consistent hash is not modelled", "outlierDetection: {}\nloadBalancer: {consistentHash: {httpHeaderName: x-user}}", func(c *Cluster) { c.LBPolicy = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := Cluster{Outlier: engine.DefaultConfig(), MaxRetries: math.MaxUint32, LBPolicy: "least_request"}
			want.Outlier.EnforcingSuccessRate = 0
			tc.want(&want)
			doc := "host: r\ntrafficPolicy:\n  " + strings.ReplaceAll(tc.policy, "\n", "\n  ")
			for _, form := range []string{doc, "apiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: r}\nspec:\n  " + strings.ReplaceAll(doc, "\n", "\n  ")} {
				got, err := ParseCluster([]byte(form))
				if err != nil {
					t.Fatalf("%s\n%v", form, err)
				}
				if !got.Equal(want) || got.Source != SourceDestinationRule {
					t.Errorf("%s\n got %+v\nwant %+v", form, got, want)
				}
			}
		})
	}
}

// importErrorRows are documents Envoy or istiod refuse; each error names
// the field by its path.
var importErrorRows = []struct{ name, in, field, wantAll string }{
	{"cluster typo", "name: a\nconect_timeout: 1s\noutlier_detection: {}", "conect_timeout", `did you mean "connect_timeout"`},
	{"negative max_retries", "name: a\ncircuit_breakers: {thresholds: [{max_retries: -1}]}\noutlier_detection: {}", "circuit_breakers.thresholds[0].max_retries", "-1 is out of range|0–4294967295"},
	{"lb_policy", "name: a\nlb_policy: FOO\noutlier_detection: {}", "lb_policy", `"FOO" is not one of|ROUND_ROBIN, LEAST_REQUEST`},
	{"connect_timeout 0s (PGV)", "name: a\nconnect_timeout: 0s\noutlier_detection: {}", "connect_timeout", "0s is out of range|> 0s"},
	{"retry budget above 100 (PGV, nested)", "name: a\ncircuit_breakers: {thresholds: [{retry_budget: {budget_percent: {value: 120}}}]}\noutlier_detection: {}",
		"circuit_breakers.thresholds[0].retry_budget.budget_percent.value", "120 is out of range|0–100"},
	{"port beyond 65535", "name: a\nload_assignment: {cluster_name: a, endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: x, port_value: 99999}}}}]}]}\noutlier_detection: {}",
		"load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value", "99999|65535"},
	{"typo inside a typed config", "name: a\ntransport_socket: {name: tls, typed_config: {'@type': type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext, snii: x}}\noutlier_detection: {}",
		"transport_socket.typed_config.snii", `did you mean "sni"`},
	{"typed config without @type", "name: a\ntransport_socket: {name: tls, typed_config: {sni: x}}\noutlier_detection: {}", "transport_socket.typed_config.@type", "is missing"},
	{"not an Envoy cluster @type", `{"@type": "type.googleapis.com/envoy.config.listener.v3.Listener", "name": "l"}`, "@type", "is not an Envoy cluster"},
	{"DR typo", "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {host: r, trafficPolicy: {outlierDetection: {consecutive5xxError: 3}}}",
		"spec.trafficPolicy.outlierDetection.consecutive5xxError", `did you mean "consecutive5xxErrors"`},
	{"DR duration without unit", "host: r\ntrafficPolicy: {outlierDetection: {interval: 10}}", "trafficPolicy.outlierDetection.interval", `10 is not a valid duration|"1m"`},
	{"DR sub-millisecond", "host: r\ntrafficPolicy: {outlierDetection: {baseEjectionTime: 1500us}}", "trafficPolicy.outlierDetection.baseEjectionTime", "1.5ms|whole milliseconds"},
	{"DR percent above 100", "host: r\ntrafficPolicy: {outlierDetection: {maxEjectionPercent: 101}}", "trafficPolicy.outlierDetection.maxEjectionPercent", "101 is out of range|0–100"},
	{"DR fraction", "host: r\ntrafficPolicy: {outlierDetection: {minHealthPercent: 1.5}}", "trafficPolicy.outlierDetection.minHealthPercent", "1.5 is not a whole number"},
	{"DR local failures without split", "host: r\ntrafficPolicy: {outlierDetection: {consecutiveLocalOriginFailures: 3}}", "trafficPolicy.outlierDetection.consecutiveLocalOriginFailures", "splitExternalLocalOriginErrors is false"},
	{"DR failure percentage", "host: r\ntrafficPolicy: {outlierDetection: {failurePercentageThreshold: 50}}", "trafficPolicy.outlierDetection.failurePercentageThreshold", "is not translated|istioctl proxy-config cluster"},
	{"DR error codes", "host: r\ntrafficPolicy: {outlierDetection: {outlierDetectionHttpErrorCodes: [404]}}", "trafficPolicy.outlierDetection.outlierDetectionHttpErrorCodes", "error matcher"},
	{"DR without outlierDetection", "host: r\ntrafficPolicy: {loadBalancer: {simple: ROUND_ROBIN}}", "trafficPolicy.outlierDetection", "is missing|no outlier detection"},
	{"DR without host", "trafficPolicy: {outlierDetection: {}}", "host", "is missing"},
	{"DR without spec", "kind: DestinationRule\napiVersion: networking.istio.io/v1", "spec", "is missing"},
	{"another kind", "kind: VirtualService\napiVersion: networking.istio.io/v1\nspec: {}", "kind", `"VirtualService" is not a kind`},
	{"DR negative maxRetries", "host: r\ntrafficPolicy: {outlierDetection: {}, connectionPool: {http: {maxRetries: -1}}}", "trafficPolicy.connectionPool.http.maxRetries", "-1 is negative"},
	{"DR empty connectionPool", "host: r\ntrafficPolicy: {outlierDetection: {}, connectionPool: {}}", "trafficPolicy.connectionPool", "is empty"},
	{"DR retry budget above 100", "host: r\ntrafficPolicy: {outlierDetection: {}, retryBudget: {percent: 150}}", "trafficPolicy.retryBudget.percent", "150 is out of range|0–100"},
	{"DR enum", "host: r\ntrafficPolicy: {outlierDetection: {}, loadBalancer: {simple: FOO}}", "trafficPolicy.loadBalancer.simple", `"FOO" is not one of|LEAST_REQUEST`},
}

func TestImportErrorsNameTheField(t *testing.T) {
	for _, tc := range importErrorRows {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCluster([]byte(tc.in))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("ParseCluster(%q) = %v (%T), want a *FieldError", tc.in, err, err)
			}
			if fe.Field != tc.field {
				t.Errorf("Field = %q, want %q (error: %v)", fe.Field, tc.field, err)
			}
			for _, want := range strings.Split(tc.wantAll, "|") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestImportNotes(t *testing.T) {
	for _, tc := range []struct{ name, in, note string }{
		{"unknown typed config", "name: a\ntransport_socket: {name: x, typed_config: {'@type': type.googleapis.com/acme.Secret, key: 1}}\noutlier_detection: {}", "type.googleapis.com/acme.Secret is not one the lab knows"},
		{"HIGH priority threshold", "name: a\ncircuit_breakers: {thresholds: [{priority: HIGH, max_retries: 9}]}\noutlier_detection: {}", "priority HIGH"},
		{"second DEFAULT threshold", "name: a\ncircuit_breakers: {thresholds: [{max_retries: 9}, {max_retries: 8}]}\noutlier_detection: {}", "first DEFAULT-priority threshold only"},
		{"ring hash", "name: a\nlb_policy: RING_HASH\noutlier_detection: {}", "RING_HASH is not modelled"},
		{"subset policy", "host: r\ntrafficPolicy: {outlierDetection: {}}\nsubsets: [{name: v1, trafficPolicy: {outlierDetection: {}}}]", `subset "v1" has its own trafficPolicy`},
		{"panic off in Istio", "host: r\ntrafficPolicy: {outlierDetection: {}}", "istiod turns panic off"},
		{"deprecated field", "host: r\ntrafficPolicy: {outlierDetection: {consecutiveErrors: 3}}", "consecutiveErrors: deprecated"},
		{"config_dump form", `{"cluster": {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "a", "outlier_detection": {}}, "last_updated": "2026-01-01T00:00:00Z"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCluster([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(c.Notes, "\n")
			if tc.note == "" && len(c.Notes) > 0 || !strings.Contains(joined, tc.note) {
				t.Errorf("notes %q, want one with %q", c.Notes, tc.note)
			}
		})
	}
}
