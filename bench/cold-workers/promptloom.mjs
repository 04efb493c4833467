// Cold-start bench worker: imports `promptloom` and lowers one user message per request.
import { lower } from 'promptloom';
const msg = { role: 'user', parts: [{ type: 'text', text: 'Summarise the open file in two sentences.' }] };
export default { fetch: () => new Response(lower(msg, { provider: 'anthropic' }).body) };
