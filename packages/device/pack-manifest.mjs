// `npm pack` / `npm publish`: the packed package.json names the built files. In the repository the package
// exports its TypeScript sources (the API and the tests run them as they are); `prepack` builds dist/ and
// points `exports` there, `postpack` puts the repository's manifest back.
import fs from 'node:fs';

const manifest = new URL('./package.json', import.meta.url);
const saved = new URL('./package.json.repo', import.meta.url);
if (process.argv[2] === 'restore') {
  if (fs.existsSync(saved)) fs.renameSync(saved, manifest);
} else {
  const text = fs.readFileSync(manifest, 'utf8');
  fs.writeFileSync(saved, text);
  const pkg = JSON.parse(text);
  pkg.exports = { '.': { types: './src/index.ts', default: './dist/index.js' } };
  pkg.files = ['dist', 'src', '!src/**/*.test.ts', '!src/test-fixture.ts'];
  fs.writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
}
