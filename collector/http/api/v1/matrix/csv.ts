import type { Grouping, MatrixRow, MatrixView } from '../../../../analysis/matrix.js';

/**
 * Client names and extension ids are whatever clients sent. A cell starting with = + - @ (or a control
 * character) would run as a formula in a spreadsheet, so it is prefixed with a quote (OWASP's advice).
 */
function field(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Shares as the API serves them (0..1, empty without known requests), to six places. */
const fraction = (value: number | null): string | null => (value === null ? null : String(Math.round(value * 1e6) / 1e6));

/** The columns naming a row, per grouping: the client's label, name and version, or the service (and instance id). */
const ROW_COLUMNS: Record<Grouping, { header: string[]; values(row: MatrixRow): (string | null)[] }> = {
  client: { header: ['client', 'name', 'version'], values: (row) => [row.client, row.name, row.version] },
  client_version: { header: ['client', 'name', 'version'], values: (row) => [row.client, row.name, row.version] },
  service: { header: ['service'], values: (row) => [row.service ?? null] },
  build: { header: ['build', 'service'], values: (row) => [row.client, row.service ?? null] },
  instance: { header: ['service', 'instance'], values: (row) => [row.service ?? null, row.instance ?? null] },
};

/** The matrix as CSV: the one writer, for the API's `format=csv` and the page's export button alike. */
export function matrixCsv(view: MatrixView, group: Grouping = 'client'): string {
  const naming = ROW_COLUMNS[group];
  const header = [...naming.header, 'requests', 'server_unknown', 'declaration_unknown', 'declaration_none', 'declaration_declared'];
  for (const id of view.extensions)
    header.push(`${id} state`, `${id} negotiated_share`, `${id} client_declared`, `${id} server_advertised`, `${id} negotiated`, `${id} required_errors`);
  const lines = [header.map(field).join(',')];
  for (const row of view.rows) {
    const cells: (string | number | null)[] = [
      ...naming.values(row),
      row.requests,
      row.serverUnknown,
      row.declaration.unknown,
      row.declaration.none,
      row.declaration.declared,
    ];
    for (const cell of row.extensions)
      cells.push(cell.state, fraction(cell.negotiatedShare), cell.clientDeclared, cell.serverAdvertised, cell.negotiated, cell.required);
    lines.push(cells.map(field).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
