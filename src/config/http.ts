const DEFAULT_SHARE_OF_CONNECTIONS = 0.1;

/** At least one upload, so a small HTTP_MAX_CONNECTIONS still accepts files. */
export function connectionBoundsOf(maxConnections: number, set: { maxUploads?: number; reservedConnections?: number } = {}) {
  const share = Math.floor(maxConnections * DEFAULT_SHARE_OF_CONNECTIONS);
  return { maxUploads: set.maxUploads ?? Math.max(1, share), reservedConnections: set.reservedConnections ?? share };
}
