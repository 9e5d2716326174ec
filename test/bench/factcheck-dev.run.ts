import { join } from 'node:path';
import { createFactChecker } from '@kb/ai';
import { createLocalEmbeddings } from '@kb/ai/local';
import { indexDocs, loadDevSet, runDevSet, printDevFigures, printMisses, unsourced, DEV_HEADER } from './factcheck-dev.js';

const claims = loadDevSet();
const docs = await indexDocs();
const missing = unsourced(claims, docs.texts);
for (const c of missing) console.log(`NOT IN DOCS: ${c.source}`);
const model = await createLocalEmbeddings({ modelDir: join(import.meta.dirname, '../../.models/bge-small-en-v1.5-q'), threads: 1 });
const { results, figures } = await runDevSet(createFactChecker({ embeddings: model }), docs.retrieve, claims);
if (process.env.MISSES) printMisses(results);
console.log(DEV_HEADER);
printDevFigures('model on', figures);
await model.close();
await docs.close();
if (process.env.SLOW) for (const r of [...results].sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(r.ms.toFixed(0), r.claim.claim);
