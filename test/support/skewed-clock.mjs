// Preloaded into a service process (NODE_OPTIONS=--import …) to make its clock wrong: Date (new
// Date() and Date.now()) runs TEST_CLOCK_SKEW_MS ahead, as on a machine whose clock is off.
// Timers and performance.now() are untouched, as they would be.
const skewMs = Number(process.env.TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = globalThis.Date;

class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skewMs);
    else super(...args);
  }

  static now() {
    return RealDate.now() + skewMs;
  }
}

globalThis.Date = SkewedDate;
