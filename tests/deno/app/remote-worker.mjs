// The Web Worker of the remote suite in Deno (entries.test.mjs): the packed package by name.
import * as pl from 'promptloom';
import { serveTests } from '../../js/remote-serve.mjs';

serveTests(pl);
