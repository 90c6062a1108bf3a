// The figures of a benchmark's report (scripts/bench.ts, scripts/bench-scale.ts): medians of rounds,
// ratios taken round by round, aligned tables. Pure, so that a test can hold them without a run.
export const median = (values: number[]): number => {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** Rows as aligned columns: the first `textColumns` to the left, the figures to the right. */
export function table(rows: string[][], textColumns = 3): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column < textColumns ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export const loadText = (load: number[]): string => load.map((value) => value.toFixed(1)).join(' ');
export const fixed = (value: number, digits: number): string => (Number.isNaN(value) ? '-' : value.toFixed(digits));
export const ratio = (value: number): string => (Number.isNaN(value) ? '' : `${value.toFixed(2)}×`);

/** Round by round, one figure of `a` over the same round's of `b` (the rounds are interleaved, so a noisy moment hurts both). */
export function perRound<S>(a: S[], b: S[], figure: (sample: S) => number): number[] {
  return a.map((sample, round) => (b[round] ? figure(sample) / figure(b[round]) : Number.NaN)).filter((value) => Number.isFinite(value));
}

/** A ratio as a reader can trust it: the median of the rounds, with their min–max. */
export function spread(measured: number[]): string {
  const values = measured.filter((value) => Number.isFinite(value));
  if (values.length === 0) return '';
  return values.length === 1
    ? ratio(values[0]!)
    : `${ratio(median(values))} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
}
