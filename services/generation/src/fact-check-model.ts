import { resolve } from 'node:path';
import type { Logger } from 'pino';
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
    const model = await createLocalEmbeddings({ modelDir: dir, threads: 1 });
    logger.info({ model: model.model, model_dir: dir }, 'fact checker: recognises claims in other words with the sentence-embedding model');
    return model;
  } catch (err) {
    logger.warn({ err, model_dir: dir }, 'fact checker: lexical only, the sentence-embedding model could not be loaded');
    return undefined;
  }
}
