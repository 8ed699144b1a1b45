// The layers of src/ (docs/architecture.md "Layers") as lint rules: each folder lists what it
// may import, relative folders and packages, and `no-restricted-imports` refuses everything
// else with a message that says why. A folder or package not listed here is refused: adding
// one is a decision of docs/architecture.md first, then of this file.

/** Node.js built-ins, `node:` prefix required. */
const NODE = 'node:[\\w/]+';

/**
 * Each layer: its folder under src/ ('.' for the files directly in src/), the folders it may
 * import (besides its own), the packages it may import (regex sources, matched whole, subpaths
 * allowed), and why, in one clause.
 */
export const LAYERS = [
  {
    folder: '.',
    may: [],
    packages: [NODE],
    why: 'the files directly in src/ (the version) are read by every entry point and import nothing of vagent',
  },
  {
    folder: 'domain',
    may: [],
    packages: ['zod'],
    why: 'the domain is the words every layer shares (types, rules, zod schemas): no I/O, no framework, nothing of vagent above it',
  },
  {
    folder: 'contract',
    may: ['domain'],
    packages: ['zod', 'fastify'],
    why: 'the /v1 schemas are written once, from domain types, and read by http, app and client alike',
  },
  {
    folder: 'engine',
    may: ['domain'],
    packages: [],
    why: 'the conversation engine is a pure function of an agent, its state and a turn: no I/O, no clock, no storage',
  },
  {
    folder: 'config',
    may: ['domain'],
    packages: ['zod', 'yaml', NODE],
    why: 'settings are parsed and checked before anything runs, so they depend on nothing that runs',
  },
  {
    folder: 'store',
    may: ['domain', 'config'],
    packages: ['better-sqlite3', NODE],
    why: 'the store holds SQL and nothing else; the layers that use it are above it',
  },
  {
    folder: 'media',
    may: ['domain'],
    packages: ['zod', 'wavefile', '@echogarden/fvad-wasm', 'node:(events|crypto)'],
    why: 'the call pipeline is pure: audio, endpointing, playout and the carrier dialects, driven through its ports (transport, recogniser); adapters implement them',
  },
  {
    folder: 'app',
    may: ['domain', 'contract', 'engine', 'media', 'store', 'config'],
    packages: ['zod', 'yaml', 'safe-stable-stringify', NODE],
    why: 'use cases reach the outside only through ports they are given (speech, telephony, recognisers); HTTP, CLI and adapters sit above them',
  },
  {
    folder: 'adapters/speech',
    may: ['domain', 'media', 'app', 'config'],
    packages: ['@echogarden/espeak-ng-emscripten', NODE],
    why: "speech synthesis implements the app's speech port with its cache and engines, and knows no other adapter",
  },
  {
    folder: 'adapters/recognizers',
    may: ['domain', 'media', 'config'],
    packages: ['ws', NODE],
    why: "each recogniser implements media's recogniser port beside its fake, and knows no other adapter",
  },
  {
    folder: 'adapters/livekit',
    may: ['domain', 'media', 'app'],
    packages: ['livekit-server-sdk', '@livekit/rtc-node', '@livekit/protocol', 'ws', NODE],
    why: "LiveKit (rooms, SIP) implements media's transport and the app's telephony port, and knows no other adapter",
  },
  {
    folder: 'adapters/webhook',
    may: ['domain', 'app'],
    packages: ['ipaddr.js', NODE],
    why: 'the routing webhook client implements an app port, and knows no other adapter',
  },
  {
    folder: 'adapters/llm',
    may: ['domain', 'app', 'config'],
    packages: ['openai'],
    why: "the chat-completions client implements the app's language model port with the official openai client, and knows no other adapter",
  },
  {
    folder: 'http',
    may: ['domain', 'contract', 'app', 'media'],
    packages: ['fastify', '@fastify/[\\w-]+', 'fastify-type-provider-zod', 'find-my-way', 'zod', 'pino', 'ws', NODE],
    why: 'HTTP is fastify only: it turns requests into use-case calls and outcomes into replies, and is handed what it serves by the daemon',
  },
  {
    folder: 'daemon',
    may: ['.', 'domain', 'contract', 'engine', 'media', 'store', 'config', 'app', 'http', 'adapters/[\\w-]+'],
    packages: ['pino', 'ws', NODE],
    why: 'the daemon is the one composition root: it builds adapters, use cases and the HTTP app, and nothing imports it but the CLI',
  },
  {
    folder: 'client',
    may: ['domain', 'contract'],
    packages: ['zod', 'ws', 'eventsource-parser', NODE],
    why: 'the client speaks the /v1 contract over HTTP and knows nothing of the daemon',
  },
  {
    folder: 'cli',
    may: ['.', 'domain', 'contract', 'engine', 'media', 'config', 'client', 'daemon', 'adapters/speech'],
    packages: [
      'commander',
      'cli-table3',
      'picocolors',
      'yaml',
      'lowdb',
      'lowdb/node',
      '@napi-rs/keyring',
      'wavefile',
      'ws',
      'ink',
      'react',
      NODE,
    ],
    why: "the CLI reaches the daemon's state through the client, opens the daemon only to run it (`vagent serve`, `vagent admin`), and never imports its HTTP app or store",
  },
  {
    folder: 'devtools',
    may: ['.', 'domain', 'engine', 'media', 'adapters/[\\w-]+'],
    packages: ['ws', 'yaml', '@livekit/protocol', '@livekit/rtc-node', NODE],
    why: 'development fakes stand in for providers; they run beside vagent, not inside the daemon or the CLI',
  },
];

/**
 * Imports the code makes today that its layer does not allow, each kept to the files that make
 * it and each to go when its import moves behind a port (docs/architecture.md "Layers").
 */
export const KNOWN_CROSSINGS = [
  {
    files: ['src/app/index.ts', 'src/app/recognizer-check.ts'],
    may: ['adapters/recognizers'],
    why: 'the recogniser settings and key checks are read from the recogniser adapters',
  },
  {
    files: ['src/http/list-cache.ts'],
    may: ['store'],
    why: 'the list cache sees when the store changed (types only)',
  },
  {
    files: ['src/cli/commands/admin*.ts'],
    may: ['app', 'adapters/webhook'],
    why: '`vagent admin` runs archive, retention, tenant and webhook checks offline',
  },
];

/** `src/<folder>/` followed by `k` subfolders: the files a config object of depth `k` covers. */
const glob = (folder, k) => (folder === '.' ? 'src/*.{ts,tsx}' : `src/${folder}/${'*/'.repeat(k)}*.{ts,tsx}`);

/**
 * The regex source of every specifier `may` and `packages` allow for a file `k` folders below
 * its layer's folder, which sits `r` folders below src/.
 */
function allowed(folder, may, packages, k) {
  const r = folder === '.' ? 0 : folder.split('/').length;
  const up = r + k;
  const alts = folder === '.' ? ['\\./[\\w.-]+\\.js$'] : ['\\./'];
  if (k > 0) alts.push(`(?:\\.\\./){1,${k}}(?!\\.\\./)`);
  for (const f of may) {
    if (f === '.') alts.push(`(?:\\.\\./){${up}}[\\w.-]+\\.js$`);
    else alts.push(`(?:\\.\\./){${up}}(?:${f})/`);
  }
  for (const p of packages) alts.push(`(?:${p})(?:/|$)`);
  return alts.join('|');
}

/** A package pattern as a reader writes it: `node:*`, `@fastify/*`, `node:{events,crypto}`. */
const shown = (p) =>
  p
    .replace(NODE, 'node:*')
    .replace('[\\w-]+', '*')
    .replace(/\(([\w|]+)\)/, (_, alts) => `{${alts.split('|').join(',')}}`);

/** One `no-restricted-imports` setting refusing what `allowed` does not allow. */
function rule(folder, may, packages, why, k) {
  const list = [...may.map((f) => (f === '.' ? 'src/*.ts' : `src/${f.replace('[\\w-]+', '*')}`)), ...packages.map(shown)];
  const listed = list.length > 0 ? list.join(', ') : 'nothing outside itself';
  const name = folder === '.' ? 'src/*.ts' : `src/${folder}`;
  return [
    'error',
    {
      patterns: [
        {
          regex: `^(?!(?:${allowed(folder, may, packages, k)}))`,
          message: `${name} may import only ${listed} (docs/architecture.md "Layers"): ${why}.`,
        },
      ],
    },
  ];
}

/** Depths of subfolders covered below each layer's folder. */
const DEPTHS = [0, 1, 2, 3, 4];

const layerConfigs = LAYERS.flatMap(({ folder, may, packages, why }) =>
  (folder === '.' ? [0] : DEPTHS).map((k) => ({
    files: [glob(folder, k)],
    rules: { 'no-restricted-imports': rule(folder, may, packages, why, k) },
  })),
);

const crossingConfigs = KNOWN_CROSSINGS.flatMap(({ files, may, why }) =>
  files.map((file) => {
    const layer = [...LAYERS]
      .sort((a, b) => b.folder.length - a.folder.length)
      .find((l) => l.folder === '.' || file.startsWith(`src/${l.folder}/`));
    const k = file.split('/').length - 2 - (layer.folder === '.' ? 0 : layer.folder.split('/').length);
    return {
      files: [file],
      rules: {
        'no-restricted-imports': rule(
          layer.folder,
          [...layer.may, ...may],
          layer.packages,
          `${layer.why}; this file also may, for now: ${why}`,
          k,
        ),
      },
    };
  }),
);

/** Any other folder under src/ is not a layer yet: it may import nothing outside itself. */
const unknownFolder = {
  files: ['src/**/*.{ts,tsx}'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: '^(?:\\.\\./)+',
            message:
              'this folder of src/ is not a layer of docs/architecture.md "Layers": say there what it holds and may import, then list it in eslint.layers.js.',
          },
        ],
      },
    ],
  },
};

/** The flat-config objects, to spread last into eslint.config.js. */
export default [unknownFolder, ...layerConfigs, ...crossingConfigs];
