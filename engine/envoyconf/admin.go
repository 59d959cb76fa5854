package envoyconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Where in a config dump a cluster was found: the fields of
// envoy.admin.v3.ClustersConfigDump.
const (
	StaticClusters         = "static_clusters"
	DynamicActiveClusters  = "dynamic_active_clusters"
	DynamicWarmingClusters = "dynamic_warming_clusters"
)

// ErrClusterName is under the errors of ParseConfigDump and
// ParseAdminClusters that are about the name asked for (none given where
// there are several, or one the document lacks), so that a caller can
// name its own field for it (the CLI's -cluster, the lab's name).
var ErrClusterName = errors.New("choose a cluster by name")

// DumpedCluster is a cluster read from Envoy's /config_dump.
type DumpedCluster struct {
	Cluster
	// Where is the ClustersConfigDump field it was listed in.
	Where string
	// VersionInfo is the xDS version a dynamic cluster came with.
	VersionInfo string
}

// typeURL is the Any type URL of a message, as a config dump names it.
func typeURL(m proto.Message) string {
	return "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName())
}

// dumpEntry is one cluster of a ClustersConfigDump, as protojson writes
// StaticCluster and DynamicCluster.
type dumpEntry struct {
	VersionInfo string          `json:"version_info"`
	Cluster     json.RawMessage `json:"cluster"`
}

// ParseConfigDump finds the cluster named name in Envoy's /config_dump
// (the whole dump, or ?resource=static_clusters / dynamic_active_clusters
// …) and reads it as ParseCluster does. With name "" the dump must hold
// one cluster. An error names the clusters the dump has.
//
// The dump is walked as JSON down to each cluster rather than decoded
// whole with adminv3.ConfigDump: every Any in it (listeners' filters,
// bootstrap extensions, a cluster's typed_extension_protocol_options)
// would have to be a type this binary links, and a dump from an Envoy with
// other extensions would not load. Each config's @type is matched against
// go-control-plane's admin types, and the cluster itself is checked by
// ParseCluster with the cluster proto, its unknown extensions noted.
func ParseConfigDump(data []byte, name string) (DumpedCluster, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		if _, wrongType := errors.AsType[*json.UnmarshalTypeError](err); wrongType {
			return DumpedCluster{}, &FieldError{Value: jsonKind(data), Reason: "is not a /config_dump (Envoy's admin writes {\"configs\": [...]})", cause: err}
		}
		return DumpedCluster{}, &FieldError{Reason: "the config dump is not valid JSON: " + err.Error(), cause: err}
	}
	var dump struct {
		Configs []json.RawMessage `json:"configs"`
	}
	if err := json.Unmarshal(data, &dump); err != nil {
		return DumpedCluster{}, &FieldError{Field: "configs", Value: jsonKind(top["configs"]), Reason: "is not a list of configs", cause: err}
	}
	if dump.Configs == nil {
		return DumpedCluster{}, &FieldError{Field: "configs", Reason: "is missing: not a /config_dump (Envoy's admin writes {\"configs\": [...]})"}
	}
	all, err := dumpedClusters(dump.Configs)
	if err != nil {
		return DumpedCluster{}, err
	}
	var names []string
	var pick []dumpFound
	for _, f := range all {
		var n struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(f.entry.Cluster, &n)
		names = append(names, n.Name)
		if n.Name == name || name == "" {
			pick = append(pick, f)
		}
	}
	// A warming cluster is the next version of the active one of its
	// name, not another cluster: count names.
	distinct := len(slices.Compact(slices.Sorted(slices.Values(names))))
	switch {
	case len(all) == 0:
		return DumpedCluster{}, &FieldError{Field: "configs", Reason: "has no cluster: dump /config_dump whole, or with ?resource=static_clusters or dynamic_active_clusters"}
	case name == "" && distinct > 1:
		return DumpedCluster{}, &FieldError{Reason: fmt.Sprintf("the dump has %d clusters; choose one by name", distinct), Allowed: quoteList(names), cause: ErrClusterName}
	case len(pick) == 0:
		return DumpedCluster{}, &FieldError{Value: strconv.Quote(name), Reason: "is not a cluster of the dump", Allowed: quoteList(names), cause: ErrClusterName}
	}
	// A warming cluster and its active predecessor share a name: the
	// active one is what Envoy runs now.
	f := pick[0]
	for _, p := range pick {
		if p.where == DynamicActiveClusters || p.where == StaticClusters {
			f = p
			break
		}
	}
	c, err := ParseCluster(f.entry.Cluster)
	if err != nil {
		return DumpedCluster{}, fmt.Errorf("%s.cluster: %w", f.path, err)
	}
	return DumpedCluster{Cluster: c, Where: f.where, VersionInfo: f.entry.VersionInfo}, nil
}

// dumpFound is one cluster of a config dump: its entry, which list it is
// in, and the path to it (for errors).
type dumpFound struct {
	entry       dumpEntry
	where, path string
}

// dumpedClusters are every cluster a dump's configs hold: the entries of a
// ClustersConfigDump's lists, and static or dynamic cluster entries given
// on their own (a dump asked for with ?resource=).
func dumpedClusters(configs []json.RawMessage) ([]dumpFound, error) {
	var all []dumpFound
	clustersDump := typeURL(&adminv3.ClustersConfigDump{})
	entryWhere := map[string]string{
		typeURL(&adminv3.ClustersConfigDump_StaticCluster{}):  StaticClusters,
		typeURL(&adminv3.ClustersConfigDump_DynamicCluster{}): DynamicActiveClusters,
	}
	for i, raw := range configs {
		var head struct {
			Type string `json:"@type"`
		}
		if json.Unmarshal(raw, &head) != nil {
			return nil, &FieldError{Field: fmt.Sprintf("configs[%d]", i), Reason: "is not an object with an @type"}
		}
		if where, ok := entryWhere[head.Type]; ok {
			var e dumpEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, &FieldError{Field: fmt.Sprintf("configs[%d]", i), Reason: err.Error(), cause: err}
			}
			all = append(all, dumpFound{e, where, fmt.Sprintf("configs[%d]", i)})
			continue
		}
		if head.Type != clustersDump {
			continue
		}
		var lists map[string]json.RawMessage
		if err := json.Unmarshal(raw, &lists); err != nil {
			return nil, &FieldError{Field: fmt.Sprintf("configs[%d]", i), Reason: err.Error(), cause: err}
		}
		for _, where := range []string{StaticClusters, DynamicActiveClusters, DynamicWarmingClusters} {
			l, ok := lists[where]
			if !ok {
				continue
			}
			var es []dumpEntry
			if err := json.Unmarshal(l, &es); err != nil {
				return nil, &FieldError{Field: fmt.Sprintf("configs[%d].%s", i, where), Reason: "is not a list of clusters: " + err.Error(), cause: err}
			}
			for j, e := range es {
				all = append(all, dumpFound{e, where, fmt.Sprintf("configs[%d].%s[%d]", i, where, j)})
			}
		}
	}
	return all, nil
}

// quoteList is the names, sorted, once each and quoted, for an error's
// "allowed" (a warming cluster shares its active one's name).
func quoteList(names []string) string {
	s := slices.Compact(slices.Sorted(slices.Values(names)))
	for i, n := range s {
		s[i] = strconv.Quote(n)
	}
	if len(s) > 12 {
		s = append(s[:12], "…")
	}
	return strings.Join(s, ", ")
}

// AdminCluster is one cluster of Envoy's /clusters?format=json
// (envoy.admin.v3.Clusters): its hosts as Envoy holds them now.
type AdminCluster struct {
	Name        string `json:"name"`
	AddedViaAPI bool   `json:"added_via_api"`
	// The success-rate ejection thresholds of the last interval, when the
	// pass ran (Envoy leaves them out otherwise), 0–100.
	SuccessRateEjectionThreshold            *float64    `json:"success_rate_ejection_threshold,omitempty"`
	LocalOriginSuccessRateEjectionThreshold *float64    `json:"local_origin_success_rate_ejection_threshold,omitempty"`
	Hosts                                   []AdminHost `json:"hosts"`
}

// AdminHost is one host_statuses entry.
type AdminHost struct {
	// Address is ip:port ([ip]:port for IPv6), as access logs and the
	// event log name the host; a pipe's path, or an internal address's
	// server listener name.
	Address  string `json:"address"`
	Hostname string `json:"hostname,omitempty"`
	Weight   uint32 `json:"weight"`
	Priority uint32 `json:"priority"`
	// Ejected is health_status.failed_outlier_check: ejected now by
	// outlier detection.
	Ejected bool `json:"ejected"`
	// DegradedByOutlier is failed_degraded_outlier_detection (Envoy ≥ 1.38).
	DegradedByOutlier bool `json:"degraded_by_outlier,omitempty"`
	FailedActiveHC    bool `json:"failed_active_health_check,omitempty"`
	// EDSHealth is the control plane's word for the host (HEALTHY, …).
	EDSHealth string `json:"eds_health_status"`
	// SuccessRate and LocalOriginSuccessRate are the rates the detector
	// computed at its last tick, nil when the host lacked the volume.
	SuccessRate            *float64          `json:"success_rate,omitempty"`
	LocalOriginSuccessRate *float64          `json:"local_origin_success_rate,omitempty"`
	Stats                  map[string]uint64 `json:"stats,omitempty"`
}

// EjectedHosts lists the addresses of the hosts ejected now.
func (c *AdminCluster) EjectedHosts() []string {
	var out []string
	for _, h := range c.Hosts {
		if h.Ejected {
			out = append(out, h.Address)
		}
	}
	return out
}

// ParseAdminClusters reads /clusters?format=json with go-control-plane's
// adminv3.Clusters and returns the cluster named name ("" when it has
// one). Fields a newer Envoy adds are ignored; an error names the
// clusters there are.
func ParseAdminClusters(data []byte, name string) (*AdminCluster, error) {
	var cs adminv3.Clusters
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &cs); err != nil {
		return nil, &FieldError{Reason: "not Envoy's /clusters?format=json: " + protoErrPrefix.ReplaceAllString(err.Error(), ""), cause: err}
	}
	var names []string
	var pick []*adminv3.ClusterStatus
	for _, s := range cs.GetClusterStatuses() {
		names = append(names, s.GetName())
		if name == "" || s.GetName() == name {
			pick = append(pick, s)
		}
	}
	switch {
	case len(names) == 0:
		return nil, &FieldError{Field: "cluster_statuses", Reason: "is empty or missing: not Envoy's /clusters?format=json"}
	case name == "" && len(pick) > 1:
		return nil, &FieldError{Reason: fmt.Sprintf("/clusters has %d clusters; choose one by name", len(pick)), Allowed: quoteList(names), cause: ErrClusterName}
	case len(pick) == 0:
		return nil, &FieldError{Value: strconv.Quote(name), Reason: "is not a cluster of /clusters", Allowed: quoteList(names), cause: ErrClusterName}
	}
	s := pick[0]
	out := &AdminCluster{Name: s.GetName(), AddedViaAPI: s.GetAddedViaApi(), Hosts: []AdminHost{}}
	out.SuccessRateEjectionThreshold = percent(s.GetSuccessRateEjectionThreshold())
	out.LocalOriginSuccessRateEjectionThreshold = percent(s.GetLocalOriginSuccessRateEjectionThreshold())
	for i, h := range s.GetHostStatuses() {
		addr, err := hostAddress(h)
		if err != nil {
			return nil, &FieldError{Field: fmt.Sprintf("cluster_statuses[%q].host_statuses[%d].address", s.GetName(), i), Reason: err.Error()}
		}
		hs := h.GetHealthStatus()
		ah := AdminHost{
			Address: addr, Hostname: h.GetHostname(), Weight: h.GetWeight(), Priority: h.GetPriority(),
			Ejected: hs.GetFailedOutlierCheck(), DegradedByOutlier: hs.GetFailedDegradedOutlierDetection(),
			FailedActiveHC: hs.GetFailedActiveHealthCheck(), EDSHealth: hs.GetEdsHealthStatus().String(),
			SuccessRate: percent(h.GetSuccessRate()), LocalOriginSuccessRate: percent(h.GetLocalOriginSuccessRate()),
		}
		for _, st := range h.GetStats() {
			if ah.Stats == nil {
				ah.Stats = map[string]uint64{}
			}
			ah.Stats[st.GetName()] = st.GetValue()
		}
		out.Hosts = append(out.Hosts, ah)
	}
	return out, nil
}

// percent is a Percent's value, nil when Envoy left it out (the host or
// the cluster had no rate at the last tick).
func percent(p *typev3.Percent) *float64 {
	if p == nil {
		return nil
	}
	v := p.GetValue()
	return &v
}

// hostAddress is the host as Envoy's Address::asString names it.
func hostAddress(h *adminv3.HostStatus) (string, error) {
	a := h.GetAddress()
	switch {
	case a.GetSocketAddress() != nil:
		sa := a.GetSocketAddress()
		return net.JoinHostPort(sa.GetAddress(), strconv.FormatUint(uint64(sa.GetPortValue()), 10)), nil
	case a.GetPipe() != nil:
		return a.GetPipe().GetPath(), nil
	case a.GetEnvoyInternalAddress() != nil:
		return "envoy://" + a.GetEnvoyInternalAddress().GetServerListenerName(), nil
	}
	return "", fmt.Errorf("no socket_address, pipe or envoy_internal_address")
}
