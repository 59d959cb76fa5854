package asset

import (
	"strings"
)

// attachPrecompressed moves each embedded FILE.gz and FILE.br (written by
// `make assets`, web/assets/precompress.mjs) onto FILE's asset as its
// encoded bodies, out of the URL space: /static/vendor/echarts.min.js.br
// is not a file of its own. A .gz or .br with no FILE beside it stays a
// plain file.
func attachPrecompressed(a *Assets) {
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
