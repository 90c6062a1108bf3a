// whatwg-node's Request/Response, as Yoga and Sofa use; Headers stay Node's: whatwg-node's drop empty values (a blank Idempotency-Key gets 422).
import { Request as WhatwgRequest } from '@whatwg-node/fetch';

export { Response } from '@whatwg-node/fetch';

export function requestOver(url: string | URL, method: string, headers: Headers, body?: Uint8Array | string): Request {
  return new WhatwgRequest(url, { method, headers, ...(body === undefined ? {} : { body: body as BodyInit }) });
}

export function parsedUrl(request: Request): URL {
  const kept = (request as Request & { parsedUrl?: unknown }).parsedUrl;
  return kept instanceof URL ? kept : new URL(request.url);
}
