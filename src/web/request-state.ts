// Everything kept for one request lives on one object, made on first use and dropped with the request.
// Each room adds the fields it owns to RequestState by declaration merging (`declare module`), the way
// libraries let plugins type a request's fields, so a module never reaches a room above for a type;
// "Go to definition" on RequestState lists every field. Derived data keyed by schema or document stays
// in the caches of the modules that derive it.

/**
 * The request's own values (fields of the rooms above are merged in where they are owned).
 * @public merged into by `declare module`, which knip does not count as a use
 */
export interface RequestState {
  /** Set on a request the REST layer rebuilt: the request as the client sent it (src/context.ts). */
  sentAs?: Request;
  /** The body the HTTP server already read as bytes (it reads bodies to enforce the body limit). */
  body?: Uint8Array;
}

const states = new WeakMap<Request, RequestState>();

/** The state of this Request object (a rebuilt request has its own; `sentAs` leads to the client's). */
export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (!state) {
    state = {};
    states.set(request, state);
  }
  return state;
}
