// Cold-start bench worker: nothing but a reply (the floor).
export default { fetch: () => new Response('{}') };
