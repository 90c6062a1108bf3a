// Strong ETags on every successful GET of both doors: Yoga's response cache tags only its cached results, @envelop's none.
import { hash } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { readBody, withHeaders } from '../web/bodies.ts';
import { Response } from '../web/fetch-api.ts';
import { isStreamedAnswer } from './incremental.ts';

function matchesETag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

// Headers a 304 repeats from the 200 it stands for (RFC 9110 §15.4.5).
const NOT_MODIFIED_HEADERS = ['cache-control', 'content-location', 'date', 'expires', 'vary', 'deprecation', 'sunset'];

export function useETags(): Plugin {
  return {
    async onResponse({ request, response: received, setResponse }) {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || received.status !== 200 || received.headers.has('etag')) return;
      // A stream (a subscription's, @defer's payloads) is sent as it comes: a digest would hold it back to its end.
      if (isStreamedAnswer(received)) return;
      const { bytes: body, answer: response } = await readBody(received, setResponse);
      const etag = `"${hash('sha256', body, 'base64url').slice(0, 27)}"`;
      const ifNoneMatch = request.headers.get('if-none-match');
      if (ifNoneMatch && matchesETag(ifNoneMatch, etag)) {
        const headers = new Headers({ etag });
        for (const name of NOT_MODIFIED_HEADERS) {
          const value = response.headers.get(name);
          if (value !== null) headers.set(name, value);
        }
        setResponse(new Response(null, { status: 304, headers }));
        return;
      }
      const answer = withHeaders(response, (headers) => headers.set('etag', etag));
      if (answer !== response) setResponse(answer);
    },
  };
}
