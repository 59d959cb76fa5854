package chart

import (
	"fmt"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/web/tabstate"
)

// ChartMesh is the mesh's chart: each host's lane, shaded by how many of
// the run's client proxies have it ejected at each tick (each proxy
// has its own detector, engine/sim/mesh.go). With one client it is the
// Ejections lanes again, one proxy's.
const ChartMesh = "chart-mesh"

var meshChartEntry = Chart{ID: ChartMesh, Size: "wide", Title: "Ejected by k of N clients",
	Caption: "each client proxy has its own detector: the darker a cell, the more clients have that host ejected at that tick, dark red all of them; the other charts show the first client's · ejections_active summed over clients counts a host once per client",
	Height:  lanesHeight, Build: meshChart, Points: meshPoints, Alt: meshAlt, Only: meshOnly}

// meshOnly shows the mesh's charts for a run of more than one client
// proxy: with one, the heatmap is the Ejections lanes again and the
// volume chart is one Envoy's counts, which say nothing about a mesh; and
// two more wide charts pushed the others off the projector view and the
// 390 px page (TestBrowserLook). The signal is the Client proxies
// slider's (cfg.clients); a lesson without that slider keeps the server's
// state instead (lab.lessonBoxes).
var meshOnly = &Only{
	Run:     func(r *tabstate.Run) bool { return meshClients(r) > 1 },
	Signal:  "$cfg.clients > 1",
	Control: "clients",
}

// meshClients is the run's client count.
func meshClients(r *tabstate.Run) int { return r.Scenario.Cluster.ClientCount() }

// ejectedBy is how many clients have host hi ejected after frame f.
func ejectedBy(f *scenario.Frame, hi int) int {
	if f.Mesh != nil {
		return f.Mesh.EjectedBy[hi]
	}
	if f.Hosts[hi].Ejected {
		return 1
	}
	return 0
}

// meshPoints are the heatmap's cells over frames[from:]: a host with k > 0
// clients ejecting it, named by its tooltip.
func meshPoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	n := meshClients(r)
	var cellsOut []any
	for i := from; i < len(frames); i++ {
		f := &frames[i]
		for hi := range f.Hosts {
			if k := ejectedBy(f, hi); k > 0 {
				cellsOut = append(cellsOut, map[string]any{"value": []int{i, hi, k},
					"name": fmt.Sprintf("%s ejected by %d of %d %s after %s", f.Hosts[hi].Name, k, n, tabstate.Plural(n, "client", "clients"), r.Times[i])})
			}
		}
	}
	return [][]any{cellsOut}
}

func meshChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	c := charts.NewHeatMap()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "")...)
	c.SetGlobalOptions(laneAxis(r.Hosts, opts.AxisLabel{FontSize: FontSize, Color: ColorText}), cellTooltip)
	c.AddSeries("ejected by", nil, cells(meshPoints(r, frames, 0)[0], ColorEjected)...)
	// Four shades from a few clients (light) to most (the lanes' ejected
	// colour), and dark red for every client, tied to the heatmap alone
	// (see lanesChart).
	return Patched{c, func(o map[string]any) {
		o["visualMap"] = []any{map[string]any{
			"type": "piecewise", "show": false, "seriesIndex": 0, "pieces": meshPieces(meshClients(r)),
		}}
	}}
}

// meshPieces shade k of n: quarters of (0, n), then n itself.
func meshPieces(n int) []any {
	shades := []string{"#FBE3D6", "#F4B183", "#E8804A", ColorEjected}
	out := []any{}
	lo := 0.0
	for q, c := range shades {
		hi := float64(n) * float64(q+1) / 4
		if q == len(shades)-1 {
			hi = float64(n) - 0.5
		}
		if hi > lo {
			out = append(out, map[string]any{"gt": lo, "lte": hi, "color": c})
			lo = hi
		}
	}
	return append(out, map[string]any{"gt": float64(n) - 0.5, "lte": float64(n), "color": ColorOverflow})
}

// meshAlt says which hosts some client has out at the cursor, and by how
// many clients, and the summed gauge.
func meshAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	i := len(frames) - 1
	f := &frames[i]
	n := meshClients(r)
	var out []string
	for hi, h := range f.Hosts {
		if k := ejectedBy(f, hi); k > 0 {
			out = append(out, fmt.Sprintf("%s by %d", h.Name, k))
		}
	}
	sum := f.Stats[engine.StatEjectionsActive] // one client's
	if f.Mesh != nil {
		sum = f.Mesh.EjectionsActiveSum
	}
	s := fmt.Sprintf("At %s no client has a host ejected", r.Times[i])
	if len(out) > 0 {
		s = fmt.Sprintf("At %s, of %d %s: %s", r.Times[i], n, tabstate.Plural(n, "client", "clients"), strings.Join(out, ", "))
	}
	return s + fmt.Sprintf("; ejections_active summed over clients is %d.", sum)
}

// ChartVolume is each host's requests per interval as the (first) client's
// detector counts them, against success_rate_request_volume: in a mesh,
// why success rate never runs.
const ChartVolume = "chart-volume"

var volumeChartEntry = Chart{ID: ChartVolume, Size: "wide", Title: "Requests per host, as one client's detector counts them",
	Caption: "requests each host served the (first) client in the interval; dashed: success_rate_request_volume, which a host needs to count for success rate (and five hosts need, by default) · in a mesh each proxy counts only its own share · events as above",
	Build:   volumeChart, Points: volumePoints, Alt: volumeAlt, Only: meshOnly}

// volumePoints are each host's counted requests over frames[from:], then
// the volume threshold at each frame.
func volumePoints(r *tabstate.Run, frames []scenario.Frame, from int) [][]any {
	out := make([][]any, len(r.Hosts)+1)
	for hi := range r.Hosts {
		data := make([]any, len(frames)-from)
		for i := from; i < len(frames); i++ {
			if hi < len(frames[i].Hosts) {
				data[i-from] = frames[i].Hosts[hi].Requests
			}
		}
		out[hi] = data
	}
	gate := make([]any, len(frames)-from)
	for i := range gate {
		gate[i] = r.Config.SuccessRateRequestVolume
	}
	out[len(r.Hosts)] = gate
	return out
}

func volumeChart(r *tabstate.Run, frames []scenario.Frame) JSONOption {
	c := charts.NewLine()
	c.SetXAxis(r.Times)
	c.SetGlobalOptions(Common(r, "")...)
	c.SetGlobalOptions(charts.WithYAxisOpts(YAxis("", 0, nil)), namedFirst(r.Hosts, "success_rate_request_volume", EventsSeries))
	points := volumePoints(r, frames, 0)
	for hi, name := range r.Hosts {
		c.AddSeries(name, nil, RawData(points[hi]), SeriesColor(hostColor(hi)), LineStyle(hostColor(hi), 2, ""),
			charts.WithSeriesOpts(noSymbol))
	}
	c.AddSeries("success_rate_request_volume", nil, RawData(points[len(r.Hosts)]), SeriesColor(ColorThreshold),
		LineStyle(ColorThreshold, 2, "dashed"), charts.WithSeriesOpts(noSymbol))
	return c
}

// volumeAlt: how many hosts reached the volume in the last interval.
func volumeAlt(r *tabstate.Run, frames []scenario.Frame) string {
	if len(frames) == 0 {
		return noFrame
	}
	f := &frames[len(frames)-1]
	need := r.Config.SuccessRateRequestVolume
	with, most := 0, uint64(0)
	for _, h := range f.Hosts {
		if h.Requests >= uint64(need) {
			with++
		}
		most = max(most, h.Requests)
	}
	return fmt.Sprintf("In the interval to %s, %d of %d hosts had the %d requests success rate needs from this client (the most: %d).",
		r.Times[len(frames)-1], with, len(f.Hosts), need, most)
}
