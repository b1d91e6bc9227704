/**
 * Aligned text tables for the CLI's output: columns fitted to a width, long cells wrapped at spaces (or
 * after "/") onto continuation lines, never cut.
 */

/** Width tables are fitted to when the output is not a terminal (a file, a pipe, a CI log). */
export const DEFAULT_WIDTH = 120;

const GAP = '  ';
/** A column is not wrapped narrower than this, nor than its longest unbreakable piece. */
const MIN_COLUMN = 8;

export interface RenderOptions {
  /** Total width to fit tables into (the terminal's columns; DEFAULT_WIDTH otherwise). */
  readonly width?: number;
}

/**
 * Aligns columns. When the table is wider than `width`, the widest columns are narrowed and their cells
 * wrap at spaces (or after "/") onto continuation lines; no text is dropped. A table that cannot fit
 * without splitting a name is left wider than `width`. The last column is not padded.
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
  const total = (): number => widths.reduce((sum, w) => sum + w, 0) + GAP.length * (widths.length - 1);
  while (total() > width) {
    let widest = -1;
    for (const [column, w] of widths.entries()) {
      if (w > (floors[column] ?? 0) && (widest === -1 || w > (widths[widest] ?? 0))) widest = column;
    }
    if (widest === -1) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
  }
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

/** Breaks text into lines of at most `width` characters at spaces or after "/"; a longer piece is split. */
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
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
    }
    current = rest;
  }
  if (current !== '') lines.push(current);
  return lines;
}
