// ESLint (flat config): typescript-eslint's recommended rules, line length, and the import
// directions of the architecture (README "Working on it"), so a wrong-way import fails `make lint`
// instead of waiting for a reviewer.
import { fileURLToPath } from 'node:url'
import { includeIgnoreFile } from '@eslint/compat'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'
import importDirection from './scripts/lint/import-direction.mjs'

export default tseslint.config(
  // What git ignores (build output, data, scratch/) is not linted either.
  includeIgnoreFile(fileURLToPath(new URL('.gitignore', import.meta.url))),
  { ignores: ['openapi/generated/**', 'sdk/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,js,mjs}'],
    languageOptions: { globals: globals.node },
    rules: {
      'max-len': ['error', { code: 140, ignoreUrls: true, ignoreRegExpLiterals: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['**/*.{ts,js,mjs}'],
    plugins: { architecture: { rules: { 'import-direction': importDirection } } },
    rules: { 'architecture/import-direction': 'error' },
  },
)
