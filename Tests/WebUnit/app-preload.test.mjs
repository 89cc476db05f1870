// The app's start (app/boot.js) asks for every module the app's first run imports at once
// (<link rel=modulepreload>), so none waits for the one importing it: the list must hold the
// whole static import graph of app/main.js. It may hold more (modules most screens import),
// all of them files of the app.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../Sources/HearthWeb/Resources', import.meta.url));
const read = (path) => readFileSync(`${root}${path}`, 'utf8');

/** `path` and every module it imports statically (`import … from '…'`), by site path. */
function staticGraph(path, seen = new Set()) {
  if (seen.has(path)) return seen;
  seen.add(path);
  const source = read(path);
  for (const match of source.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms)) {
    const target = new URL(match[1], `https://site${path}`).pathname;
    staticGraph(target, seen);
  }
  return seen;
}

test('boot.js preloads the whole static import graph of main.js', () => {
  const boot = read('/app/boot.js');
  const list = boot.slice(boot.indexOf('var MODULES = ['), boot.indexOf('];', boot.indexOf('var MODULES = [')));
  const preloaded = new Set([...list.matchAll(/'([^']+\.js)'/g)].map((match) => match[1]));
  const graph = staticGraph('/app/main.js');
  assert.deepEqual([...graph].filter((path) => !preloaded.has(path)).sort(), [], 'imported at start but not preloaded');
  assert.deepEqual([...preloaded].filter((path) => !existsSync(`${root}${path}`)), [], 'preloaded but not a file of the app');
});
