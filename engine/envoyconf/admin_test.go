package envoyconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"outlierlab/engine/internal/golden"
)

const adminDir = "../../testdata/admin"

var dumpedAt = timestamppb.New(time.Date(2026, 11, 30, 2, 3, 0, 0, time.UTC))

func socket(ip string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}}
}

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// adminJSON is protojson as Envoy's admin writes it (proto field names,
// primitives printed), indented the same way from build to build.
func adminJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// configDump is an Envoy's /config_dump: its bootstrap, "search" as a
// static cluster of ten hosts, and Istio's reviews as a dynamic one (with
// a warming successor), built with go-control-plane's types.
func configDump(t *testing.T) *adminv3.ConfigDump {
	var lbs []*endpointv3.LbEndpoint
	for i := range 10 {
		lbs = append(lbs, &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socket(fmt.Sprintf("10.0.0.%d", i+1), 8080)}}})
	}
	search := &clusterv3.Cluster{
		Name:                 "search",
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(250 * time.Millisecond),
		LoadAssignment:       &endpointv3.ClusterLoadAssignment{ClusterName: "search", Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbs}}},
		OutlierDetection: &clusterv3.OutlierDetection{
			MaxEjectionPercent:       wrapperspb.UInt32(50),
			SuccessRateRequestVolume: wrapperspb.UInt32(15),
		},
	}
	reviews := func(consecutive uint32) *clusterv3.Cluster {
		return &clusterv3.Cluster{
			Name:                 "outbound|9080||reviews.default.svc.cluster.local",
			ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
			EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{ServiceName: "outbound|9080||reviews.default.svc.cluster.local",
				EdsConfig: &corev3.ConfigSource{ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}, ResourceApiVersion: corev3.ApiVersion_V3}},
			ConnectTimeout: durationpb.New(10 * time.Second),
			CommonLbConfig: &clusterv3.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{Value: 0}},
			OutlierDetection: &clusterv3.OutlierDetection{
				Consecutive_5Xx:                    wrapperspb.UInt32(consecutive),
				Interval:                           durationpb.New(10 * time.Second),
				BaseEjectionTime:                   durationpb.New(30 * time.Second),
				MaxEjectionPercent:                 wrapperspb.UInt32(100),
				EnforcingConsecutive_5Xx:           wrapperspb.UInt32(100),
				EnforcingSuccessRate:               wrapperspb.UInt32(0),
				ConsecutiveGatewayFailure:          wrapperspb.UInt32(0),
				EnforcingConsecutiveGatewayFailure: wrapperspb.UInt32(0),
			},
		}
	}
	clusters := &adminv3.ClustersConfigDump{
		VersionInfo:    "2026-11-30T01:58:12Z/41",
		StaticClusters: []*adminv3.ClustersConfigDump_StaticCluster{{Cluster: mustAny(t, search), LastUpdated: dumpedAt}},
		DynamicActiveClusters: []*adminv3.ClustersConfigDump_DynamicCluster{{
			VersionInfo: "2026-11-30T01:58:12Z/41", Cluster: mustAny(t, reviews(5)), LastUpdated: dumpedAt}},
		DynamicWarmingClusters: []*adminv3.ClustersConfigDump_DynamicCluster{{
			VersionInfo: "2026-11-30T02:02:55Z/42", Cluster: mustAny(t, reviews(7)), LastUpdated: dumpedAt}},
	}
	boot := &adminv3.BootstrapConfigDump{Bootstrap: &bootstrapv3.Bootstrap{
		Node:  &corev3.Node{Id: "sidecar~10.244.0.9~productpage-v1-6b746f74dc-9stvs.default~default.svc.cluster.local", Cluster: "productpage.default"},
		Admin: &bootstrapv3.Admin{Address: socket("127.0.0.1", 15000)},
	}, LastUpdated: dumpedAt}
	return &adminv3.ConfigDump{Configs: []*anypb.Any{mustAny(t, boot), mustAny(t, clusters)}}
}

// adminClusters is that Envoy's /clusters?format=json for "search" (and
// reviews): 10.0.0.5 ejected now, the others with the rates of the last
// interval but 10.0.0.7–10, which served nothing (newly added).
func adminClusters() *adminv3.Clusters {
	pct := func(v float64) *typev3.Percent { return &typev3.Percent{Value: v} }
	var hosts []*adminv3.HostStatus
	for i := range 10 {
		h := &adminv3.HostStatus{
			Address: socket(fmt.Sprintf("10.0.0.%d", i+1), 8080), Weight: 1,
			HealthStatus: &adminv3.HostHealthStatus{EdsHealthStatus: corev3.HealthStatus_HEALTHY},
			Stats: []*adminv3.SimpleMetric{
				{Type: adminv3.SimpleMetric_COUNTER, Name: "rq_total", Value: uint64(372 + i)},
				{Type: adminv3.SimpleMetric_COUNTER, Name: "rq_error", Value: 0},
				{Type: adminv3.SimpleMetric_GAUGE, Name: "cx_active", Value: 2},
			},
		}
		switch {
		case i == 4:
			h.HealthStatus.FailedOutlierCheck = true
			h.Stats[1].Value = 10
		case i >= 6:
			h.Stats[0].Value, h.Stats[2].Value = 0, 0
		default:
			h.SuccessRate = pct(100)
		}
		hosts = append(hosts, h)
	}
	hosts[2].SuccessRate = pct(76.19047619047619)
	return &adminv3.Clusters{ClusterStatuses: []*adminv3.ClusterStatus{
		{Name: "search", SuccessRateEjectionThreshold: pct(79.88), HostStatuses: hosts},
		{Name: "outbound|9080||reviews.default.svc.cluster.local", AddedViaApi: true, HostStatuses: []*adminv3.HostStatus{{
			Address: socket("10.244.1.17", 9080), Weight: 1, Hostname: "reviews-v2-7bf8c9648f-2xkqp",
			HealthStatus: &adminv3.HostHealthStatus{EdsHealthStatus: corev3.HealthStatus_HEALTHY}}}},
	}}
}

// The admin files are what these builders write (go test ./engine/envoyconf
// -run GoldenAdmin -update rewrites them).
func TestGoldenAdminTestdata(t *testing.T) {
	golden.Compare(t, filepath.Join(adminDir, "config_dump.json"), adminJSON(t, configDump(t)))
	golden.Compare(t, filepath.Join(adminDir, "clusters.json"), adminJSON(t, adminClusters()))
}

func readAdmin(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(adminDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseConfigDump(t *testing.T) {
	dump := readAdmin(t, "config_dump.json")
	// ?resource=dynamic_active_clusters lists each cluster as its own config.
	var one bytes.Buffer
	d := configDump(t)
	var cd adminv3.ClustersConfigDump
	if err := d.Configs[1].UnmarshalTo(&cd); err != nil {
		t.Fatal(err)
	}
	one.Write(adminJSON(t, &adminv3.ConfigDump{Configs: []*anypb.Any{mustAny(t, cd.DynamicActiveClusters[0])}}))
	for _, tc := range []struct {
		name, cluster string
		data          []byte
		where         string
		consecutive   uint32
		maxPercent    uint32
		panic         float64
		err           string
	}{
		{"static", "search", dump, StaticClusters, 5, 50, 50, ""},
		{"dynamic: the active one, not the warming one", "outbound|9080||reviews.default.svc.cluster.local", dump, DynamicActiveClusters, 5, 100, 0, ""},
		{"?resource=dynamic_active_clusters, the one cluster", "", one.Bytes(), DynamicActiveClusters, 5, 100, 0, ""},
		{"no name, several clusters", "", dump, "", 0, 0, 0, `the dump has 2 clusters; choose one by name (allowed "outbound|9080||reviews.default.svc.cluster.local", "search")`},
		{"a name it lacks", "payments", dump, "", 0, 0, 0, `"payments" is not a cluster of the dump (allowed "outbound|9080||reviews.default.svc.cluster.local", "search")`},
		{"not a dump", "search", []byte(`{"name":"search"}`), "", 0, 0, 0, `configs: is missing: not a /config_dump`},
		{"not JSON", "search", []byte(`configs: []`), "", 0, 0, 0, `the config dump is not valid JSON`},
		{"a list, not a dump", "search", []byte(`[1, 2]`), "", 0, 0, 0, `a list is not a /config_dump`},
		{"configs not a list", "search", []byte(`{"configs": 5}`), "", 0, 0, 0, `configs: a number 5 is not a list of configs`},
		{"an active cluster and its warming successor are one cluster", "", []byte(`{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
			"dynamic_warming_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"r","outlier_detection":{"consecutive_5xx":7}}}],
			"dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"r","outlier_detection":{"consecutive_5xx":5}}}]}]}`), DynamicActiveClusters, 5, 10, 50, ""},
		{"a bad field names its path", "search", []byte(`{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","static_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"search","outlier_detection":{"max_ejection_percent":120}}}]}]}`),
			"", 0, 0, 0, `configs[0].static_clusters[0].cluster: max_ejection_percent: 120 is out of range (allowed 0–100)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfigDump(tc.data, tc.cluster)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				// Only the errors about the name asked for say so, for a
				// caller to name its own field.
				if byName := strings.Contains(tc.err, "by name") || strings.Contains(tc.err, "is not a cluster of"); errors.Is(err, ErrClusterName) != byName {
					t.Errorf("errors.Is(ErrClusterName) = %v for %q", !byName, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Where != tc.where || got.Outlier.Consecutive5xx != tc.consecutive || got.Outlier.MaxEjectionPercent != tc.maxPercent || got.PanicThreshold != tc.panic || got.Source != SourceEnvoyCluster {
				t.Errorf("%+v", got)
			}
		})
	}
}

func TestParseAdminClusters(t *testing.T) {
	data := readAdmin(t, "clusters.json")
	c, err := ParseAdminClusters(data, "search")
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, h := range c.Hosts {
		addrs = append(addrs, h.Address)
	}
	if want := []string{"10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080", "10.0.0.4:8080", "10.0.0.5:8080", "10.0.0.6:8080", "10.0.0.7:8080", "10.0.0.8:8080", "10.0.0.9:8080", "10.0.0.10:8080"}; !slices.Equal(addrs, want) {
		t.Errorf("hosts %v", addrs)
	}
	if e := c.EjectedHosts(); !slices.Equal(e, []string{"10.0.0.5:8080"}) {
		t.Errorf("ejected %v", e)
	}
	h3, h5, h7 := c.Hosts[2], c.Hosts[4], c.Hosts[6]
	if *c.SuccessRateEjectionThreshold != 79.88 || *h3.SuccessRate != 76.19047619047619 || h5.SuccessRate != nil || h5.Stats["rq_error"] != 10 || h3.EDSHealth != "HEALTHY" || h7.SuccessRate != nil || h7.Stats["rq_total"] != 0 {
		t.Errorf("cluster %+v, host 3 %+v, host 5 %+v, host 7 %+v", c, h3, h5, h7)
	}
	for _, tc := range []struct{ name, cluster, data, err string }{
		{"no name, two clusters", "", string(data), `/clusters has 2 clusters; choose one by name`},
		{"a name it lacks", "payments", string(data), `"payments" is not a cluster of /clusters (allowed "outbound|9080||reviews.default.svc.cluster.local", "search")`},
		{"text /clusters", "search", "search::10.0.0.1:8080::health_flags::healthy\n", "not Envoy's /clusters?format=json"},
		{"no clusters", "search", `{}`, "cluster_statuses: is empty or missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseAdminClusters([]byte(tc.data), tc.cluster); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
	if r, err := ParseAdminClusters(data, "outbound|9080||reviews.default.svc.cluster.local"); err != nil || !r.AddedViaAPI || r.Hosts[0].Hostname != "reviews-v2-7bf8c9648f-2xkqp" || len(r.EjectedHosts()) != 0 {
		t.Errorf("reviews %+v (%v)", r, err)
	}
}
