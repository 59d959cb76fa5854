// Package envoyconf turns Envoy configuration into engine.Config, using
// Envoy's own generated protos (go-control-plane config/cluster/v3) so that
// parsing and range checks are Envoy's, not ours:
//
//   - protojson reads the outlier_detection object (unknown fields and
//     wrong types are errors, as in Envoy, which loads YAML through the
//     proto JSON parser);
//   - the generated ValidateAll runs Envoy's protoc-gen-validate rules;
//   - the few checks Envoy makes in C++ (DetectorImpl::create and
//     DurationUtil::durationToMilliseconds) are repeated here;
//   - Envoy's defaults fill every unset field (DetectorConfig, the DEFAULT_*
//     constants of outlier_detection_impl.h) and durations are truncated to
//     whole milliseconds (PROTOBUF_GET_MS_OR_DEFAULT).
//
// ParseCluster reads more than the block: a whole Envoy cluster, checked
// field by field as Envoy checks it (protojson and the generated
// ValidateAll of config.cluster.v3.Cluster; see cluster.go), or an Istio
// DestinationRule, read strictly with istio.io/api's types and translated
// the way istiod translates it (istio.go).
//
// Every error is a *FieldError (or several joined) naming the field in
// snake_case, as the user wrote it (a DestinationRule's in camelCase).
package envoyconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"sigs.k8s.io/yaml"

	"outlierlab/engine"
)

// DefaultHealthyPanicThreshold is Envoy's default for
// common_lb_config.healthy_panic_threshold (load_balancer_impl.cc,
// kDefaultHealthyPanicThreshold = 50).
const DefaultHealthyPanicThreshold = 50.0

// ParseJSON reads a JSON outlier_detection object, a whole or partial
// Envoy cluster with an outlier_detection key, or an Istio DestinationRule
// (see ParseCluster), and returns the detector configuration with Envoy's
// defaults applied. An empty document means an
// empty outlier_detection object, i.e. all defaults.
func ParseJSON(data []byte) (engine.Config, error) {
	doc, err := jsonDocument(data)
	if err != nil {
		return engine.Config{}, err
	}
	c, err := parseDocument(doc)
	return c.Outlier, err
}

// ParseYAML is ParseJSON for YAML (and so also for JSON, which is YAML).
func ParseYAML(data []byte) (engine.Config, error) {
	doc, err := yamlDocument(data)
	if err != nil {
		return engine.Config{}, err
	}
	c, err := parseDocument(doc)
	return c.Outlier, err
}

// ParseClusterYAML is ParseYAML that also returns the cluster's
// common_lb_config.healthy_panic_threshold.value (Envoy's default, 50, when
// the document has none or is a bare outlier_detection object).
func ParseClusterYAML(data []byte) (cfg engine.Config, panicThreshold float64, err error) {
	doc, err := yamlDocument(data)
	if err != nil {
		return engine.Config{}, 0, err
	}
	c, err := parseDocument(doc)
	return c.Outlier, c.PanicThreshold, err
}

// FromProto validates an OutlierDetection the way Envoy does when it loads
// a cluster and returns it with defaults applied. A nil message is an empty
// one (all defaults).
func FromProto(od *clusterv3.OutlierDetection) (engine.Config, error) {
	if od == nil {
		od = &clusterv3.OutlierDetection{}
	}
	if err := checkOutlierDetection(od, true); err != nil {
		return engine.Config{}, err
	}
	return toConfig(od), nil
}

// yamlDocument converts YAML to JSON. Strict mode refuses duplicate keys,
// which the YAML spec forbids and which would otherwise silently keep one.
func yamlDocument(data []byte) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte("{}"), nil
	}
	doc, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
		msg = strings.TrimPrefix(msg, "yaml: ")
		return nil, &FieldError{Reason: "the document is not valid YAML: " + msg, cause: err}
	}
	return doc, nil
}

// jsonDocument checks JSON syntax so that a syntax error says where it is
// in the user's text (protojson would also refuse it, but with an offset
// into text it never shows the user).
func jsonDocument(data []byte) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte("{}"), nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		reason := "the document is not valid JSON: " + err.Error()
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			line, col := lineCol(data, se.Offset)
			reason = fmt.Sprintf("the document is not valid JSON: line %d, column %d: %s", line, col, se.Error())
		}
		return nil, &FieldError{Reason: reason, cause: err}
	}
	return data, nil
}

// lineCol gives the 1-based line and column of the byte a json.SyntaxError
// points at (its Offset counts the bytes read, including that byte).
func lineCol(data []byte, offset int64) (line, col int) {
	pos := int(min(max(offset-1, 0), int64(len(data))))
	before := data[:pos]
	line = bytes.Count(before, []byte("\n")) + 1
	col = pos - bytes.LastIndexByte(before, '\n')
	return line, col
}

// parseOutlierDetection decodes one outlier_detection JSON object through
// protojson, then validates it and applies the defaults.
func parseOutlierDetection(members []member) (engine.Config, error) {
	od, errs := decodeOutlierDetection(members)
	if len(errs) > 0 {
		// Validate the fields that did decode too, so the user sees every
		// problem at once; the cross-field max/base check is skipped, since
		// one of the two may be the field that failed to decode.
		errs = append(errs, FieldErrors(checkOutlierDetection(od, false))...)
		return engine.Config{}, joinFieldErrors(errs)
	}
	if err := checkOutlierDetection(od, true); err != nil {
		return engine.Config{}, err
	}
	return toConfig(od), nil
}

// decodeOutlierDetection unmarshals the members of an outlier_detection
// object with protojson (unknown fields are errors, as in Envoy). To name
// the field behind each protojson error (protojson reports a bad wrapper
// value as a problem with a field called "value") every member is first
// decoded on its own. The members that decode fine are then decoded
// together, so the returned message is usable for validation even when
// some fields were refused.
func decodeOutlierDetection(members []member) (*clusterv3.OutlierDetection, []*FieldError) {
	t := fields()
	unmarshal := protojson.UnmarshalOptions{DiscardUnknown: false}
	var errs []*FieldError
	var good []member
	seen := map[*fieldInfo]string{}
	for _, m := range members {
		fi := t.byName[m.key]
		if fi == nil {
			if m.key == "monitors" {
				// Envoy's [#not-implemented-hide:] field; let protojson
				// judge it and otherwise ignore it, as Envoy does.
				if err := unmarshal.Unmarshal(singleMember(m), &clusterv3.OutlierDetection{}); err != nil {
					errs = append(errs, &FieldError{Field: "monitors", Value: compact(m.value), Reason: "is not a valid list of TypedExtensionConfig", cause: err})
				}
				continue
			}
			errs = append(errs, unknownFieldError(m.key))
			continue
		}
		if prev, dup := seen[fi]; dup {
			errs = append(errs, &FieldError{Field: fi.Name, Reason: fmt.Sprintf("is set twice (as %q and %q)", prev, m.key), Allowed: "one value per field"})
			continue
		}
		seen[fi] = m.key
		if err := unmarshal.Unmarshal(singleMember(m), &clusterv3.OutlierDetection{}); err != nil {
			errs = append(errs, valueError(fi, m.value, err))
			continue
		}
		good = append(good, m)
	}
	od := &clusterv3.OutlierDetection{}
	if err := unmarshal.Unmarshal(memberObject(good), od); err != nil {
		// Not expected once every member decoded alone; still report it.
		return &clusterv3.OutlierDetection{}, append(errs, &FieldError{Reason: "outlier_detection is not valid: " + err.Error(), cause: err})
	}
	return od, errs
}

func singleMember(m member) []byte {
	key, _ := json.Marshal(m.key)
	return fmt.Appendf(nil, "{%s:%s}", key, m.value)
}

func unknownFieldError(key string) *FieldError {
	names := fields().names
	reason := "unknown field"
	if best := closestName(key, names); best != "" {
		reason = fmt.Sprintf("unknown field, did you mean %q?", best)
	}
	return &FieldError{
		Field:   key,
		Reason:  reason,
		Allowed: strings.Join(names, ", "),
	}
}

// valueError explains why protojson refused one field's value.
func valueError(fi *fieldInfo, raw json.RawMessage, cause error) *FieldError {
	fe := &FieldError{Field: fi.Name, Value: compact(raw), Allowed: fi.Allowed, cause: cause}
	switch fi.Kind {
	case Uint32:
		fe.Reason = "is not a number"
		if num, ok := numberText(raw); ok {
			if _, err := strconv.ParseUint(num, 10, 32); err == nil {
				// A number protojson still refused (e.g. a form it does not
				// accept); keep its words.
				fe.Reason = "is not a valid uint32: " + cause.Error()
			} else if f, err := strconv.ParseFloat(num, 64); err == nil && f != float64(int64(f)) {
				fe.Reason = "is not a whole number"
			} else {
				fe.Reason = "is out of range"
			}
		}
	case Duration:
		fe.Reason = "is not a valid duration"
		fe.Allowed = `seconds with an "s" suffix, e.g. "30s" or "1.5s"`
		if hint := durationHint(raw); hint != "" {
			fe.Allowed += "; " + hint
		}
	case Bool:
		fe.Reason = "is not a boolean"
	}
	return fe
}

// durationHint suggests the proto JSON spelling of a duration that Go would
// understand ("1500ms" → "1.5s"). Proto JSON only has the "s" unit, so
// Envoy refuses "1500ms" in a config file even though it looks natural.
func durationHint(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		if num, ok := numberText(raw); ok {
			return fmt.Sprintf("write %q for %s seconds", num+"s", num)
		}
		return ""
	}
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return fmt.Sprintf("write %q for %s seconds", s+"s", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("write %q for %s", formatDuration(durationpb.New(d)), s)
}

// numberText returns the text of a JSON number, or of a JSON string holding
// one (proto JSON accepts quoted integers).
func numberText(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	switch v := v.(type) {
	case json.Number:
		return v.String(), true
	case string:
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// member is one key of a JSON object, in document order.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers lists the members of a JSON object in order. isObject is
// false (with no error) when doc is valid JSON but not an object.
func objectMembers(doc []byte) (members []member, isObject bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, false, nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, true, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, true, err
		}
		members = append(members, member{key: key, value: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, true, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, true, fmt.Errorf("unexpected data after the object")
	}
	return members, true, nil
}

func findMember(members []member, names ...string) (member, bool) {
	for _, m := range members {
		for _, n := range names {
			if m.key == n {
				return m, true
			}
		}
	}
	return member{}, false
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// compact renders a JSON value on one line, as the user's value in errors.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	const limit = 60
	if b.Len() > limit {
		return string(b.Bytes()[:limit]) + "…"
	}
	return b.String()
}

func jsonKind(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '[':
		return "a list"
	case '"':
		return "a string " + compact(raw)
	case '{':
		return "a mapping"
	case 't', 'f':
		return "a boolean " + compact(raw)
	case 'n':
		return "null"
	}
	return "a number " + compact(raw)
}

// closestName returns the known name nearest to key by edit distance, if
// it is near enough to be a likely typo.
func closestName(key string, names []string) string {
	best, bestDist := "", len(key)/3+2
	for _, n := range names {
		if d := editDistance(strings.ToLower(key), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
