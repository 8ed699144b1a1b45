// Lint rules that encode the architecture of DESIGN.md §3 and say why when they fire.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const IO_LIBS = [
  'fastify',
  'fastify-*',
  '@fastify/*',
  'commander',
  'ink',
  'react',
  'better-sqlite3',
  'undici',
  'lowdb',
  'lowdb/*',
  'pino',
  'node:fs',
  'fs',
  'node:fs/promises',
  'fs/promises',
  'cli-table3',
  'picocolors',
  '@napi-rs/keyring',
];

const pureCore = (folder) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: IO_LIBS,
            message: `src/${folder} is the pure core (DESIGN.md §3): no frameworks, storage, HTTP or filesystem here. Take what you need as an injected dependency.`,
          },
          {
            group: ['**/store/*', '**/services/*', '**/server/*', '**/cli/*', '**/client/*', '**/tui/*'],
            message: `src/${folder} sits below every other layer (domain ← engine ← services ← server/cli); it must not import upward.`,
          },
        ],
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'ThrowStatement > Literal', message: 'Throw an Error (ApiError, CliError), never a string (STYLE.md 3).' },
      ],
    },
  },
  pureCore('domain'),
  pureCore('engine'),
  {
    files: ['src/media/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*', '**/services/*', '**/server/*', '**/cli/*', '**/client/*', '**/tui/*'],
              message:
                'src/media is the call media core (DESIGN.md §3 "Media"): it may use src/domain and src/speech, never the layers above; it runs off the API\'s event loop and takes plain data in and out.',
            },
            {
              group: ['better-sqlite3', 'lowdb', 'lowdb/*', 'fastify', 'fastify-*', '@fastify/*', 'commander'],
              message: 'src/media holds no storage and no HTTP framework (DESIGN.md §3 "Media"); the daemon wires it in.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/store/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/services/*', '**/server/*', '**/cli/*', '**/client/*', 'fastify', 'commander'],
              message: 'src/store holds SQL and nothing else (DESIGN.md §3): it must not import the layers that use it.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/services/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/server/*', '**/cli/*', '**/client/*', '**/tui/*', 'fastify', 'fastify-*', 'commander', 'ink', 'react'],
              message: 'src/services are use cases (DESIGN.md §3): HTTP and CLI call them, never the reverse.',
            },
            {
              group: ['better-sqlite3'],
              message: 'src/services reach SQLite only through src/store repositories (DESIGN.md §3: nothing above store imports SQL).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/server/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/cli/*', '**/tui/*', 'commander', 'ink', 'react'],
              message: 'src/server is the HTTP face (DESIGN.md §3); it must not depend on the CLI.',
            },
            {
              group: ['better-sqlite3'],
              message: 'src/server reaches SQLite only through src/store repositories (DESIGN.md §3).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'src/client/**/*.ts', 'src/tui/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*', 'better-sqlite3'],
              message:
                "The CLI reaches state only through the daemon's HTTP API (src/client); `vagent admin` opens a state dir through src/server/runtime (DESIGN.md §3).",
            },
            {
              group: ['fastify', 'fastify-*', '@fastify/*'],
              message: 'The CLI must not load the HTTP server; `vagent serve` imports src/server/daemon lazily.',
            },
            {
              group: ['**/server/app*', '**/server/routes/*', '**/server/plugins/*'],
              message: 'The CLI talks to the daemon over HTTP (src/client), not to its routes (DESIGN.md §3).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.{ts,mjs,js}'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
