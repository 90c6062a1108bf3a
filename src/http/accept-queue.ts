// Closing a listening socket resets every connection in its accept queue, so the server closes it only when this is 0.
// Kept: neither Node's net.Server nor libuv exposes a listening socket's accept queue, and no npm library reads it.
import { closeSync, openSync, readSync } from 'node:fs';

const LISTEN_STATE = '0A';
const CHUNK_BYTES = 16_384;
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'] as const;

// The kernel lists listening sockets first, so reading stops at the first line of another state.
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
      // tx_queue:rx_queue in hex; for a listening socket rx_queue is its accept queue's length.
      waiting += Number.parseInt(queues.split(':')[1] ?? '0', 16) || 0;
    }
  }
  return found ? waiting : null;
}
