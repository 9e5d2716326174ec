/**
 * The pieces the generation benchmark drafts over the Fastify documentation: what a
 * developer-relations team would ask for, each as the content type's sections with
 * instructions and with titles only (issue 44's reading).
 */
import type { ContentKind, SectionSpec } from '@kb/generation/bench';

export interface PieceSpec {
  name: string;
  kind: ContentKind;
  subject: string;
  sections: SectionSpec[];
  target_length: { min_words: number; max_words: number };
}

const titlesOnly = (p: PieceSpec): PieceSpec => ({
  ...p,
  name: `${p.name} (titles only)`,
  sections: p.sections.map(({ title }) => ({ title })),
});

const detailed: PieceSpec[] = [
  {
    name: 'How-to: authentication hooks',
    kind: 'article',
    subject: 'Adding authentication hooks to a Fastify server',
    sections: [
      {
        title: 'Choosing a hook',
        instructions: 'Which request lifecycle hook (onRequest, preParsing, preValidation, preHandler) suits checking credentials',
      },
      { title: 'Registering a hook', instructions: 'How to add a hook with addHook, async or with a done callback' },
      { title: 'Rejecting unauthenticated requests', instructions: 'Replying early from a hook with an error status such as 401' },
      {
        title: 'Scoping authentication with plugins',
        instructions: 'Encapsulation: a hook registered in a plugin applies to the routes of that plugin only',
      },
    ],
    target_length: { min_words: 300, max_words: 700 },
  },
  {
    name: 'FAQ: plugins and encapsulation',
    kind: 'qa',
    subject: 'Fastify plugins and encapsulation',
    sections: [
      { title: 'What is a Fastify plugin?' },
      { title: 'What does encapsulation mean in Fastify?' },
      { title: 'How do I share a decorator with the parent context?', instructions: 'fastify-plugin and skip-override' },
      { title: 'In what order are plugins loaded?', instructions: 'register, after, ready and the avvio loading order' },
      { title: 'How do I pass options to a plugin?' },
    ],
    target_length: { min_words: 150, max_words: 600 },
  },
  {
    name: 'Summary: logging',
    kind: 'summary',
    subject: 'Logging in Fastify',
    sections: [{ title: 'Summary', instructions: 'The logger option, request logging, log levels and redaction' }],
    target_length: { min_words: 60, max_words: 200 },
  },
  {
    name: 'Overview: validation and serialization',
    kind: 'article',
    subject: 'Validation and serialization in Fastify',
    sections: [
      { title: 'Overview', instructions: 'What Fastify validates and serializes with JSON Schema' },
      {
        title: 'How it works',
        instructions: 'Ajv compiles route schemas for body, querystring, params and headers; fast-json-stringify serializes responses',
      },
      { title: 'Running costs', instructions: 'Performance: compiled schemas are fast, response schemas speed up serialization' },
    ],
    target_length: { min_words: 200, max_words: 500 },
  },
];

export const FASTIFY_PIECES: PieceSpec[] = detailed.flatMap((p) => [p, titlesOnly(p)]);
