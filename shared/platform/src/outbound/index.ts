export * from './address-policy.js';
export * from './guarded-fetch.js';
