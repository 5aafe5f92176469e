/** Durations: "1h 30m" to milliseconds and back. */

export type Unit = 'ms' | 's' | 'm' | 'h' | 'd' | 'w';

const FACTORS: Record<Unit, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const ORDER: Unit[] = ['w', 'd', 'h', 'm', 's', 'ms'];

/** The milliseconds of a duration such as "1h30m", "2d 4h" or "-90s"; throws on anything else. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (trimmed === '') {
    throw new RangeError('empty duration');
  }
  const negative = trimmed.startsWith('-');
  const body = negative ? trimmed.slice(1) : trimmed;
  const part = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*/gy;
  let total = 0;
  let seen = 0;
  let match: RegExpExecArray | null;
  while ((match = part.exec(body)) !== null) {
    total += parseFloat(match[1]) * FACTORS[match[2] as Unit];
    seen = part.lastIndex;
  }
  if (seen !== body.length || seen === 0) {
    throw new SyntaxError(`not a duration: ${text}`);
  }
  return negative ? -total : total;
}

/** `ms` as its largest units, at most `parts` of them: formatDuration(5400000) is "1h 30m". */
export function formatDuration(ms: number, parts: number = 2): string {
  if (!Number.isFinite(ms)) {
    throw new RangeError(`not a finite duration: ${ms}`);
  }
  if (ms === 0) {
    return '0ms';
  }
  let rest = Math.abs(Math.round(ms));
  const out: string[] = [];
  for (const unit of ORDER) {
    const count = Math.floor(rest / FACTORS[unit]);
    if (count > 0 && out.length < parts) {
      out.push(`${count}${unit}`);
      rest -= count * FACTORS[unit];
    }
  }
  const sign = ms < 0 ? '-' : '';
  return sign + (out.length > 0 ? out.join(' ') : '0ms');
}
