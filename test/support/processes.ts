// The service and its CLIs as real child processes, as an operator runs them: output, exit code,
// and for the service the moment it listens.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import path from 'node:path';
import { freePort } from '../../scripts/free-port.ts';

export const projectDir = path.resolve(import.meta.dirname, '../..');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Keeps a developer's .env file (src/config/env-file.ts) out of the processes a test starts. */
export const NO_ENV_FILE = { ENV_FILE: 'off' } as const;

/** Only what a bare shell has: the child sees no setting the test did not give it (nor the .env file's, unless ENV_FILE is given). */
export function bareEnvironment(settings: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...NO_ENV_FILE, ...settings };
}

function launch(script: string, args: readonly string[], settings: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: projectDir,
    env: bareEnvironment(settings),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs a script to its end. */
export function runScript(script: string, args: readonly string[], settings: Record<string, string>): Promise<Finished> {
  const child = launch(script, args, settings);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RunningService {
  /** Every log line so far, parsed. */
  lines: Record<string, unknown>[];
  /** Lines of standard output that were not JSON, and everything written to standard error. */
  notJson: string[];
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (no chance to clean up, as a crash or an OOM kill), then resolves once it is gone. */
  kill(): Promise<void>;
}

/** Starts the service and resolves once it listens, or rejects with its output if it ends first. */
export function startService(args: readonly string[], settings: Record<string, string>): Promise<RunningService> {
  return watchService(launch('src/index.ts', args, settings));
}

/** The same, from a production bundle (scripts/build.mjs bundleOptions) whose entry is `bundleEntry`. */
export function startBundledService(
  bundleEntry: string,
  args: readonly string[],
  settings: Record<string, string>,
): Promise<RunningService> {
  return watchService(
    spawn(process.execPath, [bundleEntry, ...args], { cwd: projectDir, env: bareEnvironment(settings), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
}

function watchService(child: ChildProcess): Promise<RunningService> {
  const lines: Record<string, unknown>[] = [];
  const notJson: string[] = [];
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => notJson.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const complete = output.split('\n');
      output = complete.pop() ?? '';
      for (const line of complete) {
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          notJson.push(line);
          continue;
        }
        lines.push(parsed);
        if (String(parsed.msg).startsWith('listening on')) {
          resolve({
            lines,
            notJson,
            stop: () => {
              child.kill('SIGTERM');
              return exited;
            },
            kill: async () => {
              child.kill('SIGKILL');
              await exited;
            },
          });
        }
      }
    });
    void exited.then((code) => reject(new Error(`the service ended (${code}) before listening: ${JSON.stringify(lines)}`)));
  });
}

export { freePort };

/** Holds a port open until released, so that another process finds it in use. */
export async function occupyPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const { port } = server.address() as { port: number };
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A redis-server of the test's own on a free loopback port (no persistence), once it accepts connections. */
export async function startRedisServer(): Promise<{ port: number; server: ChildProcess }> {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let ready = false; !ready; ) {
    ready = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => setTimeout(() => resolve(false), 50));
    });
  }
  return { port, server };
}
