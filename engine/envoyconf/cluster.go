package envoyconf

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	// The typed configs most clusters carry, so that they are checked
	// rather than noted as unknown (see checker.anyValue).
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/raw_buffer/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"outlierlab/engine"
)

// Source is the kind of document a Cluster was read from.
type Source string

const (
	// SourceOutlierDetection is a bare outlier_detection block.
	SourceOutlierDetection Source = "outlier_detection"
	// SourceEnvoyCluster is an Envoy config.cluster.v3.Cluster.
	SourceEnvoyCluster Source = "envoy_cluster"
	// SourceDestinationRule is an Istio DestinationRule, translated the
	// way istiod translates it (see istio.go).
	SourceDestinationRule Source = "istio_destination_rule"
)

// Envoy's defaults for what the lab reads from circuit_breakers
// (ClusterInfoImpl::ResourceManagers::load, upstream_impl.cc, and the
// RetryBudget defaults documented in circuit_breaker.proto).
const (
	DefaultMaxRetries          = 3
	DefaultRetryBudgetPercent  = 20.0
	DefaultMinRetryConcurrency = 3
)

// Cluster is what the lab takes from an imported document: the
// outlier_detection block with Envoy's defaults applied, and the cluster
// settings the simulator models. Everything else in the document is
// checked as Envoy (or istiod) checks it, and otherwise left alone.
type Cluster struct {
	Source Source
	// Name is the cluster's name (a DestinationRule's spec.host).
	Name    string
	Outlier engine.Config
	// PanicThreshold is common_lb_config.healthy_panic_threshold.value
	// (Envoy's default 50).
	PanicThreshold float64
	// MaxRetries is max_retries of the first circuit_breakers threshold
	// with the DEFAULT priority (Envoy's default 3): the lab's requests
	// are DEFAULT-priority, and Envoy uses the first match.
	MaxRetries uint32
	// RetryBudget is that threshold's retry_budget, nil without one.
	RetryBudget *RetryBudget
	// LBPolicy is "round_robin", "least_request" or "random", or "" for a
	// policy the simulator does not model (a note says which).
	LBPolicy string
	// Notes say what was read but not modelled, or translated, in words.
	Notes []string
}

// RetryBudget is circuit_breakers.thresholds[].retry_budget with Envoy's
// defaults applied.
type RetryBudget struct {
	BudgetPercent       float64
	MinRetryConcurrency uint32
}

// ParseCluster reads a YAML or JSON document: an Envoy cluster (whole, or
// just its outlier_detection block), or an Istio DestinationRule (the
// Kubernetes object or its spec). Every error is a *FieldError naming the
// field by its path ("circuit_breakers.thresholds[0].max_retries",
// "spec.trafficPolicy.outlierDetection.interval").
func ParseCluster(data []byte) (Cluster, error) {
	doc, err := yamlDocument(data)
	if err != nil {
		return Cluster{}, err
	}
	return parseDocument(doc)
}

// parseDocument decides what doc is and reads it.
func parseDocument(doc []byte) (Cluster, error) {
	members, isObject, err := objectMembers(doc)
	if err != nil {
		return Cluster{}, &FieldError{Reason: "the document is not valid JSON: " + err.Error(), cause: err}
	}
	if !isObject {
		if isNull(doc) {
			return defaultCluster(SourceOutlierDetection, engine.DefaultConfig()), nil
		}
		return Cluster{}, &FieldError{
			Value:   jsonKind(doc),
			Reason:  "is not a mapping: the document must be an outlier_detection object, an Envoy cluster or an Istio DestinationRule",
			Allowed: "a mapping of field names to values",
		}
	}
	members, notes, err := unwrapClusterDump(members)
	if err != nil {
		return Cluster{}, err
	}
	var c Cluster
	switch documentKind(members) {
	case SourceDestinationRule:
		c, err = parseDestinationRule(members)
	case SourceEnvoyCluster:
		c, err = parseEnvoyCluster(members)
	default:
		var cfg engine.Config
		cfg, err = parseOutlierDetection(members)
		c = defaultCluster(SourceOutlierDetection, cfg)
	}
	if err != nil {
		return Cluster{}, err
	}
	c.Notes = uniqueNotes(append(notes, c.Notes...))
	return c, nil
}

func defaultCluster(src Source, cfg engine.Config) Cluster {
	return Cluster{Source: src, Outlier: cfg, PanicThreshold: DefaultHealthyPanicThreshold, MaxRetries: DefaultMaxRetries, LBPolicy: "round_robin"}
}

// documentKind tells a DestinationRule (it has a kind, an apiVersion or a
// trafficPolicy) from an Envoy cluster (it has any Cluster field) from a
// bare outlier_detection block.
func documentKind(members []member) Source {
	if _, ok := findMember(members, "kind", "apiVersion", "trafficPolicy", "traffic_policy"); ok {
		return SourceDestinationRule
	}
	t := fields()
	for _, m := range members {
		if t.clusterKeys[m.key] && t.byName[m.key] == nil {
			return SourceEnvoyCluster
		}
	}
	return SourceOutlierDetection
}

// unwrapClusterDump accepts a cluster as Envoy's admin /config_dump shows
// it: {"cluster": {"@type": ".../envoy.config.cluster.v3.Cluster", ...},
// "last_updated": ...}, or the inner object with its "@type".
func unwrapClusterDump(members []member) ([]member, []string, error) {
	const clusterType = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	if inner, ok := findMember(members, "cluster"); ok && len(members) <= 3 {
		if inMembers, isObject, err := objectMembers(inner.value); err == nil && isObject {
			if typ, ok := findMember(inMembers, "@type"); ok && strings.Trim(string(typ.value), `"`) == clusterType {
				members = inMembers
			}
		}
	}
	typ, ok := findMember(members, "@type")
	if !ok {
		return members, nil, nil
	}
	if strings.Trim(string(typ.value), `"`) != clusterType {
		return nil, nil, &FieldError{Field: "@type", Value: compact(typ.value), Reason: "is not an Envoy cluster", Allowed: `"` + clusterType + `"`}
	}
	var rest []member
	for _, m := range members {
		if m.key != "@type" {
			rest = append(rest, m)
		}
	}
	return rest, nil, nil
}

// parseEnvoyCluster reads a whole config.cluster.v3.Cluster: every field
// is checked by protojson and the generated ValidateAll, as Envoy checks a
// cluster it loads; outlier_detection keeps its own checks (the C++ ones
// too, see checkOutlierDetection) and their errors name the bare field.
func parseEnvoyCluster(members []member) (Cluster, error) {
	if od, ok := findMember(members, "outlier_detection", "outlierDetection"); !ok {
		// Envoy builds no outlier detector for a cluster without the block,
		// so there is nothing to simulate; say so.
		return Cluster{}, &FieldError{
			Field:  "outlier_detection",
			Reason: fmt.Sprintf("is missing: the document looks like an Envoy cluster (it has %q) but has no outlier_detection block, and Envoy runs no outlier detection without one; write \"outlier_detection: {}\" for the defaults", members[0].key),
		}
	} else if isNull(od.value) {
		// "outlier_detection:" with nothing after it is null in YAML: the
		// field is unset, and Envoy then has no outlier detector.
		return Cluster{}, &FieldError{
			Field:   "outlier_detection",
			Reason:  "is empty (null), so Envoy would build no outlier detector; write \"outlier_detection: {}\" for the defaults",
			Allowed: "a mapping of outlier_detection fields",
		}
	}
	c := &checker{
		decode:       protojson.UnmarshalOptions{}.Unmarshal,
		durationHelp: `seconds with an "s" suffix, e.g. "30s" or "1.5s"`,
	}
	c.special = map[string]func(json.RawMessage, string) json.RawMessage{"outlier_detection": c.outlierDetection}
	cleaned := c.message((&clusterv3.Cluster{}).ProtoReflect().Descriptor(), memberObject(members), "")
	if len(c.errs) > 0 {
		return Cluster{}, joinFieldErrors(c.errs)
	}
	var cl clusterv3.Cluster
	if err := protojson.Unmarshal(cleaned, &cl); err != nil {
		// Each member decoded alone; what is left is a conflict between
		// members, such as two members of one oneof.
		return Cluster{}, &FieldError{Reason: "the cluster is not valid: " + protoErrPrefix.ReplaceAllString(err.Error(), ""), cause: err}
	}
	_, named := findMember(members, "name")
	if !named {
		// A partial cluster (outlier_detection and a few neighbours) is
		// welcome; only the name Envoy requires (min_len 1) is missing.
		cl.Name = "outlierlab"
	}
	if err := cl.ValidateAll(); err != nil {
		return Cluster{}, joinFieldErrors(pgvErrors(cl.ProtoReflect(), err, ""))
	}
	out := fromEnvoyCluster(&cl)
	if !named {
		out.Name = ""
	}
	out.Notes = append(c.notes, out.Notes...)
	return out, nil
}

// outlierDetection is the checker's handler for the outlier_detection
// member: the package's own field-named checks.
func (c *checker) outlierDetection(raw json.RawMessage, path string) json.RawMessage {
	members, isObject, err := objectMembers(raw)
	if err != nil || !isObject {
		c.errs = append(c.errs, &FieldError{Field: path, Value: jsonKind(raw), Reason: "is not a mapping", Allowed: "a mapping of outlier_detection fields", cause: err})
		return raw
	}
	if _, err := parseOutlierDetection(members); err != nil {
		c.errs = append(c.errs, FieldErrors(err)...)
	}
	return raw
}

// fromEnvoyCluster takes what the lab models from a valid cluster.
func fromEnvoyCluster(cl *clusterv3.Cluster) Cluster {
	c := defaultCluster(SourceEnvoyCluster, toConfig(cl.GetOutlierDetection()))
	c.Name = cl.GetName()
	if pt := cl.GetCommonLbConfig().GetHealthyPanicThreshold(); pt != nil {
		c.PanicThreshold = pt.GetValue()
	}
	found := false
	for i, th := range cl.GetCircuitBreakers().GetThresholds() {
		if th.GetPriority() != corev3.RoutingPriority_DEFAULT {
			c.Notes = append(c.Notes, fmt.Sprintf("circuit_breakers.thresholds[%d]: not read: it is for priority %s, and the lab's requests have the DEFAULT priority", i, th.GetPriority()))
			continue
		}
		if found {
			c.Notes = append(c.Notes, fmt.Sprintf("circuit_breakers.thresholds[%d]: not read: Envoy uses the first DEFAULT-priority threshold only", i))
			continue
		}
		found = true
		if th.GetMaxRetries() != nil {
			c.MaxRetries = th.GetMaxRetries().GetValue()
		}
		if rb := th.GetRetryBudget(); rb != nil {
			c.RetryBudget = &RetryBudget{BudgetPercent: DefaultRetryBudgetPercent, MinRetryConcurrency: DefaultMinRetryConcurrency}
			if rb.GetBudgetPercent() != nil {
				c.RetryBudget.BudgetPercent = rb.GetBudgetPercent().GetValue()
			}
			if rb.GetMinRetryConcurrency() != nil {
				c.RetryBudget.MinRetryConcurrency = rb.GetMinRetryConcurrency().GetValue()
			}
		}
	}
	c.LBPolicy = lbPolicyName(cl.GetLbPolicy())
	if c.LBPolicy == "" {
		c.Notes = append(c.Notes, fmt.Sprintf("lb_policy: %s is not modelled by the lab (it models ROUND_ROBIN, LEAST_REQUEST and RANDOM); the preset's policy stays", cl.GetLbPolicy()))
	}
	if cl.GetLoadBalancingPolicy() != nil {
		c.LBPolicy = ""
		c.Notes = append(c.Notes, "load_balancing_policy: not modelled by the lab (it models lb_policy); the preset's policy stays")
	}
	return c
}

var lbPolicies = map[clusterv3.Cluster_LbPolicy]string{
	clusterv3.Cluster_ROUND_ROBIN:   "round_robin",
	clusterv3.Cluster_LEAST_REQUEST: "least_request",
	clusterv3.Cluster_RANDOM:        "random",
}

func lbPolicyName(p clusterv3.Cluster_LbPolicy) string { return lbPolicies[p] }

// Settings is the cluster as a layer of the lab's settings (see
// engine/settings.Apply): every outlier_detection field, and the cluster
// settings under their Envoy names. A retry budget of 0% (which Envoy
// runs as min_retry_concurrency alone) cannot be told from "no budget" by
// the lab's knob; a note says so when it happens.
func (c Cluster) Settings() map[string]string {
	out := FieldValues(c.Outlier)
	out["healthy_panic_threshold"] = formatNumber(c.PanicThreshold)
	out["max_retries"] = strconv.FormatUint(uint64(c.MaxRetries), 10)
	out["retry_budget_percent"] = "0"
	if c.RetryBudget != nil {
		out["retry_budget_percent"] = formatNumber(c.RetryBudget.BudgetPercent)
		out["min_retry_concurrency"] = strconv.FormatUint(uint64(c.RetryBudget.MinRetryConcurrency), 10)
	}
	if c.LBPolicy != "" {
		out["lb_policy"] = c.LBPolicy
	}
	return out
}

// YAML renders the cluster as an Envoy cluster that ParseCluster reads back
// to the same Cluster (notes aside): ClusterYAML, plus the retry budget and
// lb_policy when they are not Envoy's defaults.
func (c Cluster) YAML() string {
	text := ClusterYAML(c.Outlier, c.Name, c.PanicThreshold, c.MaxRetries)
	if c.RetryBudget != nil {
		budget := fmt.Sprintf("    retry_budget:\n      budget_percent:\n        value: %s\n      min_retry_concurrency: %d\n",
			formatNumber(c.RetryBudget.BudgetPercent), c.RetryBudget.MinRetryConcurrency)
		text = strings.Replace(text, "  - max_retries: "+strconv.FormatUint(uint64(c.MaxRetries), 10)+"\n", "  - max_retries: "+strconv.FormatUint(uint64(c.MaxRetries), 10)+"\n"+budget, 1)
	}
	if c.LBPolicy != "" && c.LBPolicy != "round_robin" {
		text = strings.Replace(text, "\n", "\nlb_policy: "+strings.ToUpper(c.LBPolicy)+"\n", 1)
	}
	return text
}

// Equal reports whether two clusters configure the same behaviour (their
// names, sources and notes aside).
func (c Cluster) Equal(o Cluster) bool {
	if (c.RetryBudget == nil) != (o.RetryBudget == nil) || (c.RetryBudget != nil && *c.RetryBudget != *o.RetryBudget) {
		return false
	}
	same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
	return c.Outlier == o.Outlier && same(c.PanicThreshold, o.PanicThreshold) && c.MaxRetries == o.MaxRetries && c.LBPolicy == o.LBPolicy
}
