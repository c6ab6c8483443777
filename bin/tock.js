#!/usr/bin/env node
// `npx tock ...`: the operator CLI, run from its TypeScript source through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../services/cli/main.ts');
