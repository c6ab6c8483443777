// Lint for Tock (run by `npm run lint`, and in CI): typescript-eslint's type-aware rules over all
// our code (services, shared, tests, benches, scripts), generated code excepted. Errors fail CI;
// warnings are shown and left to judgement.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const UNSAFE_ANY = [
  '@typescript-eslint/no-explicit-any',
  '@typescript-eslint/no-unsafe-argument',
  '@typescript-eslint/no-unsafe-assignment',
  '@typescript-eslint/no-unsafe-call',
  '@typescript-eslint/no-unsafe-member-access',
  '@typescript-eslint/no-unsafe-return',
];

export default tseslint.config(
  // .tmp holds CI's Node 24 copy of the tree; data is a local run's data directory.
  { ignores: ['shared/gen/**', 'dist/**', 'node_modules/**', 'bin/**', '.tmp/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `import('./x.ts').T` in an annotation stays allowed: it names a type without an import edge.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // The bit-set code of the schedule module writes `test ? (lo |= a) : (hi |= b)` on purpose.
      '@typescript-eslint/no-unused-expressions': ['error', { allowTernary: true }],
      // Rethrowing a caught `unknown` as it came is right: wrapping it would lose its class.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true, allowThrowingAny: true }],
      // Ports are plain objects of closures (factories, not classes): `this` is never involved, and
      // handing `store.readStream` or chai's `expect` around is how they are meant to be used.
      '@typescript-eslint/unbound-method': 'off',
      // String(unknown) on what a driver or a client sent is deliberate: any text beats none.
      '@typescript-eslint/no-base-to-string': 'warn',
      // An async method without await is how a synchronous adapter meets an async port: not a bug.
      '@typescript-eslint/require-await': 'off',
      // Where `any` meets parsed JSON, config files and driver rows at the edges, each use is
      // reviewed rather than banned: shown as warnings in the product code.
      ...Object.fromEntries(UNSAFE_ANY.map((rule) => [rule, 'warn'])),
    },
  },
  {
    // Tests read the API's JSON answers as `any` on purpose: the assertions are the type check.
    files: ['test/**'],
    rules: {
      ...Object.fromEntries(UNSAFE_ANY.map((rule) => [rule, 'off'])),
      // chai's property assertions (`expect(x).to.be.empty`) are expressions by design.
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  // Plain JavaScript (this file, the dependency-cruiser config, the worker boot shim): outside the
  // TypeScript project, so linted without type information.
  { files: ['**/*.js', '**/*.cjs', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked], languageOptions: { globals: globals.node } },
  // CommonJS because mocha and dependency-cruiser load their configs with require().
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
