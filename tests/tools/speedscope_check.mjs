#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// Checks a .speedscope.json file with speedscope's own pieces, from the
// npm package pinned in package.json:
//   1. against the JSON schema the package ships (file-format-schema.json),
//      with ajv;
//   2. unless --schema-only: loads it into the package's bundled app in
//      headless Chromium (playwright-core, Debian's /usr/bin/chromium or
//      $CHROMIUM), as the package's own CLI does (a script through
//      #localProfilePath), opens its profile list and prints the profile it
//      opened on and what it lists:
//        active I                          (0-based, as activeProfileIndex)
//        listed N
//        profile NAME<TAB>TOTAL-WEIGHT     (one per profile, as shown)
// Optional --screenshot PNG saves the page with the list open.
//
// Exit: 0 valid (and loaded), 1 invalid or not loaded, 2 usage,
// 77 when node_modules or the browser is missing.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'package.json'));
const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !a.endsWith('.png'));
const schemaOnly = args.includes('--schema-only');
const shotAt = args.indexOf('--screenshot');
const shot = shotAt >= 0 ? args[shotAt + 1] : null;
if (!file) {
  console.error('usage: speedscope_check.mjs FILE [--schema-only] [--screenshot PNG]');
  process.exit(2);
}

let release, Ajv;
try {
  release = join(dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
  Ajv = require('ajv');
} catch (e) {
  console.error(`speedscope_check: SKIP: ${e.message} (run npm ci --prefix ${here})`);
  process.exit(77);
}
const text = readFileSync(file, 'utf8');
const schema = JSON.parse(readFileSync(join(release, 'file-format-schema.json'), 'utf8'));
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
if (!validate(JSON.parse(text))) {
  console.error(`${file}: not valid against speedscope's schema:`);
  for (const e of validate.errors.slice(0, 20)) console.error(`  ${e.instancePath} ${e.message}`);
  process.exit(1);
}
console.log(`${file}: valid against speedscope's file-format-schema.json`);
if (schemaOnly) process.exit(0);

const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.error(`speedscope_check: SKIP: ${e.message}`);
  process.exit(77);
}
if (!existsSync(chromiumPath)) {
  console.error(`speedscope_check: SKIP: no browser at ${chromiumPath}`);
  process.exit(77);
}

const tmp = mkdtempSync(join(tmpdir(), 'ssc.'));
const script = join(tmp, 'load.js');
writeFileSync(script, `speedscope.loadFileFromBase64(${JSON.stringify(basename(file))}, ` +
  `${JSON.stringify(Buffer.from(text).toString('base64'))})`);
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--no-sandbox', '--allow-file-access-from-files'],
});
let status = 0;
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`file://${join(release, 'index.html')}#localProfilePath=${script}`);
  // The toolbar names the profile shown and says "(i/N)" once loaded.
  const title = page.getByText(/^\(\d+\/\d+\)$/);
  await title.waitFor({ timeout: 60000 });
  console.log(`active ${+(await title.innerText()).match(/\d+/)[0] - 1}`);
  await title.click();
  await page.getByText('Total Weight').waitFor({ timeout: 30000 });
  const rows = (await page.innerText('body')).split('\n')
    .map((l) => l.match(/^(\d+)\t(.*)\t(.*)$/)).filter(Boolean);
  console.log(`listed ${rows.length}`);
  for (const r of rows) console.log(`profile ${r[2]}\t${r[3]}`);
  if (shot) await page.screenshot({ path: shot });
  if (errors.length) {
    console.error(`page errors: ${errors.join('; ')}`);
    status = 1;
  }
} catch (e) {
  console.error(`${file}: speedscope did not list the profiles: ${e.message}`);
  status = 1;
} finally {
  await browser.close();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(status);
