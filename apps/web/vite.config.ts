import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/**
 * Brotli and gzip copies of every text asset, written once at build time: the API serves them
 * (@fastify/static `preCompressed`) to browsers that accept them, so a cold /login downloads ~200 KB, not
 * the ~600 KB of raw JavaScript (that, not the code, held the mobile Lighthouse score at 74), without
 * compressing anything per request.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'latchkey-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
      for (const file of walk(outDir).filter((f) => /\.(js|css|html|svg|json)$/.test(f) && !f.includes(`${path.sep}.vite${path.sep}`))) {
        const body = fs.readFileSync(file);
        if (body.length < 1024) continue;
        fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
        fs.writeFileSync(`${file}.gz`, zlib.gzipSync(body, { level: 9 }));
      }
    },
  };
}

/**
 * With `modulePreload: false` (decision 0005) the page names only the entry; the browser finds the entry's
 * own imports (React, MUI, i18n) only once the entry has arrived and been parsed, and the sign-in form's
 * (its chunk, zod) only once the router has run: two round trips more on a cold /login, the page most
 * visits start on, which drew nothing until then. This lists both in the HTML so they download alongside
 * the entry. Other lazy routes still load when a navigation needs them, without Vite's preload helper.
 */
const FIRST_ROUTE = 'src/features/auth/login-page.tsx';

function preloadFirstPage(): Plugin {
  return {
    name: 'latchkey-preload-first-page',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        const chunks = Object.values(ctx.bundle ?? {}).filter((c) => c.type === 'chunk');
        const byFile = new Map(chunks.map((c) => [c.fileName, c]));
        const entry = chunks.find((c) => c.isEntry);
        const login = chunks.find((c) => c.facadeModuleId?.endsWith(FIRST_ROUTE));
        if (!entry) return [];
        const files = new Set<string>();
        const add = (file: string) => {
          if (files.has(file) || file === entry.fileName) return;
          files.add(file);
          for (const dep of byFile.get(file)?.imports ?? []) add(dep);
        };
        for (const file of entry.imports) add(file);
        if (login) add(login.fileName);
        return [...files].map((file) => ({
          tag: 'link',
          attrs: { rel: 'modulepreload', crossorigin: '', href: `/${file}` },
          injectTo: 'head' as const,
        }));
      },
    },
  };
}

/**
 * MUI's `createTheme` chooses at run time between the plain theme and the CSS-variables one, so the
 * CSS-variables builder (createThemeWithVars and @mui/system's cssVars helpers, 4.4 KB gzip) is in every
 * route although neither our theme nor MUI's default theme takes that branch: it needs `cssVariables`,
 * which theme.ts does not set (such a theme would also need Material's CSS-variables provider, which
 * providers.tsx does not use). This gives `createTheme` a stand-in that fails loudly if the branch is taken.
 * Build only: the dev server pre-bundles MUI whole. If MUI renames the module, this stops matching and
 * /login grows back by the same 4.4 KB, which bench/bundle-size.mjs --check reports.
 */
const THEME_WITH_VARS = '\0latchkey:mui-create-theme-with-vars';

function muiThemeWithoutCssVars(): Plugin {
  return {
    name: 'latchkey-mui-theme-without-css-vars',
    apply: 'build',
    enforce: 'pre',
    resolveId(source, importer) {
      const fromCreateTheme = importer?.replaceAll('\\', '/').endsWith('/@mui/material/styles/createTheme.mjs');
      return source === './createThemeWithVars.mjs' && fromCreateTheme ? THEME_WITH_VARS : null;
    },
    load(id) {
      if (id !== THEME_WITH_VARS) return null;
      return `export default function createThemeWithVars() {
  throw new Error('createTheme({ cssVariables }) is not in this build: remove muiThemeWithoutCssVars from apps/web/vite.config.ts');
}`;
    },
  };
}

// The API serves the built portal on the same origin in production; in development the dev server
// forwards /api and /cdn (embedded logo storage) to the API's default port.
const apiTarget = process.env.LATCHKEY_API_URL ?? 'http://localhost:3000';

export default defineConfig({
  plugins: [react(), muiThemeWithoutCssVars(), preloadFirstPage(), precompress()],
  server: {
    port: 5173,
    proxy: {
      '/api': { target: apiTarget, changeOrigin: false },
      '/cdn': { target: apiTarget, changeOrigin: false },
    },
  },
  preview: {
    proxy: {
      '/api': { target: apiTarget, changeOrigin: false },
      '/cdn': { target: apiTarget, changeOrigin: false },
    },
  },
  // The manifest lets bench/bundle-size.mjs weigh what each route loads first.
  // No module preloading (decision 0005): Vite's helper appended one <link rel=modulepreload> per
  // dependency of every lazy route a navigation loads (43 on an overview), in the entry's evaluation,
  // and held each route's import until all of them had loaded. The browser fetches a chunk's imports
  // itself as it parses the chunk.
  build: {
    outDir: 'dist',
    sourcemap: false,
    manifest: true,
    modulePreload: false,
    rolldownOptions: {
      treeshake: {
        // Emotion imports hoist-non-react-statics (and its own copy of react-is) for `withTheme`, which the
        // portal does not use, with a bare `import 'hoist-non-react-statics'`. That package does not declare
        // itself free of side effects, so the import kept 0.9 KB gzip in every route; it has none.
        moduleSideEffects: [{ test: /[\\/]node_modules[\\/]hoist-non-react-statics[\\/]/, sideEffects: false }],
      },
    },
  },
});
