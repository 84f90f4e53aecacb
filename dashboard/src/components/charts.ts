import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  type Plugin,
  PointElement,
  Tooltip,
} from 'chart.js';
import { PARTIAL_TEXT } from './chart-panel.js';

/** chart.js, loaded only by the views with charts (its own chunk), with the parts they use registered. */
Chart.register(LineController, LineElement, PointElement, BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip, Filler);

const PALETTE = ['#2f7ed8', '#e6550d', '#31a354', '#9467bd', '#d62728', '#8c564b', '#17becf', '#bcbd22', '#7f7f7f', '#e377c2', '#636363'];
/** Dashes as well as colours, so lines can be told apart without colour. */
const DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3], [12, 4], [3, 6]];

const dark = (): boolean => window.matchMedia('(prefers-color-scheme: dark)').matches;

interface Series {
  label: string;
  data: (number | null)[];
}

export interface ChartSpec {
  kind: 'line' | 'bar';
  labels: string[];
  series: Series[];
  stacked?: boolean;
  percent?: boolean;
  title: string;
  /** Axis titles: what the ticks are and in which unit or time zone. */
  xTitle?: string;
  yTitle?: string;
  /** The index of the first step whose counts are not final yet (the API's `partialFrom`): shaded, its data paler. */
  partialFrom?: number;
}

/** Shades the steps from `from` on, behind the data, and labels them: a short last step reads as such, not as a dip. */
function partialShade(from: number, fill: string, text: string): Plugin<'line' | 'bar'> {
  return {
    id: 'extscopePartial',
    beforeDatasetsDraw(chart) {
      const x = chart.scales['x'];
      if (x === undefined) return;
      const { left: areaLeft, right, top, bottom } = chart.chartArea;
      const half = (chart.data.labels?.length ?? 0) > 1 ? (x.getPixelForValue(1) - x.getPixelForValue(0)) / 2 : 0;
      const left = Math.max(areaLeft, x.getPixelForValue(from) - half);
      const { ctx } = chart;
      ctx.save();
      ctx.fillStyle = fill;
      ctx.fillRect(left, top, right - left, bottom - top);
      // Above the plot (its top padding leaves room): no data is drawn there.
      ctx.fillStyle = text;
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = 'right';
      ctx.textBaseline = 'bottom';
      ctx.fillText(PARTIAL_TEXT, right, top - 2);
      ctx.restore();
    },
  };
}

/** A palette colour at a lower opacity (#rrggbb → rgba). */
function faded(hex: string, alpha: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

function axisTitle(text: string | undefined, color: string): { title?: { display: true; text: string; color: string } } {
  return text === undefined ? {} : { title: { display: true, text, color } };
}

const charts = new WeakMap<HTMLCanvasElement, Chart>();

export function draw(canvas: HTMLCanvasElement, spec: ChartSpec): void {
  charts.get(canvas)?.destroy();
  const text = dark() ? '#d6d6d6' : '#333';
  const grid = dark() ? 'rgba(255,255,255,0.12)' : 'rgba(0,0,0,0.08)';
  const partial = spec.partialFrom;
  const notFinal = (index: number): boolean => partial !== undefined && index >= partial;
  const chart = new Chart(canvas, {
    type: spec.kind,
    plugins: partial === undefined ? [] : [partialShade(partial, dark() ? 'rgba(255,255,255,0.07)' : 'rgba(0,0,0,0.05)', text)],
    data: {
      labels: spec.labels,
      datasets: spec.series.map((series, index) => {
        const color = PALETTE[index % PALETTE.length] ?? '#7f7f7f';
        return {
          label: series.label,
          data: series.data,
          borderColor: color,
          // Steps not final yet: paler bars and points, and a paler line into them (the legend keeps the full colour).
          backgroundColor: (context: { type: string; dataIndex: number }) =>
            context.type === 'data' && notFinal(context.dataIndex) ? faded(color, 0.35) : color,
          segment: { borderColor: (part: { p1DataIndex: number }) => (notFinal(part.p1DataIndex) ? faded(color, 0.35) : undefined) },
          borderDash: DASHES[index % DASHES.length],
          borderWidth: 2,
          // Sparse series (a few steps with data) would be invisible as lines alone.
          pointRadius: series.data.filter((value) => value !== null && value !== 0).length < 40 ? 3 : 0,
          pointHitRadius: 6,
          spanGaps: false,
          fill: false,
        };
      }),
    },
    options: {
      animation: false,
      layout: { padding: { top: partial === undefined ? 0 : 14 } },
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      plugins: {
        legend: { position: 'bottom', labels: { color: text, boxWidth: 18 } },
        tooltip: {
          callbacks: spec.percent
            ? { label: (item) => `${item.dataset.label ?? ''}: ${item.parsed.y === null ? '–' : `${(item.parsed.y * 100).toFixed(1)} %`}` }
            : {},
        },
      },
      scales: {
        x: { stacked: spec.stacked === true, ticks: { color: text, maxTicksLimit: 8, maxRotation: 0 }, grid: { color: grid }, ...axisTitle(spec.xTitle, text) },
        y: {
          stacked: spec.stacked === true,
          ...axisTitle(spec.yTitle, text),
          beginAtZero: true,
          ...(spec.percent ? { max: 1 } : {}),
          ticks: { color: text, ...(spec.percent ? { callback: (value: string | number) => `${Math.round(Number(value) * 100)} %` } : { precision: 0 }) },
          grid: { color: grid },
        },
      },
    },
  });
  charts.set(canvas, chart);
}
