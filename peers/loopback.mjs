// A preload (node --import ./loopback.mjs) that runs an unmodified server
// on 127.0.0.1 and tells its address: @modelcontextprotocol/server-everything
// listens on process.env.PORT on every interface and logs the port it was
// asked for, not the one it got. This binds every listening TCP server of
// the process to 127.0.0.1 instead, prints the ready line the Go harness
// waits for once it listens, and ends the process when its stdin closes (the
// test that started it is gone). The server's own code is untouched.
import net from 'node:net';
import { exitWithParent } from './lib/peer.mjs';

const READY = 'MCPTRACE_PEER_READY ';
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  if (args.length > 0 && args[0] !== null && typeof args[0] === 'object') {
    args[0] = { ...args[0], host: '127.0.0.1' };
  } else if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    args[0] = Number(args[0]);
    if (typeof args[1] === 'string') args[1] = '127.0.0.1';
    else args.splice(1, 0, '127.0.0.1');
  }
  this.once('listening', () => {
    const a = this.address();
    const base = `http://127.0.0.1:${a.port}`;
    process.stdout.write(READY + JSON.stringify({ name: 'server-everything', url: base + '/mcp' }) + '\n');
  });
  return listen.apply(this, args);
};

exitWithParent();
