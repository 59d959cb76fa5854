// Package lessons is the course's content: one markdown file per lesson,
// with YAML front matter (see engine/course for the schema, the check
// language and the placeholders). It holds no logic; engine/course loads
// and checks the files, the web layer renders them.
package lessons

import "embed"

// FS holds every lesson file (*.md at the package root).
//
//go:embed *.md
var FS embed.FS
