package envoyconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// checker reads a JSON document against a proto message type one member
// at a time, so that every unknown field and every refused value is
// reported with its full path ("circuit_breakers.thresholds[0].max_retries"),
// not with the offset into a re-encoded document that protojson would give.
// What it returns is the document with every Any whose type the binary
// does not know replaced by an empty one (and a note saying so): the lab
// reads a cluster's outlier and retry settings, not its TLS extensions.
type checker struct {
	// decode is the loader whose rules apply: protojson for Envoy (which
	// loads YAML through the proto JSON parser), the legacy jsonpb for
	// Istio (istiod's protomarshal.Unmarshal).
	decode func(data []byte, msg proto.Message) error
	// camel names fields by their JSON name (Istio's documents are written
	// so); otherwise by the proto name (Envoy's are).
	camel bool
	// durationHelp is what a duration value may look like.
	durationHelp string
	// special handles a path itself (outlier_detection, with its own
	// field-named checks) and returns the value to keep.
	special map[string]func(raw json.RawMessage, path string) json.RawMessage
	errs    []*FieldError
	notes   []string
}

// message checks one JSON object against md and returns it cleaned.
func (c *checker) message(md protoreflect.MessageDescriptor, raw json.RawMessage, path string) json.RawMessage {
	members, isObject, err := objectMembers(raw)
	if err != nil || !isObject {
		c.errs = append(c.errs, &FieldError{Field: path, Value: jsonKind(raw), Reason: "is not a mapping", Allowed: "a mapping of " + string(md.Name()) + " fields", cause: err})
		return raw
	}
	seen := map[protoreflect.FieldNumber]string{}
	out := make([]member, 0, len(members))
	for _, m := range members {
		fd := fieldByKey(md, m.key)
		if fd == nil {
			c.errs = append(c.errs, c.unknown(md, joinPath(path, m.key), m.key))
			continue
		}
		p := joinPath(path, c.name(fd))
		if prev, dup := seen[fd.Number()]; dup {
			c.errs = append(c.errs, &FieldError{Field: p, Reason: fmt.Sprintf("is set twice (as %q and %q)", prev, m.key), Allowed: "one value per field"})
			continue
		}
		seen[fd.Number()] = m.key
		if h := c.special[p]; h != nil {
			m.value = h(m.value, p)
		} else {
			m.value = c.value(md, fd, m, p)
		}
		out = append(out, m)
	}
	return memberObject(out)
}

// value checks one member: messages, lists and maps of messages are
// walked into; anything else is decoded alone.
func (c *checker) value(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, m member, path string) json.RawMessage {
	if isNull(m.value) {
		return m.value
	}
	switch {
	case fd.IsMap() && walkable(fd.MapValue()):
		entries, isObject, err := objectMembers(m.value)
		if err != nil || !isObject {
			break
		}
		for i, e := range entries {
			entries[i].value = c.composite(fd.MapValue().Message(), e.value, path+"["+e.key+"]")
		}
		return memberObject(entries)
	case fd.IsList() && walkable(fd):
		var elems []json.RawMessage
		if err := json.Unmarshal(m.value, &elems); err != nil {
			break
		}
		for i, e := range elems {
			elems[i] = c.composite(fd.Message(), e, fmt.Sprintf("%s[%d]", path, i))
		}
		out, _ := json.Marshal(elems)
		return out
	case !fd.IsList() && !fd.IsMap() && walkable(fd):
		return c.composite(fd.Message(), m.value, path)
	}
	if err := c.decode(singleMember(m), newMessage(md)); err != nil {
		c.errs = append(c.errs, c.leafError(fd, path, m.value, err))
	}
	return m.value
}

// composite checks a message value: an Any by its type, others field by field.
func (c *checker) composite(md protoreflect.MessageDescriptor, raw json.RawMessage, path string) json.RawMessage {
	if isNull(raw) {
		return raw
	}
	if md.FullName() == "google.protobuf.Any" {
		return c.anyValue(raw, path)
	}
	return c.message(md, raw, path)
}

// anyValue walks into an Any of a type the binary knows; one it does not
// know (an extension the lab has no proto for) becomes an empty Any, noted.
func (c *checker) anyValue(raw json.RawMessage, path string) json.RawMessage {
	members, isObject, err := objectMembers(raw)
	if err != nil || !isObject {
		c.errs = append(c.errs, &FieldError{Field: path, Value: jsonKind(raw), Reason: "is not a mapping", Allowed: `a typed config with an "@type"`, cause: err})
		return raw
	}
	typ, ok := findMember(members, "@type")
	var url string
	if !ok || json.Unmarshal(typ.value, &url) != nil || url == "" {
		c.errs = append(c.errs, &FieldError{Field: path + ".@type", Reason: "is missing", Allowed: `a type URL such as "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions"`})
		return raw
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(url)
	if err != nil {
		c.notes = append(c.notes, fmt.Sprintf("%s: type %s is not one the lab knows, so it was not checked (it does not change outlier detection)", path, url))
		empty, _ := json.Marshal(map[string]string{"@type": "type.googleapis.com/" + string((&emptypb.Empty{}).ProtoReflect().Descriptor().FullName())})
		return empty
	}
	md := mt.Descriptor()
	if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return raw // a well-known type: {"@type": ..., "value": ...}, decoded whole later
	}
	var rest []member
	for _, m := range members {
		if m.key != "@type" {
			rest = append(rest, m)
		}
	}
	checked, _, _ := objectMembers(c.message(md, memberObject(rest), path))
	return memberObject(append([]member{typ}, checked...))
}

// walkable: a message field the checker walks into (well-known types such
// as Duration and UInt32Value have their own JSON forms and are leaves).
func walkable(fd protoreflect.FieldDescriptor) bool {
	if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
		return false
	}
	name := string(fd.Message().FullName())
	return name == "google.protobuf.Any" || !strings.HasPrefix(name, "google.protobuf.")
}

func fieldByKey(md protoreflect.MessageDescriptor, key string) protoreflect.FieldDescriptor {
	fds := md.Fields()
	if fd := fds.ByName(protoreflect.Name(key)); fd != nil {
		return fd
	}
	return fds.ByJSONName(key)
}

func newMessage(md protoreflect.MessageDescriptor) proto.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.New().Interface()
	}
	return dynamicpb.NewMessage(md)
}

func (c *checker) name(fd protoreflect.FieldDescriptor) string {
	if c.camel {
		return fd.JSONName()
	}
	return string(fd.Name())
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// unknown names a key md has no field for, with the nearest field name.
func (c *checker) unknown(md protoreflect.MessageDescriptor, path, key string) *FieldError {
	var names []string
	fds := md.Fields()
	for i := range fds.Len() {
		names = append(names, c.name(fds.Get(i)))
	}
	fe := &FieldError{Field: path, Reason: "unknown field"}
	if best := closestName(key, names); best != "" && best != key {
		fe.Reason = fmt.Sprintf("unknown field, did you mean %q?", best)
	}
	if len(names) <= 12 {
		fe.Allowed = strings.Join(names, ", ")
	} else {
		fe.Reason += " (not a field of " + string(md.FullName()) + ")"
	}
	return fe
}

// protoErrPrefix is protojson's "proto: (line 1:2): " (it separates the
// parts with a space or, at random, a no-break space).
var protoErrPrefix = regexp.MustCompile(`^proto:[\s\x{00a0}]*(\(line \d+:\d+\):[\s\x{00a0}]*)?`)

// leafError says why the loader refused one value, in the words of the
// value's kind, with the range its validation rules allow.
func (c *checker) leafError(fd protoreflect.FieldDescriptor, path string, raw json.RawMessage, cause error) *FieldError {
	fe := &FieldError{Field: path, Value: compact(raw), Allowed: rulesAllowed(fd), cause: cause}
	kind, leaf := fd.Kind(), fd
	if fd.Message() != nil && fd.Message().Fields().ByName("value") != nil && strings.HasSuffix(string(fd.Message().FullName()), "Value") {
		leaf = fd.Message().Fields().ByName("value") // a wrapper: UInt32Value, DoubleValue, ...
		kind = leaf.Kind()
	}
	switch {
	case fd.IsList() && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")):
		fe.Reason = "is not a list"
	case fd.IsMap() && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")):
		fe.Reason = "is not a mapping"
	case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Duration":
		fe.Reason, fe.Allowed = "is not a valid duration", c.durationHelp
	case kind == protoreflect.BoolKind:
		fe.Reason, fe.Allowed = "is not a boolean", "true or false"
	case kind == protoreflect.EnumKind:
		fe.Reason, fe.Allowed = "is not one of the allowed values", enumNames(leaf.Enum())
	case isNumberKind(kind):
		fe.Reason = "is not a number"
		if num, ok := numberText(raw); ok {
			fe.Reason = "is out of range"
			if f, err := strconv.ParseFloat(num, 64); err == nil && f != math.Trunc(f) && kind != protoreflect.FloatKind && kind != protoreflect.DoubleKind {
				fe.Reason = "is not a whole number"
			}
		}
		if fe.Allowed == "" {
			fe.Allowed = kindRange(kind)
		}
	case kind == protoreflect.StringKind:
		fe.Reason = "is not a string"
	default:
		fe.Reason = "is not valid: " + protoErrPrefix.ReplaceAllString(cause.Error(), "")
	}
	return fe
}

func isNumberKind(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind,
		protoreflect.FloatKind, protoreflect.DoubleKind:
		return true
	}
	return false
}

func kindRange(k protoreflect.Kind) string {
	switch k {
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "0–4294967295"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "-2147483648–2147483647"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "0–18446744073709551615"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a number"
	}
	return "a whole number"
}

func enumNames(ed protoreflect.EnumDescriptor) string {
	vals := ed.Values()
	names := make([]string, 0, vals.Len())
	for i := range vals.Len() {
		names = append(names, string(vals.Get(i).Name()))
	}
	return strings.Join(names, ", ")
}

// formatNumber writes a float the way a user would ("50", "33.5").
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// uniqueNotes returns the notes without duplicates, in order of first appearance.
func uniqueNotes(notes []string) []string {
	var out []string
	for _, n := range notes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
