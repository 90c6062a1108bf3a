// What every resolver receives, and who each request is: the caller, its scoped client and the few
// services operations use (built once per request for both doors by src/gateway/app.ts: Sofa runs
// Yoga's context factory for REST calls too), and the request's identity (the verified key, the
// request as the client sent it), kept here at the bottom so the gateway's plugins, the REST door
// and the caches share one record without importing each other.
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

/**
 * What a resolver is given: the caller, its scoped client and the few services operations use, not
 * the service's whole dependency bag (key verifier, caches, counters and metrics stay with the
 * plugins that own them, src/service.ts).
 */
export interface Context {
  config: Config;
  /** The time; tests move it to check expiries. */
  now: () => Date;
  /** Where lead attachments' bytes are kept (src/storage/file-storage.ts). */
  files: FileStorage;
  /** Places postcodes for the dealership search (src/domain/geocoding.ts). */
  geocoder: Geocoder;
  /**
   * The caller's client: every read and write is kept to the key's dealerships (src/db/scoped.ts),
   * and a request without a key reaches no dealership's rows at all.
   */
  db: ScopedDb;
  /**
   * The escape hatch, for the few reads that are deliberately global (the public redirect, the
   * partner sign-on landing, the website lookup that tells 403 from 404, phone calls' per-key dedupe
   * records). Never for data a key reads or writes as its own.
   */
  unscopedDb: Db;
  request: Request;
  /** The request's logger: every line written through it carries the request id. */
  logger: Logger;
  /** null when no key, or no valid key, was presented. */
  actor: Actor | null;
  /**
   * The caller's key verified again now, through the verdict cache (src/auth/key-cache.ts), so
   * usually without a database query: for a subscription, whose context outlives the moment its key
   * was verified. null: the key is no longer valid (revoked, expired, retired).
   */
  actorNow(): Promise<Actor | null>;
  /**
   * Makes this context the key's as `actorNow` found it: its actor and the scoped client built from
   * it (the one place besides the context's making where a scoped client is made for a context).
   */
  actAs(actor: Actor): void;
  /** Where a write hands its committed changes for live subscribers (src/domain/record-events.ts). */
  events: RecordEventPublisher;
  /** Where subscriptions read the events published from now on, on every instance (src/gateway/live-events.ts). */
  liveEvents: RecordEventSource;
  /**
   * The record event the request's subscription answers now (undefined: none, such as the error that
   * ends its stream): its source sets it before each result, and the stream sends it as the result's
   * SSE `id:`, which a client that reconnects sends back as Last-Event-ID.
   */
  answering: { eventId: string | undefined };
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

declare module './web/request-state.ts' {
  interface RequestState {
    /** The key is verified once per request even when the REST layer looks at it before the context is built. */
    actor?: Promise<Actor | null>;
    /** On the request as the client sent it: the verdict on the key it presented, when it presented one. */
    presentedKeyVerdict?: Promise<Actor | null>;
  }
}

/**
 * The verdict on the request's key now: what the verifier remembers or looks up
 * (src/auth/key-cache.ts). actorFromRequest keeps the first one for the request; a subscription's
 * context, which outlives it, asks this again.
 */
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

/** Records that `rebuilt` stands for `original` (the REST layer rewrites URLs, headers and bodies). */
export function rebuiltFrom(original: Request, rebuilt: Request): void {
  requestState(rebuilt).sentAs = sentRequest(original);
}

/** The request as the client sent it: what per-request records (rate limits) are kept under. */
export function sentRequest(request: Request): Request {
  return requestState(request).sentAs ?? request;
}

/**
 * The verdict on the key the client presented with this request (on whichever request of the REST
 * layer it was verified), or undefined when none was presented or none has been looked at yet.
 */
export function presentedKeyVerdict(request: Request): Promise<Actor | null> | undefined {
  return requestState(sentRequest(request)).presentedKeyVerdict;
}

/** A request rebuilt from another (the REST layer rewrites URLs and bodies) keeps its verified actor. */
export function carryActor(from: Request, to: Request): void {
  rebuiltFrom(from, to);
  const actor = requestState(from).actor;
  if (actor) requestState(to).actor = actor;
}
