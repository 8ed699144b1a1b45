/**
 * vagent's version, read once from package.json.
 */
import fs from 'node:fs';

let cached: string | undefined;

/** The `version` field of vagent's package.json. */
export function vagentVersion(): string {
  if (cached === undefined) {
    const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    cached = pkg.version;
  }
  return cached;
}
