// Package challenges is the tuning challenges the lab ships: one markdown
// file per challenge, with YAML front matter (see engine/challenge for the
// format, and `outlierlab challenge -check` for what is proved of it). It
// holds no logic.
package challenges

import "embed"

// FS holds every challenge file (*.md at the package root).
//
//go:embed *.md
var FS embed.FS
