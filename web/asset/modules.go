package asset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// The lab's own scripts are ES modules under static/js that import each
// other by relative path (import { x } from './chart.js'). A page loads
// the entry module by its hashed URL (URL), but the browser resolves the
// imports inside it itself: left as written, './chart.js' would be
// fetched without its hash and revalidated on every load, and a new
// build could pair a cached entry with a changed import. So each module's
// relative imports are rewritten, as the files are loaded, to the hashed
// URLs of what they import, and a module's own hash is taken over the
// rewritten body: a change in any module changes the hash of every module
// that imports it, up to the entry the page names. No build step, no
// import map (which would be an inline script the CSP must allow).

// importSpec finds a static import or re-export's relative specifier:
// `from './x.js'`, `import './x.js'` (the quote kept in group 1).
var importSpec = regexp.MustCompile(`(?m)(?:\bfrom|^\s*import)\s*(['"])(\.{1,2}/[^'"?]+\.js)(['"])`)

// Modules are the hashed URLs of every module under js/ but entry, by
// name: a page preloads them (rel=modulepreload) so that the browser
// fetches the whole graph at once instead of an import's depth of round
// trips (four on a 300 ms link).
func (a *Assets) Modules(entry string) []string {
	var names []string
	for name := range a.byName {
		if isModule(name) && name != entry {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = a.URL(n)
	}
	return out
}

// isModule reports whether a static file is one of the lab's modules.
func isModule(name string) bool {
	return strings.HasPrefix(name, "js/") && strings.HasSuffix(name, ".js")
}

// linkModules rewrites every module's relative imports to hashed URLs
// and hashes it again (deepest imports first). An import of a file that
// is not embedded, or a cycle, is an error: the page would fail to load.
func linkModules(a *Assets) error {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, from []string) error
	visit = func(name string, from []string) error {
		switch state[name] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("static/%s: import cycle %s → %s", name, strings.Join(from, " → "), name)
		}
		state[name] = 1
		f := a.byName[name]
		var err error
		body := importSpec.ReplaceAllStringFunc(string(f.body), func(m string) string {
			sm := importSpec.FindStringSubmatch(m)
			dep := path.Join(path.Dir(name), sm[2])
			d := a.byName[dep]
			if d == nil {
				if err == nil {
					err = fmt.Errorf("static/%s imports %s, which is not embedded", name, sm[2])
				}
				return m
			}
			if isModule(dep) {
				if e := visit(dep, append(from, name)); e != nil && err == nil {
					err = e
				}
			}
			return strings.Replace(m, sm[2], sm[2]+"?v="+d.hash, 1)
		})
		if err != nil {
			return err
		}
		f.body = []byte(body)
		sum := sha256.Sum256(f.body)
		f.hash = hex.EncodeToString(sum[:])[:12]
		state[name] = 2
		return nil
	}
	for name := range a.byName {
		if isModule(name) {
			if err := visit(name, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
