// Preloaded into a benchmark's collector child (`--import`): counts the statements its `pg` clients send. node-postgres
// sends a client's next statement only once the previous one is answered, so each is one round trip to the database.
// The parent asks for the count over the child's IPC channel (`roundTrips` in collector-child.mjs).
import pg from 'pg';

let count = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  count++;
  return query.apply(this, args);
};
process.on('message', (message) => {
  if (message === 'pg-round-trips') process.send?.({ pgRoundTrips: count });
});
// The channel must not keep the collector alive once it is told to stop.
process.channel?.unref();
