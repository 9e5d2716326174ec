import { defineConfig } from 'vitest/config';
import preact from '@preact/preset-vite';

// The console is a client of the public API only: in development `vite` proxies
// /api to a running service (npm start); in production the gateway serves dist/.
export default defineConfig({
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false },
  server: { proxy: { '/api': process.env.KB_API_URL ?? 'http://127.0.0.1:8080' } },
  test: { name: 'console', environment: 'happy-dom', include: ['src/**/*.test.tsx', 'src/**/*.test.ts'] },
});
