// Whether this process is going away. The HTTP server sets it when a shutdown begins; `/ready` reads
// it so a load balancer stops sending work at once, while requests already received are still answered.
export interface Lifecycle {
  draining: boolean;
}

export function createLifecycle(): Lifecycle {
  return { draining: false };
}
