import { createFactChecker } from '@kb/ai';
import { indexDocs } from './factcheck-dev.js';
import { analyze } from '../../shared/ai/src/verify/analysis.js';
import { align } from '../../shared/ai/src/verify/align.js';
const docs = await indexDocs();
const claim = process.argv[2]!;
const found = await docs.retrieve(claim, 8);
for (const p of found) console.log('P', p.chunk_id, JSON.stringify(p.text.slice(0, 100)));
const checker = createFactChecker({});
console.log(JSON.stringify(await checker.checkDetailed({ text: claim, retrieve: docs.retrieve }), null, 1).slice(0, 1500));
if (process.argv[3]) { const a = analyze(claim), b = analyze(process.argv[3]); console.log(JSON.stringify(align(a, claim, b, process.argv[3]))); }
