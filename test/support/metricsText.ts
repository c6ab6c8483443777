/** Reads samples out of a Prometheus text exposition (what a scraper sees), for assertions. */
export function samples(text: string, name: string, labels: Record<string, string> = {}): number[] {
  const found: number[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) found.push(Number(m[3]));
  }
  return found;
}

/** The sum of the matching samples (0 when none). */
export const sampleSum = (text: string, name: string, labels: Record<string, string> = {}) => samples(text, name, labels).reduce((a, b) => a + b, 0);
