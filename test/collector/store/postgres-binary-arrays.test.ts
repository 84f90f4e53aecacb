import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { binaryArray } from '../../../collector/store/postgres/binary-arrays.js';
import { NamedStatement } from '../../../collector/store/postgres/connection.js';
import { testDatabases } from './postgres-server.js';

const databases = testDatabases('arrays');

describe('PostgreSQL array parameters in binary', () => {
  const clients: pg.Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await databases.dropAll();
  });

  it('arrive as the same arrays as node-postgres array literals: nulls, negatives, 64-bit nanoseconds, UTF-8 and quotes, byte strings, empty arrays', async () => {
    const client = new pg.Client({ connectionString: await databases.create() });
    await client.connect();
    clients.push(client);
    const values = {
      big: [
        0,
        1,
        -1,
        4_294_967_296,
        -4_294_967_297,
        Number.MAX_SAFE_INTEGER,
        -Number.MAX_SAFE_INTEGER,
        null,
        1_765_000_000_123_456_789n,
        '-9223372036854775808',
      ],
      int: [0, -2_147_483_648, 2_147_483_647, null],
      small: [0, 1, -1, 32_767, null],
      texts: ['', 'plain', 'quote " backslash \\ comma , brace {}', 'über ✓ 𝄞', null, 'NULL'],
      bytes: [Buffer.alloc(0), Buffer.from([0, 1, 254, 255]), Buffer.from('\\x41', 'latin1')],
      none: [],
    };
    // Each array sent twice: in binary (cast in the statement) and as node-postgres writes a JS array (a literal).
    const statement = new NamedStatement(
      `SELECT @big::bigint[] IS NOT DISTINCT FROM $7::bigint[] AS big, @int::integer[] IS NOT DISTINCT FROM $8::integer[] AS int,
              @small::smallint[] IS NOT DISTINCT FROM $9::smallint[] AS small, @texts::text[] IS NOT DISTINCT FROM $10::text[] AS texts,
              @bytes::bytea[] IS NOT DISTINCT FROM $11::bytea[] AS bytes, @none::bigint[] IS NOT DISTINCT FROM $12::bigint[] AS none,
              cardinality(@none::bigint[]) AS empty, (@big::bigint[])[9]::text AS nanos, (@texts::text[])[4] AS utf8`,
    );
    const sent = statement.statement(values);
    // The binary ones are Buffers (node-postgres sends those as binary parameters).
    expect(sent.values.slice(0, 6).every((value) => Buffer.isBuffer(value))).toBe(true);
    const literals = [values.big.map((value) => (value === null ? null : String(value))), values.int, values.small, values.texts, values.bytes, values.none];
    const { rows } = await client.query({ text: sent.text, values: [...sent.values, ...literals] });
    expect(rows[0]).toEqual({
      big: true,
      int: true,
      small: true,
      texts: true,
      bytes: true,
      none: true,
      empty: 0,
      nanos: '1765000000123456789',
      utf8: 'über ✓ 𝄞',
    });
  });

  it('refuses a number that is not an integer rather than send another', () => {
    expect(() => binaryArray('bigint', [1.5])).toThrow(TypeError);
    expect(() => binaryArray('bigint', [2 ** 53])).toThrow(TypeError);
    expect(() => binaryArray('smallint', [Number.NaN])).toThrow(TypeError);
  });
});
