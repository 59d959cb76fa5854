package gzipstream

import (
	"strconv"
	"strings"
)

// Accepts reports whether an Accept-Encoding header takes coding:
// named (or "*") with a q-value above 0 (RFC 9110 §12.5.3; "br;q=0"
// refuses brotli).
// It is the one reading of Accept-Encoding: pages, static files and
// streams all ask it.
func Accepts(header, coding string) bool {
	star := false
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != coding && name != "*" {
			continue
		}
		ok := true
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				ok = err == nil && q > 0
			}
		}
		if name == coding {
			return ok
		}
		star = ok
	}
	return star
}
