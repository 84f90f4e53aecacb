import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { RetryableError } from '../../../model/errors.js';
import type { StoreBackup } from '../../../store/store.js';
import { BACKUP_CONTENT_TYPE, SCHEMA_VERSION_HEADER, backupSchema } from './schema.js';

export interface BackupRouteOptions {
  /** The store's backup role (PostgreSQL's refuses, 501: use pg_dump). */
  backup: StoreBackup;
  /** How long a backup's answer may make no progress (the client reads nothing) before it is dropped and its copy removed. */
  idleMs: number;
  /** How long a backup's answer may take in all: a trickling reader makes progress, and would otherwise keep the slot. */
  deadlineMs: number;
}

const RETRY_AFTER_BUSY = 10;
const RETRY_AFTER_NO_SPACE = 60;
/** Errors that mean the temporary directory's file system has no room (or cannot be written). */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY']);

/**
 * `POST /backup`: a consistent copy of the database, made while ingest goes on, sent as the response body.
 * The collector holds the database's exclusive lock, so nothing else can read the file while it runs; this is
 * how `extscope db backup` gets a copy. The copy is made in the temporary directory (not beside the database,
 * whose disk ingest needs) and removed once sent, or when the client goes away, or when it reads nothing for
 * `idleMs`, or when it is not done within `deadlineMs` (a client taking 16 KB every 20 s makes progress, and kept
 * the slot for hours). One backup at a time: another is answered 503 with Retry-After until the first copy is
 * removed, so the temporary space held is one copy's at most; a temporary directory with no room is a 503 too.
 */
export const backupRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: BackupRouteOptions }> = async (app, { backup, idleMs, deadlineMs }) => {
  let running = false;
  app.post('/backup', { schema: backupSchema }, async (request, reply) => {
    if (running) throw new RetryableError('a backup is already being made or sent; retry when it is done', 'backup_running', RETRY_AFTER_BUSY);
    running = true;
    let dir: string | undefined;
    const done = (): void => {
      if (dir !== undefined) void rm(dir, { recursive: true, force: true }).finally(() => (running = false));
      else running = false;
      dir = undefined;
    };
    let result;
    let file: string;
    try {
      dir = await mkdtemp(join(tmpdir(), 'extscope-backup-'));
      file = join(dir, 'extscope.db');
      result = await backup.backup(file);
    } catch (error) {
      done();
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && NO_SPACE.has(code)) {
        throw new RetryableError(
          `no room for the backup copy in the temporary directory ${tmpdir()} (${code}); free space there or set TMPDIR`,
          'backup_no_space',
          RETRY_AFTER_NO_SPACE,
        );
      }
      throw error;
    }
    request.log.info({ bytes: result.bytes, schemaVersion: result.schemaVersion }, 'database backup made');
    const body = createReadStream(file);
    body.once('close', done);
    // A client that stops reading, or reads a trickle, holds the copy and the slot: past either bound the answer is
    // dropped (the client sees a truncated body, shorter than Content-Length) and the copy removed.
    reply.raw.setTimeout(idleMs, () => {
      request.log.warn({ idleMs }, 'database backup dropped: its client read nothing for too long');
      reply.raw.destroy();
    });
    const deadline = setTimeout(() => {
      request.log.warn({ deadlineMs }, 'database backup dropped: its client took too long to read it (EXTSCOPE_BACKUP_DEADLINE_MS)');
      reply.raw.destroy();
    }, deadlineMs);
    reply.raw.once('close', () => {
      clearTimeout(deadline);
      body.destroy();
    });
    return reply
      .header('content-type', BACKUP_CONTENT_TYPE)
      .header('content-length', String(result.bytes))
      .header('content-disposition', 'attachment; filename="extscope-backup.db"')
      .header('cache-control', 'no-store')
      .header(SCHEMA_VERSION_HEADER, String(result.schemaVersion))
      .send(body);
  });
};
