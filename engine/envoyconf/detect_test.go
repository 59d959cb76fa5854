package envoyconf

import (
	"errors"
	"strings"
	"testing"
)

// Each document the lab reads is told from its content, and what is none
// of them is an error (or DocUnknown) naming what would be read.
func TestDetectDocument(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      DocumentKind
		err       string
	}{
		{"a config dump", string(readAdmin(t, "config_dump.json")), DocConfigDump, ""},
		{"/clusters?format=json", string(readAdmin(t, "clusters.json")), DocAdminClusters, ""},
		{"/clusters in camelCase", `{"clusterStatuses": []}`, DocAdminClusters, ""},
		{"an Envoy cluster", "name: a\nconnect_timeout: 1s\noutlier_detection: {}\n", DocCluster, ""},
		{"a typo in a cluster is still a cluster", "name: a\nconect_timeout: 1s\n", DocCluster, ""},
		{"an outlier_detection block", "consecutive_5xx: 3", DocCluster, ""},
		{"its JSON names", `{"consecutiveGatewayFailure": 3}`, DocCluster, ""},
		{"a DestinationRule", "host: r\ntrafficPolicy: {}\n", DocCluster, ""},
		{"a cluster as the dump shows one", `{"cluster": {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster"}}`, DocCluster, ""},
		{"not YAML: ParseCluster names the error", "outlier_detection: [1s", DocCluster, ""},
		{"a mapping no kind has", `{"foo": 1, "bar": 2}`, DocUnknown, ""},
		{"empty", " \n\t", DocUnknown, "is empty (allowed an Envoy cluster"},
		{"a list", "[1, 2]", DocUnknown, "a list is not a mapping, so none of the documents the lab reads (allowed an Envoy cluster or its outlier_detection (YAML or JSON), an Istio DestinationRule, Envoy's /config_dump"},
		{"a number", "42", DocUnknown, "a number 42 is not a mapping"},
		{"a string", `"configs"`, DocUnknown, `a string "configs" is not a mapping`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DetectDocument([]byte(tc.doc))
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("%v, %v; want %v, %q", got, err, tc.want, tc.err)
			}
		})
	}
	if _, err := DetectDocument(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("nothing: %v, want ErrEmpty", err)
	}
	err := UnknownDocument([]byte(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}`))
	if want := `is none of the documents the lab reads: no such document has its keys "a", "b", "c", "d", "e", "f", … (allowed an Envoy cluster`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%v, want %q…", err, want)
	}
}
