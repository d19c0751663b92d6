// ESLint (flat config): typescript-eslint's recommended rules and line length. The import
// directions of the architecture are dependency-cruiser's (.dependency-cruiser.mjs, `make imports`).
import { fileURLToPath } from 'node:url'
import { includeIgnoreFile } from '@eslint/compat'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'

export default tseslint.config(
  // What git ignores (build output, data, scratch/) is not linted either.
  includeIgnoreFile(fileURLToPath(new URL('.gitignore', import.meta.url))),
  { ignores: ['openapi/generated/**', 'sdk/generated/**', 'model/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    languageOptions: { globals: globals.node },
    rules: {
      'max-len': ['error', { code: 140, ignoreUrls: true, ignoreRegExpLiterals: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  // The console runs in browsers (console/, docs/console.md).
  { files: ['console/**/*.{ts,tsx}'], languageOptions: { globals: globals.browser } },
)
