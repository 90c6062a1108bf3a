// A small S3-compatible HTTP server for the tests: path-style PUT, GET and DELETE of objects, the
// conditional PUT (If-None-Match: *), S3's XML errors, and a check that each request is signed
// (AWS Signature V4) with the expected access key. Enough for what the service's S3 store sends
// through the AWS SDK; no MinIO is needed (none runs on these machines).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestS3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Objects by "bucket/key". */
  objects: Map<string, Buffer>;
  /** "METHOD bucket/key" of every request answered, in order. */
  requests: string[];
  close(): Promise<void>;
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/xml' });
  response.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startS3Server(buckets: readonly string[]): Promise<TestS3Server> {
  const accessKeyId = 'TESTACCESSKEY0000001';
  const secretAccessKey = 'test-secret-access-key-0000000000000000';
  const objects = new Map<string, Buffer>();
  const requests: string[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://s3.test');
      const [bucket = '', ...keyParts] = url.pathname.slice(1).split('/').map(decodeURIComponent);
      const key = keyParts.join('/');
      requests.push(`${request.method} ${bucket}/${key}`);
      const authorization = request.headers.authorization ?? '';
      if (!authorization.startsWith(`AWS4-HMAC-SHA256 Credential=${accessKeyId}/`)) {
        return sendError(response, 403, 'InvalidAccessKeyId', 'The AWS access key Id you provided does not exist in our records.');
      }
      if (!buckets.includes(bucket)) return sendError(response, 404, 'NoSuchBucket', 'The specified bucket does not exist');
      if (key === '') return sendError(response, 501, 'NotImplemented', 'Only object requests are implemented');
      const id = `${bucket}/${key}`;
      switch (request.method) {
        case 'PUT': {
          if ((request.headers['content-encoding'] ?? '').includes('aws-chunked')) {
            return sendError(response, 501, 'NotImplemented', 'aws-chunked uploads are not implemented');
          }
          const body = await bodyOf(request);
          if (request.headers['if-none-match'] === '*' && objects.has(id)) {
            return sendError(response, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
          }
          objects.set(id, body);
          response.writeHead(200, { etag: `"${body.length}"` });
          return response.end();
        }
        case 'GET': {
          const stored = objects.get(id);
          if (!stored) return sendError(response, 404, 'NoSuchKey', 'The specified key does not exist.');
          response.writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-length': stored.length,
            etag: `"${stored.length}"`,
          });
          return response.end(stored);
        }
        case 'DELETE':
          objects.delete(id);
          response.writeHead(204);
          return response.end();
        default:
          return sendError(response, 405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
      }
    })().catch((error: unknown) => sendError(response, 500, 'InternalError', String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId,
    secretAccessKey,
    objects,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Points the AWS SDK's standard credential chain at the test server, through the environment as a
 * real deployment's would be; the returned function puts the environment back.
 */
export function useS3Credentials(s3: TestS3Server): () => void {
  const credentials = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_EC2_METADATA_DISABLED: 'true' };
  const saved = Object.fromEntries(Object.keys(credentials).map((name) => [name, process.env[name]]));
  Object.assign(process.env, credentials);
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
