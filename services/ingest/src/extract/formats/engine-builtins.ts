/**
 * pdf.js's legacy build (the one that runs on Node 20) brings core-js polyfills that
 * replace built-ins the engine already has, to fix spec corners nothing here relies
 * on: Array.prototype.push (for arrays whose length is read-only), JSON.parse (for a
 * reviver's access to source text) and Function.prototype.toString (to print those
 * polyfills as native code). Its push is a JavaScript function about 8x slower than
 * the engine's, and it would be the push of every library in the thread that loads
 * pdf.js: the extraction workers (and a program that calls extractFile). This module
 * is imported just before pdf.js, so it keeps the engine's own; `restoreEngineBuiltins`
 * puts them back once pdf.js has loaded. The polyfills that add what Node 20 lacks
 * (Promise.withResolvers, the Set methods, ...) stay: pdf.js needs them.
 */
const kept = [
  [Array.prototype, 'push', Array.prototype.push],
  [JSON, 'parse', JSON.parse],
  [Function.prototype, 'toString', Function.prototype.toString],
] as const;

export function restoreEngineBuiltins(): void {
  for (const [owner, key, value] of kept) {
    if ((owner as unknown as Record<string, unknown>)[key] !== value) {
      Object.defineProperty(owner, key, { value, writable: true, enumerable: false, configurable: true });
    }
  }
}
