// Package asset serves the embedded static files: content-hashed URLs,
// ETags, and the gzip and brotli copies `make assets` wrote (or gzip made
// on first use).
package asset

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"outlierlab/web/gzipstream"
)

// asset is one embedded file with what it takes to serve it well: a content
// hash for cache-busting URLs and an ETag, and a gzip copy made on first use
// or, for a vendored file, gzip and brotli copies made by `make assets`
// (the ECharts bundle is 595 KB raw, 198 KB gzipped, 166 KB in brotli: on
// a crowded room's Wi-Fi it is most of a first load).
type asset struct {
	name    string
	body    []byte
	hash    string // first 12 hex digits of the SHA-256 of body
	ctype   string
	gzOnce  sync.Once
	gzipped []byte
	brotli  []byte // precompressed (FILE.br), or nil
}

// Assets indexes the embedded files by their path under /static/.
type Assets struct {
	byName map[string]*asset
}

func LoadAssets(fsys fs.FS) (*Assets, error) {
	a := &Assets{byName: map[string]*asset{}}
	err := fs.WalkDir(fsys, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		if path.Ext(name) == ".css" {
			body = StripCSSComments(body)
		}
		sum := sha256.Sum256(body)
		ctype := mime.TypeByExtension(path.Ext(name))
		if path.Ext(name) == ".js" {
			// Not the system's MIME table's guess: a module must be served
			// as JavaScript, whatever /etc/mime.types says.
			ctype = "text/javascript; charset=utf-8"
		}
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		a.byName[name] = &asset{name: name, body: body, hash: hex.EncodeToString(sum[:])[:12], ctype: ctype}
		return nil
	})
	if err != nil {
		return nil, err
	}
	attachPrecompressed(a)
	if err := linkModules(a); err != nil {
		return nil, err
	}
	return a, nil
}

// URL is the cache-busting address of a file: templates call it instead of
// writing /static/ paths, so a new build never meets a stale cached copy.
func (a *Assets) URL(name string) string {
	if f := a.byName[name]; f != nil {
		return "/static/" + name + "?v=" + f.hash
	}
	return "/static/" + name
}

func (f *asset) gz() []byte {
	f.gzOnce.Do(func() {
		if f.gzipped != nil { // precompressed
			return
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(f.body)
		_ = zw.Close()
		if b.Len() < len(f.body) {
			f.gzipped = b.Bytes()
		}
	})
	return f.gzipped
}

// ServeHTTP serves /static/{name}. A request carrying the current hash as
// ?v= is cached for a year (the URL changes when the file does); any other
// is revalidated with the ETag.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	f := a.byName[name]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("ETag", `"`+f.hash+`"`)
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == f.hash {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body := f.body
	switch enc := r.Header.Get("Accept-Encoding"); {
	case f.brotli != nil && gzipstream.Accepts(enc, "br"):
		h.Set("Content-Encoding", "br")
		body = f.brotli
	case gzipstream.Accepts(enc, "gzip"):
		if gz := f.gz(); gz != nil {
			h.Set("Content-Encoding", "gzip")
			body = gz
		}
	}
	// ServeContent answers If-None-Match from the ETag set above.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
}

// StripCSSComments is css without its comments and blank lines: the
// stylesheets explain themselves at length, and the first load's budget
// (TestBrowserFirstLoadBudget, 250 KB) has no room for explanations a
// browser skips (about 4.7 KB of the three stylesheets gzipped). Quoted
// strings are kept as they are, a "/*" inside one included.
func StripCSSComments(css []byte) []byte {
	out := make([]byte, 0, len(css))
	for i := 0; i < len(css); i++ {
		c := css[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(css) && css[j] != c {
				if css[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(css)-1)
			out = append(out, css[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(css) && css[i+1] == '*':
			end := bytes.Index(css[i+2:], []byte("*/"))
			if end < 0 {
				i = len(css) // an unclosed comment runs to the end
				break
			}
			i += 2 + end + 1
		default:
			out = append(out, c)
		}
	}
	// Lines left empty by a comment go too.
	lines := bytes.Split(out, []byte("\n"))
	kept := lines[:0]
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) > 0 {
			kept = append(kept, l)
		}
	}
	return append(bytes.Join(kept, []byte("\n")), '\n')
}
