/**
 * Aligned text tables for the CLI's output: columns fitted to a width, long cells wrapped at spaces (or
 * after "/") onto continuation lines, never cut. The last column is the free text (a reason, a detail):
 * it keeps at least REASON_MIN characters; a table that cannot fit so is printed as stacked records,
 * one "KEY: value" line per cell, so that a narrow terminal never gets a reason one word a line.
 */

/** Width tables are fitted to when the output is not a terminal (a file, a pipe, a CI log). */
export const DEFAULT_WIDTH = 120;

const GAP = '  ';
/** A column is not wrapped narrower than this, nor than its longest unbreakable piece. */
const MIN_COLUMN = 8;
/** The last column (the reason) is not wrapped narrower than this: below it, records are stacked. */
export const REASON_MIN = 24;

export interface RenderOptions {
  /** Total width to fit tables into (the terminal's columns; DEFAULT_WIDTH otherwise). */
  readonly width?: number;
}

/**
 * Aligns columns. When the table is wider than `width`, the widest columns are narrowed and their cells
 * wrap at spaces (or after "/") onto continuation lines; no text is dropped. The last column keeps at
 * least REASON_MIN characters (or its own width, if less); when the others cannot give way enough without
 * splitting a name, each row is printed as a record of "KEY: value" lines instead (`stacked`). The last
 * column is not padded.
 */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: RenderOptions = {},
): string {
  const width = Math.max(40, options.width ?? DEFAULT_WIDTH);
  const cellsOf = (row: readonly string[]): string[] =>
    header.map((_, column) => (row[column] ?? '').replaceAll(/\s+/g, ' ').trim());
  const body = rows.map(cellsOf);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((row) => (row[column] ?? '').length)),
  );
  // A column is narrowed no further than its longest unbreakable piece: names and ids stay whole.
  const floors = header.map((title, column) =>
    Math.min(
      widths[column] ?? 0,
      Math.max(MIN_COLUMN, longestPiece(title), ...body.map((row) => longestPiece(row[column] ?? ''))),
    ),
  );
  const last = header.length - 1;
  // The reason is prose: it may split a long name (after a "-" where it can) rather than crowd out the rest.
  if (last > 0) floors[last] = Math.min(widths[last] ?? 0, REASON_MIN);
  const total = (): number => widths.reduce((sum, w) => sum + w, 0) + GAP.length * (widths.length - 1);
  while (total() > width) {
    let widest = -1;
    for (const [column, w] of widths.entries()) {
      if (w > (floors[column] ?? 0) && (widest === -1 || w > (widths[widest] ?? 0))) widest = column;
    }
    if (widest === -1) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
  }
  if (total() > width && last > 0) return stacked(header, body, width);
  const render = (cells: readonly string[]): string[] => {
    const wrapped = cells.map((cell, column) => wrap(cell, widths[column] ?? cell.length));
    const height = Math.max(1, ...wrapped.map((lines) => lines.length));
    const lines: string[] = [];
    for (let line = 0; line < height; line++) {
      lines.push(
        wrapped
          .map((parts, column) => {
            const text = parts[line] ?? '';
            return column === wrapped.length - 1 ? text : text.padEnd(widths[column] ?? 0);
          })
          .join(GAP)
          .trimEnd(),
      );
    }
    return lines;
  };
  return [...render(cellsOf(header)), ...body.flatMap(render)].join('\n');
}

/**
 * Each row as a record: one "KEY: value" line per column, keys aligned, values wrapped under their first
 * line (a name longer than the line stays whole); records apart by a blank line. Where even that leaves
 * fewer than REASON_MIN characters beside the keys, values start on the line below their key.
 */
function stacked(header: readonly string[], body: readonly string[][], width: number): string {
  const keyWidth = Math.max(...header.map((title) => title.length)) + 2;
  const below = width - keyWidth < REASON_MIN;
  const valueWidth = below ? width - 2 : width - keyWidth;
  const record = (row: readonly string[]): string =>
    header
      .flatMap((title, column) => {
        const value = row[column] ?? '';
        const lines = wrap(value, Math.max(valueWidth, longestPiece(value)));
        if (below) return [`${title}:`, ...lines.map((line) => `  ${line}`)];
        return lines.map((line, index) =>
          `${index === 0 ? `${title}:`.padEnd(keyWidth) : ' '.repeat(keyWidth)}${line}`.trimEnd(),
        );
      })
      .join('\n');
  return body.map(record).join('\n\n');
}

/** Where a line may break: at spaces, and after a "/" inside a word (resource paths, scale set ids). */
function pieces(text: string): { readonly text: string; readonly spaced: boolean }[] {
  return text
    .split(' ')
    .flatMap((word, index) =>
      word.split(/(?<=\/)/).map((part, partIndex) => ({ text: part, spaced: index > 0 && partIndex === 0 })),
    );
}

/** The longest piece of text that a line break cannot split (a name, an id). */
function longestPiece(text: string): number {
  return Math.max(0, ...pieces(text).map((piece) => piece.text.length));
}

/**
 * Breaks text into lines of at most `width` characters at spaces or after "/"; a longer piece is split,
 * after a "-" where one fits.
 */
export function wrap(text: string, width: number): string[] {
  if (text.length <= width) return [text];
  const lines: string[] = [];
  let current = '';
  for (const piece of pieces(text)) {
    let rest = piece.text;
    const separator = current !== '' && piece.spaced ? ' ' : '';
    if (current !== '' && current.length + separator.length + rest.length <= width) {
      current += separator + rest;
      continue;
    }
    if (current !== '') lines.push(current);
    while (rest.length > width) {
      // A piece longer than the line is split after its last "-" that fits (node names), else at the width.
      const hyphen = rest.lastIndexOf('-', width - 1);
      const cut = hyphen > 0 ? hyphen + 1 : width;
      lines.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    current = rest;
  }
  if (current !== '') lines.push(current);
  return lines;
}
