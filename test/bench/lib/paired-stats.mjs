// Statistics of the paired benchmark rounds: each variant's figure divided by the uninstrumented one of the same
// round, summarised by the median (this machine's speed drifts between processes and over minutes).

const sorted = (values) => [...values].sort((a, b) => a - b);

export const median = (values) => sorted(values)[Math.floor(values.length / 2)];

export const quartiles = (values) => [sorted(values)[Math.floor(values.length / 4)], sorted(values)[Math.floor((values.length * 3) / 4)]];

/**
 * A 95 % interval for the median of `values`: the 2.5th and 97.5th percentiles of the medians of 2,000 resamples.
 * The seed is fixed, so the same figures always give the same interval.
 */
export function medianInterval(values) {
  let seed = 0x2f6b1d;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const medians = sorted(Array.from({ length: 2000 }, () => median(values.map(() => values[Math.floor(random() * values.length)]))));
  return [medians[50], medians[1949]];
}

/** A ratio as a signed difference: 1.032 → `+3.2%`. */
export const percent = (ratio) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

/**
 * How `rows` compare with `baseline`, round by round, on `key`: the median of the per-round ratios, their quartiles
 * and the 95 % interval of the median, as `+1.6% (+0.6%..+4.0%; median +1.0%..+2.3%)`.
 */
export function pairedSummary(rows, baseline, key) {
  const ratios = rows.map((row, round) => row[key] / baseline[round][key]);
  const [low, high] = quartiles(ratios);
  const [lowMedian, highMedian] = medianInterval(ratios);
  return `${percent(median(ratios))} (${percent(low)}..${percent(high)}; median ${percent(lowMedian)}..${percent(highMedian)})`;
}
