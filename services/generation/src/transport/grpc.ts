import { errors } from '@kb/platform';
import type { CallContext, UnaryHandler } from '@kb/rpc';
import type { SettingsService } from '../app/settings.js';
import type { RunsService } from '../app/runs.js';
import type { DraftsService } from '../app/drafts.js';
import type { VerifyService } from '../app/verify.js';
import type { GenerateService } from '../app/generate.js';
import type { BuilderService } from '../app/builder.js';
import type { ContentEngine } from '../engine/engine.js';

type Body = Record<string, unknown>;

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const page = (b: Body) => ({ limit: num(b.limit), offset: num(b.offset) });

/** Every call carries its fields as JSON text; this parses, calls one use case and serialises the result. */
const json =
  (fn: (body: Body, ctx: CallContext) => Promise<unknown>): UnaryHandler =>
  async (r: { json?: string }, ctx) => {
    let body: unknown;
    try {
      body = r.json ? JSON.parse(r.json) : {};
    } catch {
      throw errors.validation('The request is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.validation('The request must be a JSON object');
    const result = await fn(body as Body, ctx);
    return { json: result === undefined ? '' : JSON.stringify(result) };
  };

export function generationHandlers(s: {
  settings: SettingsService;
  runs: RunsService;
  drafts: DraftsService;
  verify: VerifyService;
  generate: GenerateService;
  builder: BuilderService;
  engine: ContentEngine;
  onRunStarted: () => void;
}): Record<string, UnaryHandler> {
  const { settings, runs, drafts, verify } = s;
  return {
    GetBrandKit: json((_b, ctx) => settings.getBrandKit(ctx)),
    PutBrandKit: json((b, ctx) => settings.putBrandKit(ctx, b)),
    PatchBrandKit: json((b, ctx) => settings.patchBrandKit(ctx, b)),

    ListContentTypes: json((b, ctx) => settings.listContentTypes(ctx, page(b))),
    GetContentType: json((b, ctx) => settings.getContentType(ctx, b.content_type_id)),
    CreateContentType: json((b, ctx) => settings.createContentType(ctx, b)),
    UpdateContentType: json((b, ctx) => settings.updateContentType(ctx, b.content_type_id, b)),
    DeleteContentType: json((b, ctx) => settings.deleteContentType(ctx, b.content_type_id)),

    ListProductLines: json((b, ctx) => settings.listProductLines(ctx, page(b))),
    GetProductLine: json((b, ctx) => settings.getProductLine(ctx, b.product_line_id)),
    CreateProductLine: json((b, ctx) => settings.createProductLine(ctx, b)),
    UpdateProductLine: json((b, ctx) => settings.updateProductLine(ctx, b.product_line_id, b)),
    DeleteProductLine: json((b, ctx) => settings.deleteProductLine(ctx, b.product_line_id)),

    StartRun: json(async (b, ctx) => {
      const run = await runs.start(ctx, b);
      s.onRunStarted();
      return run;
    }),
    GetRun: json((b, ctx) => runs.get(ctx, b.run_id)),
    ListRuns: json((b, ctx) => runs.list(ctx, { ...page(b), geo_question_id: str(b.geo_question_id), state: str(b.state) })),

    ListDrafts: json((b, ctx) => drafts.list(ctx, page(b))),
    GetDraft: json((b, ctx) => drafts.get(ctx, b.draft_id)),
    DeleteDraft: json((b, ctx) => drafts.remove(ctx, b.draft_id)),

    Verify: json((b, ctx) => verify.verify(ctx, b)),
    Generate: json((b, ctx) => s.generate.generate(ctx, b)),

    CreatePiece: json((b, ctx) => s.builder.create(ctx, b)),
    GenerateSection: json((b, ctx) => s.builder.generateSection(ctx, b)),
    EditSection: json((b, ctx) => s.builder.editSection(ctx, b)),
    ReorderSections: json((b, ctx) => s.builder.reorder(ctx, b)),
    PieceHistory: json((b, ctx) => s.builder.history(ctx, b)),

    ListRules: json((b, ctx) => s.engine.list(ctx, page(b))),
    GetRule: json((b, ctx) => s.engine.get(ctx, b.rule_id)),
    CreateRule: json((b, ctx) => s.engine.create(ctx, b)),
    UpdateRule: json((b, ctx) => s.engine.update(ctx, b.rule_id, b)),
    DeleteRule: json((b, ctx) => s.engine.remove(ctx, b.rule_id)),
  };
}
