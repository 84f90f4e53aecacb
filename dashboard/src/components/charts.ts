import { BarController, BarElement, CategoryScale, Chart, Filler, Legend, LineController, LineElement, LinearScale, PointElement, Tooltip } from 'chart.js';

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
}

function axisTitle(text: string | undefined, color: string): { title?: { display: true; text: string; color: string } } {
  return text === undefined ? {} : { title: { display: true, text, color } };
}

const charts = new WeakMap<HTMLCanvasElement, Chart>();

export function draw(canvas: HTMLCanvasElement, spec: ChartSpec): void {
  charts.get(canvas)?.destroy();
  const text = dark() ? '#d6d6d6' : '#333';
  const grid = dark() ? 'rgba(255,255,255,0.12)' : 'rgba(0,0,0,0.08)';
  const chart = new Chart(canvas, {
    type: spec.kind,
    data: {
      labels: spec.labels,
      datasets: spec.series.map((series, index) => ({
        label: series.label,
        data: series.data,
        borderColor: PALETTE[index % PALETTE.length],
        backgroundColor: PALETTE[index % PALETTE.length],
        borderDash: DASHES[index % DASHES.length],
        borderWidth: 2,
        // Sparse series (a few steps with data) would be invisible as lines alone.
        pointRadius: series.data.filter((value) => value !== null && value !== 0).length < 40 ? 3 : 0,
        pointHitRadius: 6,
        spanGaps: false,
        fill: false,
      })),
    },
    options: {
      animation: false,
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
