/** Versions of the form MAJOR.MINOR.PATCH[-PRERELEASE]: parsed, compared, bumped. */

export interface Version {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
}

const PATTERN = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

export function parseVersion(text: string): Version {
  const match = PATTERN.exec(text.trim());
  if (match === null) {
    throw new SyntaxError(`not a version: ${text}`);
  }
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease: match[4] === undefined ? [] : match[4].split('.'),
  };
}

function compareIdentifiers(a: string, b: string): number {
  const numericA = /^\d+$/.test(a);
  const numericB = /^\d+$/.test(b);
  if (numericA && numericB) {
    return Math.sign(Number(a) - Number(b));
  }
  if (numericA !== numericB) {
    return numericA ? -1 : 1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** -1, 0 or 1 as `a` precedes, equals or follows `b` (a prerelease precedes its release). */
export function compareVersions(a: string, b: string): number {
  const left = parseVersion(a);
  const right = parseVersion(b);
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (left[key] !== right[key]) {
      return left[key] < right[key] ? -1 : 1;
    }
  }
  if (left.prerelease.length === 0 || right.prerelease.length === 0) {
    return Math.sign(right.prerelease.length - left.prerelease.length) || 0;
  }
  const shared = Math.min(left.prerelease.length, right.prerelease.length);
  for (let i = 0; i < shared; i++) {
    const order = compareIdentifiers(left.prerelease[i], right.prerelease[i]);
    if (order !== 0) {
      return order;
    }
  }
  return Math.sign(left.prerelease.length - right.prerelease.length);
}

export type Part = 'major' | 'minor' | 'patch';

/** The next version after `text` at `part`, the lower parts reset and any prerelease dropped. */
export function bumpVersion(text: string, part: Part): string {
  const v = parseVersion(text);
  if (part === 'major') {
    return `${v.major + 1}.0.0`;
  }
  if (part === 'minor') {
    return `${v.major}.${v.minor + 1}.0`;
  }
  if (v.prerelease.length > 0) {
    return `${v.major}.${v.minor}.${v.patch}`;
  }
  return `${v.major}.${v.minor}.${v.patch + 1}`;
}
