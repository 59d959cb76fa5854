package templates

import "strings"

// applyStatic is the Datastar expression that draws a page's static charts
// (staticCharts): the options and heights embedded under id, handed to
// applyCharts (js/chart.js) as the lab's stream does.
func applyStatic(id string) string {
	return "applyCharts(JSON.parse(document.getElementById('" + id + "-options').textContent), true, " +
		"JSON.parse(document.getElementById('" + id + "-heights').textContent))"
}

// sweepClickJS makes a click on a sweep's point open its run in the lab:
// the point's url, a lab permalink.
const sweepClickJS = "; document.querySelectorAll('#sweep-charts .chart').forEach(el => echarts.getInstanceByDom(el).on('click', p => { if (p.data && p.data.url) location.assign(p.data.url) }))"

func joinComma(s []string) string { return strings.Join(s, ", ") }

// lintPost posts the tab's inputs to the lint panel's route.
const lintPost = "@post('/lab/lint', {filterSignals: {include: /^(preset|cfg|inject)(\\.|$)/}})"

// sweepHere opens a sweep of the settings shown (the address is the tab's
// permalink; the sweep keeps every setting in it but the swept one).
const sweepHere = "location.assign('/sweep?' + (location.search.slice(1) || 'preset=' + $preset) + '&param=max_ejection_percent')"
