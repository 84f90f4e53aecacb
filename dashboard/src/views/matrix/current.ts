import type { Context } from '../../lib/context.js';
import type { MatrixSlice } from '../../lib/matrix-model.js';
import type { MatrixResponse } from '../../lib/types.js';

/**
 * What every part of the matrix view reads when the user acts (a key, a click, a pointer over a cell): the latest
 * render's context, and the matrix on screen with its filtered slice. The view sets both; the parts only read them.
 */
export interface Current {
  context: Context;
  data: { matrix: MatrixResponse; slice: MatrixSlice } | undefined;
}
