// The worker_threads worker of tests/js/remote.test.mjs.
import { parentPort } from 'node:worker_threads';
import * as pl from 'promptloom';
import { serveTests } from './remote-serve.mjs';

serveTests(pl, parentPort);
