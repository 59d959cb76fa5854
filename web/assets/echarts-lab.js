// The ECharts build the lab embeds: echarts/core and only the charts and
// components the lab's options use (the Go builders in web/ — charts.go,
// chartmarks.go, chart_compare.go, compare_chart.go, sweep_view.go — and
// web/static/js). `make assets` bundles it with esbuild into
// web/static/vendor/echarts.min.js, about a third of the full build's
// bytes (issue 26: the full build was 73% of a first load).
//
// A chart type or component missing here is not an error in the minified
// build: its series or component is silently not drawn. Adding one to an
// option means adding its part here (ECharts' dev build says
// "Component X is used but not imported"; `make echarts-dev` builds it).
import * as echarts from 'echarts/core';
import { LineChart, BarChart, ScatterChart, HeatmapChart } from 'echarts/charts';
import {
  GridComponent,
  LegendComponent, // plain and scroll (the lanes' legend is type: 'scroll')
  TooltipComponent,
  TitleComponent, // the compare chart's two titles
  VisualMapComponent, // piecewise: the lanes' and compare heatmaps' cell colours
  MarkAreaComponent, // faults, panic
  MarkLineComponent, // events, the success-rate threshold
} from 'echarts/components';
// SVG for the printable handout (web/handout): 21 KB (8 KB gzipped) more.
import { CanvasRenderer, SVGRenderer } from 'echarts/renderers';

echarts.use([
  LineChart, BarChart, ScatterChart, HeatmapChart,
  GridComponent, LegendComponent, TooltipComponent, TitleComponent,
  VisualMapComponent, MarkAreaComponent, MarkLineComponent,
  CanvasRenderer, SVGRenderer,
]);

// js/chart.js reaches ECharts as window.echarts (init, getInstanceByDom), as it
// did the full build's UMD global.
export * from 'echarts/core';
