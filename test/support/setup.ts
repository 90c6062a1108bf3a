// Runs in every test file before its tests (vitest setupFiles).
import { afterAll } from 'vitest';
import { runFileCleanups } from './cleanup.ts';

afterAll(runFileCleanups);
