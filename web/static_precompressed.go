package web

import (
	"strconv"
	"strings"
)

// attachPrecompressed moves each embedded FILE.gz and FILE.br (written by
// `make assets`, web/assets/precompress.mjs) onto FILE's asset as its
// encoded bodies, out of the URL space: /static/vendor/echarts.min.js.br
// is not a file of its own. A .gz or .br with no FILE beside it stays a
// plain file.
func attachPrecompressed(a *assets) {
	for name, f := range a.byName {
		for _, ext := range []string{".gz", ".br"} {
			base, ok := strings.CutSuffix(name, ext)
			if !ok {
				continue
			}
			orig := a.byName[base]
			if orig == nil {
				continue
			}
			if ext == ".gz" {
				orig.gzipped = f.body
			} else {
				orig.brotli = f.body
			}
			delete(a.byName, name)
		}
	}
}

// acceptsEncoding reports whether an Accept-Encoding header takes coding:
// named (or "*") with a q-value above 0 (RFC 9110 §12.5.3; "br;q=0"
// refuses brotli).
func acceptsEncoding(header, coding string) bool {
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
