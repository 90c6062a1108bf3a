// Kept at the bottom so the gateway's plugins, the REST door and the caches share one record without importing each other.
import type { Logger } from 'pino';
import type { Config } from './config/index.ts';
import type { Db } from './db/client.ts';
import type { Actor } from './auth/api-keys.ts';
import type { KeyVerifier } from './auth/key-cache.ts';
import type { ScopedDb } from './db/scoped.ts';
import type { FileStorage } from './storage/file-storage.ts';
import type { Geocoder } from './domain/geocoding.ts';
import type { RecordEventPublisher, RecordEventSource } from './domain/record-events.ts';
import { requestState } from './web/request-state.ts';

export interface Context {
  config: Config;
  now: () => Date;
  files: FileStorage;
  geocoder: Geocoder;
  db: ScopedDb;
  /** For the few deliberately global reads; never for data a key reads or writes as its own. */
  unscopedDb: Db;
  request: Request;
  logger: Logger;
  actor: Actor | null;
  /** For a subscription, whose context outlives the moment its key was verified. */
  actorNow(): Promise<Actor | null>;
  actAs(actor: Actor): void;
  events: RecordEventPublisher;
  liveEvents: RecordEventSource;
  /** Sent as the result's SSE `id:`, which a reconnecting client sends back as Last-Event-ID. */
  answering: { eventId: string | undefined };
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

declare module './web/request-state.ts' {
  interface RequestState {
    actor?: Promise<Actor | null>;
    presentedKeyVerdict?: Promise<Actor | null>;
  }
}

export function verifyPresentedKey(keys: KeyVerifier, request: Request): Promise<Actor | null> {
  const header = request.headers.get('authorization');
  const key = header ? BEARER.exec(header)?.[1] : undefined;
  return key ? keys.verify(key) : Promise.resolve(null);
}

export function actorFromRequest(keys: KeyVerifier, request: Request): Promise<Actor | null> {
  const state = requestState(request);
  if (!state.actor) {
    state.actor = verifyPresentedKey(keys, request);
    // Anything in Authorization is a credential; one that is not even a bearer key is refused too.
    if (request.headers.has('authorization')) requestState(sentRequest(request)).presentedKeyVerdict = state.actor;
  }
  return state.actor;
}

export function rebuiltFrom(original: Request, rebuilt: Request): void {
  requestState(rebuilt).sentAs = sentRequest(original);
}

export function sentRequest(request: Request): Request {
  return requestState(request).sentAs ?? request;
}

export function presentedKeyVerdict(request: Request): Promise<Actor | null> | undefined {
  return requestState(sentRequest(request)).presentedKeyVerdict;
}

export function carryActor(from: Request, to: Request): void {
  rebuiltFrom(from, to);
  const actor = requestState(from).actor;
  if (actor) requestState(to).actor = actor;
}
