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
// the run's client proxies have it ejected after each sweep (each proxy
// has its own detector, engine/sim/mesh.go). With one client it is the
// Ejections lanes again, one proxy's.
const ChartMesh = "chart-mesh"

var meshChartEntry = Chart{ID: ChartMesh, Size: "wide", Title: "Ejected by k of N clients",
	Caption: "each client proxy has its own detector: the darker a cell, the more clients have that host ejected after that sweep, dark red all of them; the other charts show the first client's · ejections_active summed over clients counts a host once per client",
	Height:  lanesHeight, Build: meshChart, Points: meshPoints, Alt: meshAlt}

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
