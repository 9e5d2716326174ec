import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { createOpenAiChat, warmLexicon, type Llm } from '@kb/ai';
import { createLocalEmbeddings, missingModelFiles, type LocalEmbeddings } from '@kb/ai/local';
import type { GenerationConfig } from './config.js';

/**
 * The fact checker's sentence-embedding model, when the configuration asks for
 * it and its files are there; undefined otherwise (the checker is then lexical
 * only, and says so in the log once, with how to get the model).
 */
export async function openFactCheckModel(
  config: Pick<GenerationConfig, 'FACT_CHECK_MODEL' | 'FACT_CHECK_MODEL_DIR'>,
  logger: Logger,
): Promise<LocalEmbeddings | undefined> {
  // The WordNet lexicon of the agreement checks, loaded now rather than on the first sentence checked.
  warmLexicon();
  if (config.FACT_CHECK_MODEL === 'off') {
    logger.info('fact checker: lexical only (FACT_CHECK_MODEL=off); sentences worded differently from their sources come out unsupported');
    return undefined;
  }
  const dir = resolve(config.FACT_CHECK_MODEL_DIR);
  const missing = missingModelFiles(dir);
  if (missing) {
    logger.warn(
      { model_dir: dir },
      `fact checker: lexical only, the sentence-embedding model is missing: ${missing}; sentences worded differently from their sources come out unsupported until it is there (or set FACT_CHECK_MODEL=off to silence this)`,
    );
    return undefined;
  }
  try {
    // Sentences and passages are embedded on a thread of their own: ONNX Runtime's inference is
    // synchronous, and on this thread a run's verification would stall the requests it serves.
    const model = await createLocalEmbeddings({ modelDir: dir, threads: 1, documentWorker: { nice: 0 } });
    logger.info({ model: model.model, model_dir: dir }, 'fact checker: recognises claims in other words with the sentence-embedding model');
    return model;
  } catch (err) {
    logger.warn({ err, model_dir: dir }, 'fact checker: lexical only, the sentence-embedding model could not be loaded');
    return undefined;
  }
}

/**
 * The fact checker's judge: FACT_CHECK_LLM_URL's model when set (with its own
 * key), else the drafting model of LLM_URL; none when FACT_CHECK_LLM_JUDGE is
 * false. LLM_API_KEY is never sent to FACT_CHECK_LLM_URL.
 */
export function factCheckJudge(
  config: Pick<
    GenerationConfig,
    | 'FACT_CHECK_LLM_JUDGE'
    | 'FACT_CHECK_LLM_URL'
    | 'FACT_CHECK_LLM_MODEL'
    | 'FACT_CHECK_LLM_API_KEY'
    | 'LLM_MODEL'
    | 'FACT_CHECK_LLM_TIMEOUT_MS'
  >,
  drafting: Llm | undefined,
): Llm | undefined {
  if (!config.FACT_CHECK_LLM_JUDGE) return undefined;
  if (config.FACT_CHECK_LLM_URL)
    return createOpenAiChat({
      baseUrl: config.FACT_CHECK_LLM_URL,
      model: config.FACT_CHECK_LLM_MODEL ?? config.LLM_MODEL,
      timeoutMs: config.FACT_CHECK_LLM_TIMEOUT_MS,
      ...(config.FACT_CHECK_LLM_API_KEY && { apiKey: config.FACT_CHECK_LLM_API_KEY }),
    });
  return drafting;
}
