import { analyze } from '../../shared/ai/src/verify/analysis.js';
import { align } from '../../shared/ai/src/verify/align.js';
const pairs: [string, string][] = [
  ['Every validation error has a `.statusCode` property set to `400`.', 'All validation errors have a `.statusCode` property set to `400`, ensuring the default error handler sets the response status code to `400`.'],
  ['Logging is not disabled by default.', 'The other log entries that will be disabled are: an error log written by the default `onResponse` hook on reply callback errors'],
  ['Logging is not disabled by default.', 'Logging is disabled by default.'],
];
for (const [c, s] of pairs) {
  const a = analyze(c), b = analyze(s);
  console.log(c, '\n ', JSON.stringify(align(a, c, b, s)), '\n  claim stems', [...a.stems], 'ids', a.identifiers.map(i=>i.text), '\n  span stems', [...b.stems]);
}
