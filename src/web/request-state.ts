/** @public rooms add their fields by `declare module`, which knip does not count as a use */
export interface RequestState {
  sentAs?: Request;
  body?: Uint8Array;
}

const states = new WeakMap<Request, RequestState>();

export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (!state) {
    state = {};
    states.set(request, state);
  }
  return state;
}
