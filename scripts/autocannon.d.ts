// The part of autocannon's programmatic API that the benchmarks use (autocannon ships no types).
declare module 'autocannon' {
  interface AutocannonOptions {
    url: string;
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    pipelining?: number;
    timeout?: number;
    /** A fixed number of requests; overrides duration. */
    amount?: number;
    /** Each request in turn; setupRequest may change the raw request (its path, method, body). */
    requests?: { setupRequest?: (request: RawRequest) => RawRequest }[];
  }
  interface RawRequest {
    method?: string;
    path?: string;
    body?: string;
    headers?: Record<string, string>;
  }
  interface Histogram {
    average: number;
    total: number;
    p50: number;
    p99: number;
  }
  interface AutocannonResult {
    requests: Histogram;
    latency: Histogram;
    /** Seconds actually run. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    /** Answers by status code. */
    statusCodeStats?: Record<string, { count: number }>;
  }
  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
  export default autocannon;
}
