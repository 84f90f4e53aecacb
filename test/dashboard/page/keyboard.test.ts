/**
 * The matrix grid's keys (dashboard/src/views/matrix/keyboard.ts), in process: where each key moves the one tab
 * stop, clamped to the grid, and which keys open a cell or are left to the browser.
 */
import { describe, expect, it } from 'vitest';
import { keyTarget } from '../../../dashboard/src/views/matrix/keyboard.js';

const size = { rows: 30, cols: 4 };

describe('the matrix grid keys', () => {
  it('arrows move one cell, clamped at the edges', () => {
    expect(keyTarget('ArrowRight', { row: 2, col: 1 }, size)).toEqual({ row: 2, col: 2 });
    expect(keyTarget('ArrowRight', { row: 2, col: 3 }, size)).toEqual({ row: 2, col: 3 });
    expect(keyTarget('ArrowLeft', { row: 2, col: 0 }, size)).toEqual({ row: 2, col: 0 });
    expect(keyTarget('ArrowDown', { row: 29, col: 1 }, size)).toEqual({ row: 29, col: 1 });
    expect(keyTarget('ArrowUp', { row: 2, col: 1 }, size)).toEqual({ row: 1, col: 1 });
  });

  it('Home and End go along the row, PageUp and PageDown by ten rows', () => {
    expect(keyTarget('Home', { row: 5, col: 3 }, size)).toEqual({ row: 5, col: 0 });
    expect(keyTarget('End', { row: 5, col: 0 }, size)).toEqual({ row: 5, col: 3 });
    expect(keyTarget('PageDown', { row: 5, col: 2 }, size)).toEqual({ row: 15, col: 2 });
    expect(keyTarget('PageDown', { row: 25, col: 2 }, size)).toEqual({ row: 29, col: 2 });
    expect(keyTarget('PageUp', { row: 5, col: 2 }, size)).toEqual({ row: 0, col: 2 });
  });

  it('Enter and Space open the cell; other keys are the browser’s', () => {
    expect(keyTarget('Enter', { row: 0, col: 0 }, size)).toBe('open');
    expect(keyTarget(' ', { row: 0, col: 0 }, size)).toBe('open');
    expect(keyTarget('Tab', { row: 0, col: 0 }, size)).toBeUndefined();
    expect(keyTarget('a', { row: 0, col: 0 }, size)).toBeUndefined();
  });
});
