import { fastifyDocs } from './generation-corpora.ts';
import { readPassage } from '../../services/generation/src/drafting/passages.ts';
import { authorVoice, isPointer, refersBack, isLayoutReference } from '../../services/generation/src/drafting/referents.ts';
const corpus = await fastifyDocs();
const q = process.argv[2]!;
const ps = await corpus.retrieve(q, 8);
for (const p of ps) {
  console.log(`=== ${p.title} ${p.chunk_id.slice(-4)}`);
  for (const par of readPassage(p)) {
    console.log(` -- [${par.heading}]`);
    for (const s of par.sentences) console.log(`   ${s.whole ? '' : 'FRAG '}${authorVoice(s.text) ? 'YOU ' : ''}${isPointer(s.text) ? 'PTR ' : ''}${refersBack(s.text) ? 'REF ' : ''}${isLayoutReference(s.text) ? 'LAY ' : ''}| ${s.text.slice(0, 120)}`);
  }
}
