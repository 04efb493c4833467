// Cold-start bench worker: the AI SDK (ai + @ai-sdk/anthropic) builds the same body per request.
import 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
const model = createAnthropic({ apiKey: 'k' })('claude-x');
const prompt = [{ role: 'user', content: [{ type: 'text', text: 'Summarise the open file in two sentences.' }] }];
export default {
  async fetch() {
    const { args } = await model.getArgs({ prompt, providerOptions: {}, headers: {}, userSuppliedBetas: new Set() });
    return new Response(JSON.stringify(args));
  },
};
