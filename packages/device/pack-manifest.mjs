// `npm pack` / `npm publish`: the packed package.json names the built files. In the repository the package
// exports its TypeScript sources (the API and the tests run them as they are); `prepack` builds dist/ and
// points `exports` there, `postpack` puts the repository's manifest back. pack.mjs (the tarball the
// platform serves) writes the same manifest into a copy instead.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The manifest as packed: the built library, the sources beside it for types, no tests. */
export function packedManifest(pkg) {
  return {
    ...pkg,
    exports: { '.': { types: './src/index.ts', default: './dist/index.js' } },
    files: ['dist', 'src', '!src/**/*.test.ts', '!src/test-fixture.ts'],
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const manifest = new URL('./package.json', import.meta.url);
  const saved = new URL('./package.json.repo', import.meta.url);
  if (process.argv[2] === 'restore') {
    if (fs.existsSync(saved)) fs.renameSync(saved, manifest);
  } else {
    const text = fs.readFileSync(manifest, 'utf8');
    fs.writeFileSync(saved, text);
    fs.writeFileSync(manifest, `${JSON.stringify(packedManifest(JSON.parse(text)), null, 2)}\n`);
  }
}
