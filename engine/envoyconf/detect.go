package envoyconf

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// DocumentKind is what a pasted or uploaded document is, told from its
// content by DetectDocument.
type DocumentKind int

const (
	// DocCluster is an Envoy cluster, its outlier_detection block or an
	// Istio DestinationRule (YAML or JSON): ParseCluster reads it.
	DocCluster DocumentKind = iota
	// DocConfigDump is Envoy's admin /config_dump (an object with
	// "configs"): ParseConfigDump reads it.
	DocConfigDump
	// DocAdminClusters is Envoy's admin /clusters?format=json (an object
	// with "cluster_statuses"): ParseAdminClusters reads it.
	DocAdminClusters
	// DocUnknown is a mapping none of whose keys any of the above has.
	DocUnknown
)

// Documents names every kind DetectDocument tells, for an error's
// "allowed".
const Documents = `an Envoy cluster or its outlier_detection (YAML or JSON), an Istio DestinationRule, Envoy's /config_dump ("configs") or /clusters?format=json ("cluster_statuses")`

func (k DocumentKind) String() string {
	switch k {
	case DocCluster:
		return "a cluster"
	case DocConfigDump:
		return "Envoy's /config_dump"
	case DocAdminClusters:
		return "Envoy's /clusters?format=json"
	}
	return "an unknown document"
}

// ErrEmpty is DetectDocument's error for a document of nothing but
// white space.
var ErrEmpty = errors.New("empty document")

// DetectDocument tells which of the documents the lab reads data is, from
// its top-level keys: Envoy's admin writes JSON objects whose first level
// ("configs", "cluster_statuses") no cluster has. A document that is not
// YAML is DocCluster, so that ParseCluster names the syntax error; one
// that is not a mapping, or is empty, is an error naming the kinds there
// are. It never guesses: a mapping with no key any kind knows is
// DocUnknown, and its caller says what was expected.
func DetectDocument(data []byte) (DocumentKind, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return DocUnknown, &FieldError{Reason: "is empty", Allowed: Documents, cause: ErrEmpty}
	}
	doc, err := yamlDocument(data)
	if err != nil {
		return DocCluster, nil
	}
	members, isObject, err := objectMembers(doc)
	if err != nil {
		return DocCluster, nil
	}
	if !isObject {
		return DocUnknown, &FieldError{Value: jsonKind(doc), Reason: "is not a mapping, so none of the documents the lab reads", Allowed: Documents}
	}
	if _, ok := findMember(members, "configs"); ok {
		return DocConfigDump, nil
	}
	if _, ok := findMember(members, "cluster_statuses", "clusterStatuses"); ok {
		return DocAdminClusters, nil
	}
	t := fields()
	for _, m := range members {
		switch {
		case t.clusterKeys[m.key], t.byName[m.key] != nil, destinationRuleKeys[m.key], m.key == "@type", m.key == "cluster":
			return DocCluster, nil
		}
	}
	return DocUnknown, nil
}

// destinationRuleKeys are the top-level keys of a DestinationRule, as a
// Kubernetes object or its spec alone.
var destinationRuleKeys = map[string]bool{
	"apiVersion": true, "kind": true, "metadata": true, "spec": true,
	"host": true, "trafficPolicy": true, "traffic_policy": true, "subsets": true, "exportTo": true, "workloadSelector": true,
}

// UnknownDocument is the error for a DocUnknown document: its keys, and
// the documents the lab reads.
func UnknownDocument(data []byte) error {
	var keys []string
	if doc, err := yamlDocument(data); err == nil {
		if members, _, err := objectMembers(doc); err == nil {
			for _, m := range members {
				keys = append(keys, strconv.Quote(m.key))
			}
		}
	}
	if len(keys) > 6 {
		keys = append(keys[:6], "…")
	}
	return &FieldError{Reason: "is none of the documents the lab reads: no such document has its keys " + strings.Join(keys, ", "), Allowed: Documents}
}
