/** `POST /admin/backup`: no parameters; the answer is the database file itself (`application/vnd.sqlite3`). */
export const BACKUP_CONTENT_TYPE = 'application/vnd.sqlite3';
/** The copy's schema version, so a client can tell which extscope version can open it. */
export const SCHEMA_VERSION_HEADER = 'x-extscope-schema-version';

export const backupSchema = {
  querystring: { type: 'object', additionalProperties: false, properties: {} },
} as const;
