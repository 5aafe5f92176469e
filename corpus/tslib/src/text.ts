/** Text helpers: slugs, title case and truncation. */

const SMALL_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'but', 'by', 'for', 'in', 'of', 'on', 'or', 'the', 'to']);

/** A URL slug: lower case ASCII words joined by `separator`, accents dropped. */
export function slugify(text: string, separator: string = '-'): string {
  const plain = text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  const words = plain.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 0);
  return words.join(separator);
}

/** Each word capitalised, but the small ones inside the title. */
export function titleCase(text: string): string {
  const words = text.trim().split(/\s+/);
  return words
    .map((word, index) => {
      const lower = word.toLowerCase();
      const inner = index > 0 && index < words.length - 1;
      if (inner && SMALL_WORDS.has(lower)) {
        return lower;
      }
      return lower.charAt(0).toUpperCase() + lower.slice(1);
    })
    .join(' ');
}

/** `text` cut to at most `width` characters, ending with `ellipsis` when cut, at a word boundary when one is near. */
export const truncate = (text: string, width: number, ellipsis: string = '…'): string => {
  if (width < ellipsis.length) {
    throw new RangeError(`width ${width} is narrower than the ellipsis`);
  }
  if (text.length <= width) {
    return text;
  }
  const room = width - ellipsis.length;
  const cut = text.slice(0, room);
  const space = cut.lastIndexOf(' ');
  const head = space > room / 2 ? cut.slice(0, space) : cut;
  return head.trimEnd() + ellipsis;
};
