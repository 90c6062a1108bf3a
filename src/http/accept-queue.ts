// How many connections wait in the kernel's accept queue of a listening TCP port: completed
// handshakes the process has not accepted yet. Closing a listening socket resets every one of them,
// so the HTTP server (src/http/server.ts) closes its own only when this is 0. Linux tells it in
// /proc/net/tcp and /proc/net/tcp6 (the rx_queue of a socket in the LISTEN state); elsewhere it is
// unknown (null).
// Kept: neither Node's net.Server nor libuv exposes a listening socket's accept queue, and no npm library reads it.
import { closeSync, openSync, readSync } from 'node:fs';

const LISTEN_STATE = '0A';
const CHUNK_BYTES = 16_384;
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'] as const;

/**
 * The lines of the listening sockets of one table. The kernel lists listening sockets before any
 * other, so reading stops at the first line of another state: a host with many connections is not
 * read whole each time.
 */
function listeningLines(table: string): string[] | null {
  let fd: number;
  try {
    fd = openSync(table, 'r');
  } catch {
    return null;
  }
  try {
    const lines: string[] = [];
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let pending = '';
    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      if (read === 0) return lines;
      const text = pending + buffer.toString('latin1', 0, read);
      const complete = text.split('\n');
      pending = complete.pop() ?? '';
      for (const line of complete) {
        const fields = line.trim().split(/\s+/);
        // The heading line ("sl local_address …") has no state; skip it.
        if (!/^\d+:$/.test(fields[0] ?? '')) continue;
        if (fields[3] !== LISTEN_STATE) return lines;
        lines.push(line);
      }
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Connections waiting to be accepted on `port` (all addresses), or null where the kernel does not say. */
export function acceptQueueLength(port: number): number | null {
  const portHex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let found = false;
  let waiting = 0;
  for (const table of TABLES) {
    const lines = listeningLines(table);
    if (lines === null) continue;
    for (const line of lines) {
      const [, localAddress = '', , , queues = ''] = line.trim().split(/\s+/);
      if (!localAddress.endsWith(portHex)) continue;
      found = true;
      // tx_queue:rx_queue, in hex; for a listening socket rx_queue is its accept queue's length.
      waiting += Number.parseInt(queues.split(':')[1] ?? '0', 16) || 0;
    }
  }
  return found ? waiting : null;
}
