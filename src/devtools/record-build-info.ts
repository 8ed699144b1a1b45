/**
 * `npm run build`'s postbuild step: records the commit being built in `dist/build-info.json`,
 * so that `vagent --version` names it where no git checkout is at hand (a copied install).
 * Never fails the build: without git the record says `unknown`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_INFO_FILE, buildCommit } from '../version.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const file = path.join(root, BUILD_INFO_FILE);
fs.writeFileSync(file, `${JSON.stringify({ commit: buildCommit(root), built_at: new Date().toISOString() })}\n`);
