package web

import (
	"embed"
)

// The lab serves every byte the browser needs from the binary: no CDN, no
// web fonts, nothing leaves the machine (a workshop room may have no
// internet at all).
//
// If the build fails here with "pattern static/vendor/FETCH-WITH-make-assets-v2.stamp:
// no matching files found", the third-party browser files have not been
// fetched, or were fetched before the ECharts bundle: run `make assets` (it
// copies the Datastar client from its Go module, bundles ECharts from npm
// into the git-ignored static/vendor/ with a .gz and a .br of each, then
// writes the stamp). The stamp comes first so the compiler's message says
// what to do; every name is spelled out (a glob such as *.br that matches
// nothing is reported before it).
//
//go:embed static/vendor/FETCH-WITH-make-assets-v2.stamp static/css static/js static/progress.js static/favicon.svg static/vendor/datastar.js static/vendor/echarts.min.js static/vendor/datastar.js.gz static/vendor/datastar.js.br static/vendor/echarts.min.js.gz static/vendor/echarts.min.js.br
var staticFiles embed.FS
