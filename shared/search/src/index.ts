export * from './port.js';
export * from './analysis.js';
export * from './fusion.js';
export * from './dedupe.js';
