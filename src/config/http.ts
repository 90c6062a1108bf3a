// The HTTP server's bounds on connections that follow from HTTP_MAX_CONNECTIONS (src/http/server.ts and the loader).

/** The share of HTTP_MAX_CONNECTIONS that HTTP_MAX_UPLOADS and HTTP_RESERVED_CONNECTIONS each default to. */
const DEFAULT_SHARE_OF_CONNECTIONS = 0.1;

/** How many connections the HTTP server lets uploads hold, and keeps free for everything else (src/http/server.ts). */
interface ConnectionBounds {
  maxUploads: number;
  reservedConnections: number;
}

/** HTTP_MAX_UPLOADS and HTTP_RESERVED_CONNECTIONS as set, or their defaults: a tenth of the connections each (at least one upload). */
export function connectionBoundsOf(
  maxConnections: number,
  set: { maxUploads?: number; reservedConnections?: number } = {},
): ConnectionBounds {
  const share = Math.floor(maxConnections * DEFAULT_SHARE_OF_CONNECTIONS);
  return { maxUploads: set.maxUploads ?? Math.max(1, share), reservedConnections: set.reservedConnections ?? share };
}
