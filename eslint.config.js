// ESLint 9 flat config: JavaScript and typescript-eslint recommended rules (not
// type-checked, so linting stays fast; `npm run typecheck` covers types).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const nodeGlobals = Object.fromEntries(
  [
    'AbortController',
    'AbortSignal',
    'Buffer',
    'URL',
    'URLSearchParams',
    'TextDecoder',
    'TextEncoder',
    'clearImmediate',
    'clearInterval',
    'clearTimeout',
    'console',
    'fetch',
    'global',
    'globalThis',
    'process',
    'queueMicrotask',
    'setImmediate',
    'setInterval',
    'setTimeout',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  { ignores: ['**/node_modules/', '**/dist/', '**/.data/', '**/coverage/', '**/.turbo/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: nodeGlobals,
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // The web console runs in a browser.
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'document',
          'window',
          'location',
          'sessionStorage',
          'localStorage',
          'Storage',
          'FormData',
          'File',
          'XMLHttpRequest',
          'HTMLInputElement',
          'HTMLFormElement',
          'HTMLSelectElement',
          'HTMLDivElement',
          'Event',
          'Response',
          'addEventListener',
          'removeEventListener',
          'alert',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // Tests read JSON responses loosely; production code keeps the rule.
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
