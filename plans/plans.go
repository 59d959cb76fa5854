// Package plans is the workshop plans the lab ships: one markdown file per
// plan, with YAML front matter (see engine/plan for the format, and
// `outlierlab plan -check` for what is proved of it). It holds no logic.
package plans

import "embed"

// FS holds every plan file (*.md at the package root).
//
//go:embed *.md
var FS embed.FS
