import type pg from 'pg';
import type { Leadership } from '../store.js';
import { createClient } from './connection.js';

/**
 * Background work on one replica at a time, by PostgreSQL session advisory locks (one per job name) held on a
 * dedicated connection: the replica that takes a job's lock keeps it, and runs the job, until it closes or its
 * connection ends. A replica killed outright loses its connection, the server releases its locks, and
 * another replica takes the job at its next interval. Nothing is held in a table, so nothing expires by clock.
 */
export class AdvisoryLeadership implements Leadership {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly held = new Set<string>();
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly warn: (message: string) => void,
  ) {}

  async runExclusive(job: string, work: () => Promise<void>): Promise<boolean> {
    if (this.closed) return false;
    let client: pg.Client;
    try {
      client = await this.connection();
      if (this.held.has(job)) {
        // Still ours only while the session lives: a round trip proves it before the job runs.
        await client.query('SELECT 1');
      } else {
        const { rows } = await client.query<{ taken: boolean }>("SELECT pg_try_advisory_lock(hashtextextended('extscope:job:' || $1, 0)) AS taken", [job]);
        if (rows[0]?.taken !== true) return false;
        this.held.add(job);
      }
    } catch (error) {
      this.lost(`leadership for ${job}: ${(error as Error).message}`);
      return false;
    }
    await work();
    return true;
  }

  /** The jobs this replica holds now. */
  holds(job: string): boolean {
    return this.held.has(job);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    this.held.clear();
    // Ending the session releases every advisory lock it holds.
    await client?.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.client !== undefined) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = createClient(this.url);
      client.on('error', (error) => this.lost(`leadership connection failed: ${error.message}`));
      client.on('end', () => {
        if (this.client === client) this.lost('leadership connection ended');
      });
      try {
        await client.connect();
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** The session is gone, and with it every lock: jobs are taken again (here or elsewhere) on their next run. */
  private lost(message: string): void {
    const client = this.client;
    this.client = undefined;
    if (this.held.size > 0) this.warn(`${message}; background jobs held here (${[...this.held].join(', ')}) pass to whichever replica takes them next`);
    this.held.clear();
    void client?.end().catch(() => undefined);
  }
}
