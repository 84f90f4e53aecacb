// Preloaded (`node --require`) into a relay by relay-trace.mjs: the time of every socket 'data' event (as its
// listeners start and as they return) and of every write (as it starts and as the system call returned), each
// tagged with the side it is on (the connection a client opened, or one the relay opened), written at exit as
// lines "EVENT MICROSECONDS" to the file named by RELAY_TRACE_FILE. A fixed array: nothing allocated per event.
const net = require('node:net');
const { writeFileSync } = require('node:fs');

const MAX = 1_000_000;
const times = new Float64Array(MAX);
const events = new Uint8Array(MAX);
let count = 0;
const now = () => performance.now() * 1000;
const mark = (event) => {
  if (count < MAX) {
    times[count] = now();
    events[count++] = event;
  }
};
// A socket a server accepted is the client's side (0); one the relay opened is the upstream's (1).
const side = (socket) => (socket.server ? 0 : 1);
const { emit, _writeGeneric } = net.Socket.prototype;
net.Socket.prototype.emit = function (name, ...args) {
  if (name !== 'data') return emit.call(this, name, ...args);
  mark(10 + side(this));
  const handled = emit.call(this, name, ...args);
  mark(20 + side(this));
  return handled;
};
net.Socket.prototype._writeGeneric = function (...args) {
  mark(30 + side(this));
  const written = _writeGeneric.apply(this, args);
  mark(40 + side(this));
  return written;
};
process.on('exit', () => {
  const lines = [];
  for (let i = 0; i < count; i++) lines.push(`${events[i]} ${times[i].toFixed(2)}`);
  writeFileSync(process.env.RELAY_TRACE_FILE, lines.join('\n'));
});
