import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { StoreBackup } from '../../../store/store.js';
import { BACKUP_CONTENT_TYPE, SCHEMA_VERSION_HEADER, backupSchema } from './schema.js';

export interface BackupRouteOptions {
  /** Absent when the store has no backup of its own (PostgreSQL: use pg_dump). */
  backup: StoreBackup | undefined;
}

/**
 * `POST /backup`: a consistent copy of the database, made while ingest goes on, sent as the response body.
 * The collector holds the database's exclusive lock, so nothing else can read the file while it runs; this is
 * how `extscope db backup` gets a copy. The copy is made in the temporary directory (not beside the database,
 * whose disk ingest needs) and removed once sent, or when the client goes away.
 */
export const backupRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: BackupRouteOptions }> = async (app, { backup }) => {
  app.post('/backup', { schema: backupSchema }, async (request, reply) => {
    if (backup === undefined) {
      return reply.code(501).send({ statusCode: 501, error: 'Not Implemented', message: "this store has no online backup; use the database's own tools" });
    }
    const dir = await mkdtemp(join(tmpdir(), 'extscope-backup-'));
    const file = join(dir, 'extscope.db');
    let result;
    try {
      result = await backup.backup(file);
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    request.log.info({ bytes: result.bytes, schemaVersion: result.schemaVersion }, 'database backup made');
    const body = createReadStream(file);
    body.once('close', () => void rm(dir, { recursive: true, force: true }));
    return reply
      .header('content-type', BACKUP_CONTENT_TYPE)
      .header('content-length', String(result.bytes))
      .header('content-disposition', 'attachment; filename="extscope-backup.db"')
      .header('cache-control', 'no-store')
      .header(SCHEMA_VERSION_HEADER, String(result.schemaVersion))
      .send(body);
  });
};
