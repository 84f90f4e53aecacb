/** A cell of the grid, by its place in the filtered slice. */
export interface Place {
  row: number;
  col: number;
}

/**
 * Where a key moves the grid's focus from `at` (one tab stop for the whole grid): arrows, Home/End along the row,
 * PageUp/PageDown by ten rows, clamped to the grid; `open` for Enter and Space (the drill-down); undefined for a key
 * the grid leaves to the browser.
 */
export function keyTarget(key: string, at: Place, size: { rows: number; cols: number }): Place | 'open' | undefined {
  let { row, col } = at;
  switch (key) {
    case 'ArrowRight':
      col = Math.min(size.cols - 1, col + 1);
      break;
    case 'ArrowLeft':
      col = Math.max(0, col - 1);
      break;
    case 'ArrowDown':
      row = Math.min(size.rows - 1, row + 1);
      break;
    case 'ArrowUp':
      row = Math.max(0, row - 1);
      break;
    case 'Home':
      col = 0;
      break;
    case 'End':
      col = size.cols - 1;
      break;
    case 'PageDown':
      row = Math.min(size.rows - 1, row + 10);
      break;
    case 'PageUp':
      row = Math.max(0, row - 10);
      break;
    case 'Enter':
    case ' ':
      return 'open';
    default:
      return undefined;
  }
  return { row, col };
}
