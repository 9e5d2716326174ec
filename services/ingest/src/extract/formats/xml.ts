import { XMLValidator } from 'fast-xml-parser';
import { Parser } from 'htmlparser2';
import { permanent, type Block } from '../types.js';

/** XML: every element's own text as "element path: text"; well-formedness checked first. */
export function extractXml(text: string): Block[] {
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw permanent(`The XML file is not well-formed: ${valid.err.msg} (line ${valid.err.line})`);
  const blocks: Block[] = [];
  const stack: { name: string; text: string }[] = [];
  const parser = new Parser(
    {
      onopentag(name) {
        stack.push({ name, text: '' });
      },
      ontext(data) {
        const top = stack[stack.length - 1];
        if (top) top.text += data;
      },
      onclosetag() {
        const done = stack.pop();
        const clean = done?.text.replace(/\s+/g, ' ').trim();
        if (done && clean)
          blocks.push({ kind: 'paragraph', text: `${[...stack.map((s) => s.name), done.name].slice(-2).join('/')}: ${clean}` });
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(text);
  parser.end();
  return blocks;
}
