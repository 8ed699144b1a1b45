// Lint rules; the import rules of each src/ folder are in eslint.layers.js (docs/architecture.md "Layers").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './eslint.layers.js';

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
        AbortController: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ThrowStatement > Literal',
          message: 'Throw an Error (ApiError, CliError), never a string: a string carries no stack trace.',
        },
      ],
    },
  },

  {
    // A file over 400 lines is a warning: split it along its seams, or say in its header why it stays bigger.
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['warn', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.{ts,mjs,js}'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...layers,
);
