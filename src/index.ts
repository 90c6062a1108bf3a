// A start that cannot succeed ends with one line naming the setting at fault.
import { loadConfig, processEnvironment, type Config } from './config/index.ts';
import { loadEnvFile, type EnvFileLoad } from './config/env-file.ts';
import { createConfiguredLogger, routeProcessOutput } from './logger.ts';
import { startService } from './service.ts';
import { failStartup, listeningLine, warnIfDevelopmentMode } from './startup.ts';

let config: Config;
let envFile: EnvFileLoad | null;
try {
  envFile = loadEnvFile();
  config = loadConfig(processEnvironment());
} catch (error) {
  failStartup(error);
}
const logger = await createConfiguredLogger(config);
if (config.logFormat === 'json') routeProcessOutput(logger);
if (envFile) {
  logger.info({ file: envFile.file, settings: envFile.settings }, 'settings read from the env file');
  // A misspelt name would otherwise be ignored without a word; libraries' own variables (AWS_…) are fine.
  if (envFile.undeclared.length > 0) {
    logger.warn(
      { file: envFile.file, names: envFile.undeclared },
      'the env file sets variables that are not settings of this service: check their spelling (docs/configuration.md, "Configuration")',
    );
  }
}
warnIfDevelopmentMode(config, logger);

async function main(): Promise<void> {
  // Loaded only when wanted and only here: the service itself never imports the demo data.
  const demoData = config.seedDemoData ? (await import('../prisma/seed.ts')).seedDemoData : undefined;
  const service = await startService(config, logger, { demoData });
  const listening = listeningLine(config, service.address.port);
  logger.info(listening.fields, listening.msg);
  const stop = (signal: NodeJS.Signals): void => {
    service.stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: a second signal (npm forwards one too) must not kill the process mid-drain.
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => failStartup(error, logger, config));
